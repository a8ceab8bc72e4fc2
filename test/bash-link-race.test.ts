/**
 * A symlink made by a command of the same line that runs at the same time
 * as a read through it: `(sleep 1; cat l/.env) & ln -sfn . l` (or a
 * pipeline) reads through the new link though the `cat` stands first, so
 * judging `l` as it is before the line runs let `.env` out. Paths through a
 * link any command of the line makes, or a directory `mv` puts in place, are
 * unknown locations. Real workspaces and links, and the real service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

bashTests();

describe('links made by the same line', () => {
  it('make paths through them unknown, wherever the command making them stands', async () => {
    for (const mode of ['default', BYPASS.defaultMode, 'acceptEdits'] as const) {
      const env = ruleEnv({ deny: ['Read(/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.mkdirSync(path.join(env.ws, 'src'));
      fs.symlinkSync('src', path.join(env.ws, 'l'));
      for (const c of ['(sleep 1; cat l/.env) & ln -sfn . l; wait', 'cat l/.env | ln -sfn . l', 'for i in 1 2; do cat l/.env; ln -sfn . l; done', 'mv l m && cat m/.env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
    }
  });

  it('leave moving and copying files as it was in acceptEdits', async () => {
    const env = ruleEnv({ deny: ['Read(/.env)'], mode: 'acceptEdits' });
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), '');
    for (const c of ['mv src/a.ts src/b.ts && cat src/b.ts', 'cp src/a.ts c.ts && cat c.ts', 'mkdir d && cp src/a.ts d/ && cat d/a.ts', 'cat src/a.ts; mv src src2']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
    // cp -r copies a symlink as a symlink, and a relative one leads elsewhere from its new place
    // (src/y -> ../../.env is .env once copied to d/src/y): what is read below the copy is not known.
    expect(await env.check('mkdir d && cp -r src d/ && cat d/src/a.ts')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('(sleep; cat l/.env) & ln -sfn . l does not print .env in bypassPermissions', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Read(/.env)'] } });
    try {
      fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
      fs.mkdirSync(path.join(t.workspace, 'src'));
      fs.symlinkSync('src', path.join(t.workspace, 'l'));
      const r = await run(t, 'Bash', { command: '(sleep 0.3; cat l/.env) & ln -sfn . l; wait' });
      expect(r.text).not.toContain('hunter2');
      expect(r.exec.status).toBe('denied');
    } finally {
      await t.close();
    }
  });
});
