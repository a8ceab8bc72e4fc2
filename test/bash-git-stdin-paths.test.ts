/**
 * git reads the files a list on its stdin names: with Read(./.env) denied,
 * `echo .env | git hash-object -w --stdin-paths` stored .env as a blob and
 * `echo .env | git update-index --add --stdin` staged it (for a commit and
 * a push under the same Bash(git:*)), both auto-allowed, while `git add
 * --pathspec-from-file` asked. And `git fast-import` prints stored blobs on
 * a stream's `cat-blob`. These now ask (safety) while Read deny rules exist.
 * Real rule indexes and repositories, and the real service running git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('git reading a list of paths from stdin', () => {
  it('asks while Read deny rules exist', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)'], mode });
      for (const c of ['echo .env | git hash-object -w --stdin-paths', 'echo .env | git update-index --add --stdin', 'git update-index --add --stdin < list']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
      expect(await env.check('git fast-import < stream'), mode).toMatchObject({ behavior: 'ask', type: 'safety' });
      expect(await env.check('echo x | git hash-object --stdin'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('echo .env | git update-index --add --stdin does not stage .env under Bash(git:*)', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    execFileSync('git', ['init', '-q', t.workspace]);
    const r = await run(t, 'Bash', { command: 'echo .env | git update-index --add --stdin' });
    expect(r.exec.status).toBe('denied');
    expect(execFileSync('git', ['ls-files', '--stage'], { cwd: t.workspace, encoding: 'utf8' })).not.toContain('.env');
  });
});
