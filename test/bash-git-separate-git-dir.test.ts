/**
 * A repository whose `.git` is a file naming a git directory outside any `.git`: `git init
 * --separate-git-dir=gd sub` (allowed under Bash(git:*)) makes sub/.git say `gitdir: …/gd`, and
 * gd/config is an ordinary file, which a line may write (acceptEdits allows `printf … >> gd/config`
 * in the workspace). With Read(./.env) denied, Bash(git:*) allowed, in acceptEdits, `git -C sub
 * status` was allowed and ran gd/config's core.fsmonitor, `cat ../.env`, printing the secret (and
 * in bypassPermissions so did `cd sub && git status`). git run where such a `.git` file is found is
 * now a safety ask, as git in a directory laid out as a repository already was; a linked worktree's
 * and a submodule's `.git` files name directories inside a `.git`, and are judged as before.
 * The real service runs git.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('git where .git names a git directory outside any .git', () => {
  it('does not obey its config for a command Bash(git:*) allows', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    for (const command of ['git init -q --separate-git-dir=gd sub', `printf '[core]\\n\\tfsmonitor = "cat ../.env >&2; echo"\\n' >> gd/config`]) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec.status, `${command}: ${r.text}`).toBe('succeeded');
    }
    for (const command of ['git -C sub status', 'git -C sub log']) {
      const r = await run(t, 'Bash', { command });
      expect(r.text, command).not.toContain('hunter2');
      expect(r.exec.status, command).toBe('denied');
    }
    // What it stands against: git in sub runs the program.
    expect(spawnSync('git', ['status'], { cwd: path.join(t.workspace, 'sub'), encoding: 'utf8' }).stderr).toContain('SECRET=hunter2');
  });

  it('a linked worktree of the repository is judged as before', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } });
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd, encoding: 'utf8' });
    git(t.workspace, 'init', '-q');
    git(t.workspace, 'commit', '-q', '--allow-empty', '-m', 'x');
    git(t.workspace, 'worktree', 'add', '-q', 'wt');
    expect(fs.statSync(path.join(t.workspace, 'wt', '.git')).isFile()).toBe(true);
    const r = await run(t, 'Bash', { command: 'git -C wt status' });
    expect(r.exec.status, r.text).toBe('succeeded');
  });
});
