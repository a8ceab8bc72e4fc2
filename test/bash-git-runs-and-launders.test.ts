/**
 * Two ways past Read deny rules under Bash(git:*), found while looking for false
 * positives. With Read(./.env) (and Read(**\/.env)) denied:
 * - `git rebase --exec 'cat .env' HEAD~1` (or -x, `git bisect run`, `git
 *   submodule foreach`, filter-branch's filters, `--upload-pack` for a local
 *   URL) was allowed and printed .env: git runs the command it is given, as it
 *   does a `-c core.fsmonitor=…`, which already asks. It is now a safety ask.
 * - `git stash -a`, `git rev-parse 'stash@{0}^3:.env'`, `git update-index --add
 *   --cacheinfo 100644,SHA,notes.txt`, `git checkout-index --prefix=x/
 *   notes.txt`, then `cat x/notes.txt` printed .env: each step was allowed, as
 *   no word names a path any rule matches once git stores the contents under a
 *   name of its choosing. Storing untracked files (stash -u/-a) and putting a
 *   stored blob under another name (update-index --cacheinfo/--index-info,
 *   read-tree --prefix, mktree, replace, checkout-index --temp/--prefix) are
 *   now safety asks while Read deny rules exist. Everyday git (stash, stash pop,
 *   rebase -i, push -u, add -u) is as before. Real rule indexes, and git run for
 *   real to show what the checks stand against.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashTests, BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';

bashTests();

const DENY = ['Read(./.env)', 'Read(**/.env)'];

function repo(): { dir: string; git: (...args: string[]) => string } {
  const dir = tmpDir('toolexec-git-launder-');
  const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: dir, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'one\n');
  fs.writeFileSync(path.join(dir, '.gitignore'), '.env\n');
  git('add', '-A');
  git('commit', '-qm', 'one');
  fs.writeFileSync(path.join(dir, 'a.txt'), 'two\n');
  git('commit', '-qam', 'two');
  fs.writeFileSync(path.join(dir, '.env'), 'SECRET=hunter2\n');
  return { dir, git };
}

describe('git running a command it is given', () => {
  const runs = [
    "git rebase --exec 'cat .env' HEAD~1",
    "git rebase -x 'cat .env' HEAD~1",
    "git rebase -ix 'cat .env' HEAD~1",
    "git rebase --exe='cat .env' HEAD~1",
    "git bisect run sh -c 'cat .env'",
    "git submodule foreach 'cat .env'",
    "git filter-branch --tree-filter 'cat .env >&2' HEAD",
    "git fetch --upload-pack='cat .env >&2; git-upload-pack' .",
    "git clone -u 'cat .env >&2; git-upload-pack' . copy",
    "git ls-remote --upload-pack='cat .env >&2' .",
    "git push --receive-pack='cat .env >&2' . HEAD:x",
    "git difftool -x 'cat .env' HEAD~1",
    "git send-email --to-cmd='cat .env' x.patch",
    "git -C . rebase --exec 'cat .env' HEAD~1",
  ];

  it('is a safety ask under Bash(git:*), in bypassPermissions too', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY, mode });
      for (const c of runs) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/runs the (command|filters|web)/) });
    }
  });

  it('everyday git is as before', async () => {
    const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY });
    for (const c of ['git rebase -i HEAD~3', 'git rebase main', 'git rebase --continue', 'git push -u origin HEAD', 'git fetch -u origin', 'git bisect start', 'git submodule update --init', 'git send-email --to a@b.c x.patch', 'git stash', 'git stash pop', 'git stash list', 'git add -u', 'git checkout-index -a -f', 'git update-index --refresh']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
  });

  it('what the check stands against: git rebase --exec prints the file', () => {
    const { dir, git } = repo();
    const out = execFileSync('bash', ['-c', "git -c user.name=t -c user.email=t@e rebase --exec 'cat .env' HEAD~1 2>&1"], { cwd: dir, encoding: 'utf8' });
    expect(out).toContain('SECRET=hunter2');
    expect(git('log', '--oneline').split('\n').filter(Boolean)).toHaveLength(2);
  });
});

describe('contents git stores put under another name', () => {
  it('storing untracked files, and placing a stored blob under a new name, ask while Read deny rules exist', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY, mode });
      for (const c of [
        'git stash -a',
        'git stash -u',
        'git stash --all',
        'git stash push --include-untracked -m wip',
        'git stash save -u wip',
        'git update-index --add --cacheinfo 100644,50b37a2c10115ff71f62b8c25b2314545a3df599,notes.txt',
        'git update-index --add --cacheinfo 100644 50b37a2c10115ff71f62b8c25b2314545a3df599 notes.txt',
        'git update-index --index-info < list',
        'git read-tree --prefix=x/ HEAD',
        'git mktree < spec',
        'git replace 0123456 89abcde',
        'git checkout-index --prefix=x/ notes.txt',
        'git checkout-index --temp a.txt',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
    }
    // Without Read deny rules there is nothing to launder: as before.
    const open = ruleEnv({ allow: ['Bash(git:*)'] });
    for (const c of ['git stash -u', 'git read-tree --prefix=x/ HEAD']) expect(await open.check(c), c).toMatchObject({ behavior: 'allow' });
  });

  it('what the check stands against: each step is plain git, and the file comes out under another name', () => {
    const { dir, git } = repo();
    git('stash', '-a', '-q');
    expect(fs.existsSync(path.join(dir, '.env'))).toBe(false);
    const sha = git('rev-parse', 'stash@{0}^3:.env').trim();
    git('update-index', '--add', '--cacheinfo', `100644,${sha},notes.txt`);
    git('checkout-index', '--prefix=x/', 'notes.txt');
    expect(fs.readFileSync(path.join(dir, 'x', 'notes.txt'), 'utf8')).toBe('SECRET=hunter2\n');
  });
});

