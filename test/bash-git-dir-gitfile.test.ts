/**
 * `--git-dir` naming a `.git` file: git follows its `gitdir:` line (read_gitfile), as it does for a
 * `.git` file it finds from -C. With Read(./sub/.git/config) denied under Bash(git:*), `git -C sub
 * worktree add --detach ../x` (allowed: it prints nothing) made x/.git, a file naming
 * sub/.git/worktrees/x, whose commondir is sub/.git; then `git --git-dir=x/.git config -l` (or
 * `remote -v`) was allowed and printed sub's token, since the check took x/.git for the git
 * directory and read x/.git/config, while `git -C x remote -v` was denied. The configuration files
 * are now looked for where the file leads. Real git repositories, rule indexes and the service.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

const git = (cwd: string, ...args: string[]): string => {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: cwd } });
  return r.stdout + r.stderr;
};

function project(ws: string): void {
  fs.mkdirSync(path.join(ws, 'sub'));
  const sub = path.join(ws, 'sub');
  git(sub, 'init', '-q', '.');
  git(sub, 'remote', 'add', 'origin', 'https://tok:hunter9@example.com/r.git');
  git(sub, '-c', 'user.name=a', '-c', 'user.email=a@b', 'commit', '-q', '--allow-empty', '-m', 'i');
}

const DENY = ['Read(./sub/.git/config)'];
const leaks = ['git --git-dir=x/.git config -l', 'git --git-dir x/.git remote -v', 'git --git-dir x/.git config --get remote.origin.url', 'git --work-tree=x --git-dir=x/.git remote -v'];

describe('--git-dir naming a .git file', () => {
  it('is judged where the file leads', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY, mode });
      project(env.ws);
      expect((await env.check('git -C sub worktree add -q --detach ../x')).behavior).toBe('allow');
      git(path.join(env.ws, 'sub'), 'worktree', 'add', '-q', '--detach', '../x');
      expect(fs.statSync(path.join(env.ws, 'x', '.git')).isFile()).toBe(true);
      for (const c of [...leaks, 'git -C x remote -v']) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', detail: DENY[0] });
      // Everyday use of the worktree stays allowed.
      expect((await env.check('git --git-dir=x/.git status')).behavior).toBe('allow');
    }
  });

  it('what it rests on: git prints the token through the file', () => {
    const env = ruleEnv();
    project(env.ws);
    git(path.join(env.ws, 'sub'), 'worktree', 'add', '-q', '--detach', '../x');
    for (const c of leaks) expect(git(env.ws, ...c.split(' ').slice(1)), c).toContain('hunter9');
  });

  it('through the service: the worktree is made, the read refused', async () => {
    const t = await openApp({ permissions: { deny: DENY, allow: ['Bash(git:*)'], headless: 'deny' } });
    project(t.workspace);
    const made = await run(t, 'Bash', { command: 'git -C sub worktree add -q --detach ../x' });
    expect(made.exec).toMatchObject({ status: 'succeeded' });
    const r = await run(t, 'Bash', { command: leaks[0]! });
    expect(r.exec).toMatchObject({ status: 'denied' });
    expect(r.text).not.toContain('hunter9');
  });
});
