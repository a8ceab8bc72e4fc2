/**
 * A tree read whole with a link inside it through /proc/self (`src/p` ->
 * /proc/self/cwd): the tree walk resolved the link in toolexec's own process
 * (its working directory, no rule there), while grep -R resolves it in its
 * own, the workspace, so with Read(/.env) denied `grep -R SECRET src` under
 * Bash(grep:*) (or in bypassPermissions) printed src/p/.env. Such a link is
 * now one to a place not known, a safety ask. Real rule indexes and links,
 * and the real service running grep.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('links through /proc inside a tree read whole', () => {
  it('make the read a safety ask, under Bash(grep:*) and in bypassPermissions', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(grep:*)', 'Bash(rg:*)'], deny: ['Read(/.env)'], mode });
      fs.mkdirSync(path.join(env.ws, 'src'));
      fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), '');
      fs.symlinkSync('/proc/self/cwd', path.join(env.ws, 'src', 'p'));
      for (const c of ['grep -R SECRET src', 'rg -L SECRET src']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^recursive read through a link: .*src\/p$/) });
      }
      // A tree whose links stay inside it, as before.
      fs.unlinkSync(path.join(env.ws, 'src', 'p'));
      fs.symlinkSync('a.ts', path.join(env.ws, 'src', 'b.ts'));
      expect(await env.check('grep -R SECRET src'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('grep -R SECRET src does not print .env through src/p -> /proc/self/cwd', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(grep:*)'], deny: ['Read(/.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    fs.mkdirSync(path.join(t.workspace, 'src'));
    fs.symlinkSync('/proc/self/cwd', path.join(t.workspace, 'src', 'p'));
    const r = await run(t, 'Bash', { command: 'grep -R SECRET src' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });
});
