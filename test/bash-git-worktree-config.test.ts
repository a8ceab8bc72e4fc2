/**
 * In a linked worktree (`git worktree add`), `.git` is a file naming
 * `.git/worktrees/NAME` in the main repository, and git reads the main
 * repository's `config` through that directory's `commondir`. With a Read
 * deny rule on the main repository's `.git/config` (a token in the remote
 * URL), `git config -l` or `git remote -v` run in the worktree under
 * Bash(git:*) were judged against `.git/worktrees/NAME/config` only, and
 * printed the token. The common directory's config is now among the files
 * judged. A real repository and worktree, and the real service running git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashServiceTests } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('git configuration read from a linked worktree', () => {
  it('is judged against the main repository config', async () => {
    const main = fs.realpathSync(tmpDir('toolexec-wt-main-'));
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: main });
    git('init', '-q');
    git('remote', 'add', 'origin', 'https://u:tok-hunter2@example.invalid/x.git');
    git('commit', '-q', '--allow-empty', '-m', 'init');
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: [`Read(/${path.join(main, '.git', 'config')})`] } });
    // The workspace (empty so far) becomes the linked worktree.
    git('worktree', 'add', '-q', t.workspace);
    expect(fs.statSync(path.join(t.workspace, '.git')).isFile()).toBe(true);
    for (const command of ['git config -l', 'git remote -v']) {
      const r = await run(t, 'Bash', { command });
      expect(r.text.includes('hunter2'), command).toBe(false);
      expect(r.exec.status, command).toBe('denied');
    }
  });
});