/**
 * `git stash -u` in a work tree that holds no Read-denied file: it was a safety ask whenever Read
 * deny rules existed (`git stash -u`, `git stash push -u` in bypassPermissions), though it can store
 * only what the work tree holds. Now the work tree (git's top, found from where git starts) is
 * listed with every name, ignored ones too: a denied file anywhere in it, a hard link or symbolic link
 * to one, or git pointed elsewhere, or another command of the line that is not read-only, asks as before.
 */
describe('git stash -u where the work tree holds no denied file', () => {
  function project(): RuleEnv & { secret: string } {
    const secret = path.join(tmpDir('toolexec-stash-secret-'), 'secret.txt');
    fs.writeFileSync(secret, 'SECRET=hunter2\n');
    const env = ruleEnv({ deny: [...DENY, `Read(/${secret})`], mode: BYPASS.defaultMode });
    const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: env.ws, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), 'one\n');
    git('add', '-A');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(env.ws, 'src', 'new.ts'), 'untracked\n');
    return { ...env, secret };
  }
  const stashes = ['git stash -u', 'git stash push -u', 'git stash push --include-untracked -m wip', 'git stash save -u wip', 'git stash -a', 'env -C src git stash -u', 'git stash push -u -- src'];

  it('is no reason to ask', async () => {
    const env = project();
    // passthrough: no rule decides, and bypassPermissions then allows it.
    for (const c of stashes) expect(['allow', 'passthrough'], c).toContain((await env.check(c)).behavior);
  });

  it('asks while the work tree holds a denied file (ignored or not), a link to one, or git is pointed elsewhere', async () => {
    const env = project();
    // Another command that is not read-only, -p (which prints hunks), git pointed at another directory.
    for (const c of ['git stash -u && git stash pop', 'touch x; git stash -u', 'git stash push -p -u', 'git -C src stash -u', 'git --work-tree=src stash -u']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    const askAll = async (why: string): Promise<void> => {
      for (const c of stashes) expect(await env.check(c), `${why}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
    };
    fs.writeFileSync(path.join(env.ws, 'src', '.env'), 'KEY=1\n');
    await askAll('src/.env');
    // Ignored: -u leaves it, -a stores it; the listing counts it all the same.
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
    await askAll('src/.env ignored');
    fs.rmSync(path.join(env.ws, 'src', '.env'));
    // A hard link to a denied file outside the work tree: git stores its contents under the link's name.
    fs.linkSync(env.secret, path.join(env.ws, 'src', 'notes.txt'));
    await askAll('hard link');
    fs.rmSync(path.join(env.ws, 'src', 'notes.txt'));
    fs.symlinkSync(env.secret, path.join(env.ws, 'src', 'notes.txt'));
    await askAll('symbolic link');
    fs.rmSync(path.join(env.ws, 'src', 'notes.txt'));
    for (const c of stashes) expect(['allow', 'passthrough'], `clean again: ${c}`).toContain((await env.check(c)).behavior);
  });

  it('git add -f (which stages ignored files, as stash -a stores them) asks while the work tree holds a denied file', async () => {
    // `git add -f .` was allowed with an ignored .env in the tree, and put it in the object store.
    const env = project();
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
    const forced = ['git add -f .', 'git add -fA', 'git add --force src', 'git add --for -- .', 'git add -f -- :/', 'git add -f src/a.ts src'];
    for (const c of forced) expect(['allow', 'passthrough'], `clean: ${c}`).toContain((await env.check(c)).behavior);
    fs.writeFileSync(path.join(env.ws, 'src', '.env'), 'KEY=1\n');
    for (const c of forced) expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git add -f stores ignored files/) });
    // Plain names of files are judged as reads already; without -f, ignored files are left out.
    for (const c of ['git add -f src/a.ts', 'git add -f -- src/new.ts src/a.ts', 'git add -A', 'git add .']) expect(['allow', 'passthrough'], c).toContain((await env.check(c)).behavior);
    expect(await env.check('git add -f src/.env')).toMatchObject({ behavior: 'deny' });
    // What it stands against: the real git stages the ignored .env.
    execFileSync('git', ['add', '-f', '.'], { cwd: env.ws });
    expect(execFileSync('git', ['ls-files', '--stage', 'src/.env'], { cwd: env.ws, encoding: 'utf8' })).toMatch(/^100644 [0-9a-f]{40} 0\tsrc\/\.env\n$/);
  });

  it('what the check stands against: git stash -u stores an untracked .env that git show then prints', () => {
    const dir = tmpDir('toolexec-stash-u-');
    const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: dir, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(dir, 'a.txt'), 'one\n');
    git('add', '-A');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(dir, '.env'), 'SECRET=hunter2\n');
    git('stash', '-u', '-q');
    expect(fs.existsSync(path.join(dir, '.env'))).toBe(false);
    expect(git('show', 'stash@{0}^3:.env')).toBe('SECRET=hunter2\n');
  });
});

