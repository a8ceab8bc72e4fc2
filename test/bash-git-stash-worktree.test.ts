/**
 * `git stash -u` is allowed where git's work tree holds no Read-denied file, the work tree being
 * listed from the nearest directory holding a `.git`. But git obeys `core.worktree` in the
 * repository's configuration: `git init --separate-git-dir=gd sub` lays sub/.git out as a file
 * naming gd, and gd/config (an ordinary file) may say `worktree = ..`. Then, in sub, git's work
 * tree is the workspace (its .env included) while the listing saw only sub: with Read(./.env)
 * denied in bypassPermissions, `cd sub && git stash -u` was allowed, stored .env, and `git
 * worktree add /tmp/x stash@{0}^3` then `cat /tmp/x/.env` printed it. The work tree is now taken
 * as the top only where `.git` there is a directory laid out as a repository (HEAD, objects, refs,
 * no commondir) whose config names no work tree and includes no other file; elsewhere stash -u
 * asks as it did before. The real service runs git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { BYPASS, bashServiceTests, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

const GIT_ID = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };

describe('git stash -u where git is told of another work tree', () => {
  it('does not store the workspace .env through a repository whose config names the work tree', async () => {
    Object.assign(process.env, GIT_ID);
    const out = path.join(tmpDir('toolexec-stash-out-'), 'wt');
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    for (const command of [
      'git init -q --separate-git-dir=gd sub',
      "printf '[core]\\n\\tworktree = ..\\n' >> gd/config",
      // stash -u would clean the git directory away with the other untracked files.
      "printf 'gd/\\n' >> gd/info/exclude",
      'cd sub',
    ]) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec.status, `${command}: ${r.text}`).toBe('succeeded');
    }
    // (git in sub now asks as soon as it runs there: sub/.git names a git directory outside any .git.)
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: path.join(t.workspace, 'sub') });
    const stash = await run(t, 'Bash', { command: 'git stash -u' });
    // Had it run: the worktree of the stash's untracked files, outside the workspace, holds .env.
    await run(t, 'Bash', { command: `git worktree add -q ${out} 'stash@{0}^3'` });
    const r = await run(t, 'Bash', { command: `cat ${out}/.env` });
    expect(r.text).not.toContain('hunter2');
    expect(stash.exec.status, stash.text).toBe('denied');
    expect(fs.readFileSync(path.join(t.workspace, '.env'), 'utf8')).toBe('SECRET=hunter2\n');
  });

  it('asks where .git is a file, names another work tree or includes a file; a plain repository is as before', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd, encoding: 'utf8' });
    fs.writeFileSync(path.join(env.ws, '.env'), 'KEY=1\n');
    const sub = path.join(env.ws, 'sub');
    git(env.ws, 'init', '-q', 'sub');
    git(sub, 'commit', '-q', '--allow-empty', '-m', 'x');
    // A plain repository in sub, its work tree sub: nothing denied in it.
    const stays = async (c: string): Promise<void> => expect(await env.check(c), c).not.toMatchObject({ type: 'safety' });
    await stays('cd sub && git stash -u');
    const config = path.join(sub, '.git', 'config');
    const plain = fs.readFileSync(config, 'utf8');
    for (const extra of ['[core]\n\tworktree = ..\n', '[core]\n\tWorkTree = ..\n', '[include]\n\tpath = ../../other\n', '[includeIf "onbranch:main"]\n\tpath = x\n']) {
      fs.writeFileSync(config, plain + extra);
      expect(await env.check('cd sub && git stash -u'), extra).toMatchObject({ behavior: 'ask', type: 'safety' });
      expect(await env.check('cd sub && git add -f :/'), extra).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    fs.writeFileSync(config, plain);
    fs.writeFileSync(path.join(sub, '.git', 'config.worktree'), '[core]\n\tworktree = ..\n');
    expect(await env.check('cd sub && git stash -u')).toMatchObject({ behavior: 'ask', type: 'safety' });
    fs.rmSync(path.join(sub, '.git', 'config.worktree'));
    // sub/.git a file naming a git directory elsewhere (--separate-git-dir, a submodule, a linked worktree).
    git(env.ws, 'init', '-q', '--separate-git-dir=gd', 'sub2');
    git(path.join(env.ws, 'sub2'), 'commit', '-q', '--allow-empty', '-m', 'x');
    expect(await env.check('cd sub2 && git stash -u')).toMatchObject({ behavior: 'ask', type: 'safety' });
    await stays('cd sub && git stash -u');
  });

  // Held already (the planted-repository check asks for git run in a directory laid out as a
  // repository that is not a .git): kept so that the listing from the nearest .git above never allows it.
  it('asks in a directory laid out as a repository whose config names a work tree elsewhere', async () => {
    const outside = tmpDir('toolexec-stash-outside-');
    fs.writeFileSync(path.join(outside, 'id'), 'KEY=hunter2\n');
    const env = ruleEnv({ deny: [`Read(/${outside}/**)`], mode: BYPASS.defaultMode });
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd, encoding: 'utf8' });
    git(env.ws, 'init', '-q');
    git(env.ws, 'commit', '-q', '--allow-empty', '-m', 'x');
    await stays('git stash -u');
    // `git init --bare p`, then a line appends to p/config (an ordinary file): git in p takes p for its repository.
    git(env.ws, 'init', '-q', '--bare', 'p');
    fs.appendFileSync(path.join(env.ws, 'p', 'config'), `[core]\n\tbare = false\n\tworktree = ${outside}\n`);
    const p = path.join(env.ws, 'p');
    git(p, 'commit', '-q', '--allow-empty', '-m', 'x');
    expect(await env.check('cd p && git stash -u')).toMatchObject({ behavior: 'ask', type: 'safety' });
    await stays('git stash -u');
    // What git does there: the file outside is stored (and removed from where it was).
    git(p, 'stash', '-u', '-q');
    expect(git(p, 'show', 'stash@{0}^3:id')).toBe('KEY=hunter2\n');
    async function stays(c: string): Promise<void> {
      expect(await env.check(c), c).not.toMatchObject({ type: 'safety' });
    }
  });
});
