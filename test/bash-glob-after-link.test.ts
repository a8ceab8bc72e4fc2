/**
 * A glob expanded after a symbolic link the same line makes: with Read(./.env)
 * denied, `ln -s ../.env src/x.ts && cat src/*.ts` was allowed in
 * bypassPermissions (and under Bash(ln:*) and Bash(cat:*)) and printed .env:
 * the glob was expanded and judged before the line ran, when src/x.ts did not
 * exist, and a path through the new link was only looked for among the names
 * the expansion gave. A glob in a line that makes a symbolic link is now an
 * unknown location (a safety ask while Read deny rules exist). Found while
 * looking for false positives in globbed reads. Real rule indexes, bash run for real.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';

bashTests();

describe('a glob after a symbolic link made in the same line', () => {
  it('is an unknown location while Read deny rules exist', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(ln:*)', 'Bash(cat:*)', 'Bash(wc:*)'], deny: ['Read(./.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.mkdirSync(path.join(env.ws, 'src'));
      fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), 'x\n');
      for (const c of ['ln -s ../.env src/x.ts && cat src/*.ts', 'ln -s ../.env src/x.ts; cat src/*', 'cat src/*.ts & ln -s ../.env src/x.ts', 'ln -sf ../.env src/x.ts && wc -c src/?.ts']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
      // Without a link made in the line, the glob is judged name by name as before.
      expect(await env.check('cat src/*.ts'), mode).toMatchObject({ behavior: 'allow' });
      expect(await env.check('ln -s a.ts src/b.ts && cat src/a.ts'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('what it stands against: bash expands the glob after ln has run', () => {
    const env = ruleEnv();
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), 'x\n');
    const out = spawnSync('bash', ['-c', 'ln -s ../.env src/x.ts && cat src/*.ts'], { cwd: env.ws, encoding: 'utf8' }).stdout;
    expect(out).toContain('hunter2');
  });
});
