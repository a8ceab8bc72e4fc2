/**
 * More git commands that print what a Read deny rule covers: `git log
 * -L1,9:.env` (the range and file attached to -L) prints those lines of
 * .env as each commit had them, and was auto-allowed as read-only in every
 * mode; `git merge-file -p .env x y` prints the merge of the work tree's
 * .env; `git pack-objects --stdout` writes the blobs it is given, compressed.
 * Real git shows each; the real service refuses them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp, tmpDir } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

bashTests();

function repo(dir: string): (...a: string[]) => string {
  const git = (...a: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
  fs.writeFileSync(path.join(dir, '.env'), 'SECRET=hunter2\n');
  fs.writeFileSync(path.join(dir, 'x'), 'x\n');
  fs.writeFileSync(path.join(dir, 'y'), 'y\n');
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-qm', 'one');
  return git;
}

describe('git log -L, git merge-file and git pack-objects', () => {
  it('ask (safety) or are denied while Read deny rules exist, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Read(./.env)', 'Edit(./src/**)'], allow: ['Bash(git:*)'], mode });
      repo(env.ws);
      for (const c of ['git log -L1,2:.env', 'git log --oneline -L1,+5:.env', 'git log -L:main:x', 'git whatchanged -L1,1:.env', 'git pack-objects --stdout < list']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
      for (const c of ['git merge-file -p .env x y', 'git merge-file -L a -L b -L c x y .env', 'git merge-file src/a.ts x y']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule' });
      }
      for (const c of ['git log --oneline', 'git log -n 5', 'git log --format=%H -- .env', 'git merge-file -p x y y']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('what it rests on: git log -L and git merge-file -p print .env', () => {
    const d = tmpDir('toolexec-git-line-log-');
    const git = repo(d);
    expect(git('log', '-L1,1:.env')).toContain('hunter2');
    // It exits with the number of conflicts, and prints the merge with them.
    expect(spawnSync('git', ['merge-file', '-p', '.env', 'x', 'y'], { cwd: d, encoding: 'utf8' }).stdout).toContain('hunter2');
  });

  it('end to end in bypassPermissions: git log -L1,1:.env does not print it', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    try {
      repo(t.workspace);
      for (const command of ['git log -L1,1:.env', 'git merge-file -p .env x y']) {
        const r = await run(t, 'Bash', { command });
        expect(r.text, command).not.toContain('hunter2');
        expect(r.exec.status, command).toBe('denied');
      }
    } finally {
      await t.close();
    }
  });
});
