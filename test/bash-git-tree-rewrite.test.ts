/**
 * git commands that rewrite the work tree wholesale (`git checkout other`, `git switch`, `git pull`,
 * `git merge`, `git reset --hard`, `git stash pop`, `git apply`, `git clean -f`, …) against an Edit
 * deny rule that reaches into the tree. No word names the files they change, so the path checks saw
 * nothing: with Edit(./src/**) denied, `git checkout other` replaced src/a.ts in every mode, and
 * bypassPermissions simply ran it. Without such a rule they are as before. Real repositories (two
 * branches differing under src/), real git, and the real service.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';
import { checkBashPermission } from '../src/permissions/bash-rules.js';
import { gitRewrittenPaths } from '../src/permissions/git-rewrites.js';

bashTests();

/** A repository on main, with a branch `other` that changes src/a.ts and adds src/new.ts, and a stash of a change to src/a.ts. */
function repository(ws: string): (...a: string[]) => Buffer {
  const git = (...a: string[]): Buffer => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: ws, stdio: 'pipe' });
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  fs.mkdirSync(path.join(ws, 'build'));
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'a\n');
  fs.writeFileSync(path.join(ws, 'a.txt'), 't\n');
  fs.writeFileSync(path.join(ws, 'p.patch'), '--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1 +1 @@\n-a\n+patched\n');
  fs.writeFileSync(path.join(ws, 'doc.patch'), 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-t\n+u\n');
  fs.writeFileSync(path.join(ws, 'rename.patch'), 'diff --git a/a.txt b/src/z.ts\nsimilarity index 100%\nrename from a.txt\nrename to src/z.ts\n');
  fs.writeFileSync(path.join(ws, 'p0.patch'), '--- src/a.ts\n+++ src/a.ts\n@@ -1 +1 @@\n-a\n+patched\n');
  git('init', '-q', '-b', 'main');
  git('add', 'src', 'a.txt');
  git('commit', '-qm', 'one');
  git('checkout', '-q', '-b', 'other');
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'planted\n');
  fs.writeFileSync(path.join(ws, 'src', 'new.ts'), 'new\n');
  git('add', 'src');
  git('commit', '-qm', 'two');
  git('checkout', '-q', 'main');
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'stashed\n');
  git('stash', '-q');
  git('config', 'alias.co', 'checkout');
  // A branch named as a directory on disk: git checkout build switches to it.
  git('branch', 'build', 'other');
  return git;
}

const REWRITERS = [
  'git checkout other',
  'git checkout -f',
  'git checkout build',
  'git checkout -b feat other',
  'git checkout --detach other',
  'git -C src checkout other',
  'git switch other',
  'git switch -c feat other',
  'git switch --orphan empty',
  'git pull',
  'git pull origin main',
  'git merge other',
  'git merge --abort',
  'git rebase other',
  'git reset --hard other',
  'git reset --merge other',
  'git reset --keep other',
  'git reset --ha other',
  'git stash pop',
  'git stash apply',
  'git stash',
  'git cherry-pick other',
  'git revert HEAD',
  'git am x.mbox',
  'git apply p.patch',
  'git apply --index p.patch',
  'git apply --stat --apply p.patch',
  // Patches naming a file under the rule, however it is spelt; ones no check reads.
  'git apply -v --index p.patch',
  'git apply rename.patch',
  'git apply -p0 p0.patch',
  'git apply doc.patch p.patch',
  'git apply < doc.patch',
  'git apply --directory=src doc.patch',
  'cp p.patch doc.patch && git apply doc.patch',
  'git clean -fd',
  'git clean -f src',
  'git read-tree -m -u other',
  'git checkout-index -a -f',
  'git checkout-index -f src/a.ts',
  'git worktree add src/wt other',
  'git submodule update --init',
  'git bisect start other main',
  'git sparse-checkout set x',
  'git reset $how other',
  // An alias (here from the repository's configuration) or another program may be any of them.
  'git co other',
  'git subtree pull -P src x main',
  'git merge-recursive HEAD -- HEAD other',
  // Wrapped, nested, chained, or pointed at the tree another way.
  'env git checkout other',
  'command git checkout other',
  '/usr/bin/git checkout other',
  'bash -c "git checkout other"',
  'true && git checkout other',
  'git status; git checkout other',
  'cd src && git checkout other',
  'git --git-dir=.git --work-tree=. checkout other',
  'git -C build --work-tree=.. switch other',
];

const KEEPERS = [
  'git checkout -b feat',
  'git checkout -- a.txt',
  'git checkout other a.txt',
  'git reset',
  'git reset --soft HEAD',
  'git stash list',
  'git stash drop',
  'git apply --check p.patch',
  'git apply --stat p.patch',
  'git apply --cached p.patch',
  'git clean -n',
  'git clean -f build',
  'git worktree list',
  'git worktree add ../wt other',
  'git status',
  'git log --oneline',
  'git fetch',
  'git switch -c feat',
  'git add -A',
  'git commit -m x',
  'git push',
  'git diff other',
  // A patch naming only files the rule leaves.
  'git apply doc.patch',
  'git apply -v --index doc.patch',
];

describe('git commands that rewrite the work tree, under an Edit deny rule reaching into it', () => {
  it('ask (safety) in every mode, even under Bash(git:*)', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Edit(./src/**)'], allow: ['Bash(git:*)'], mode });
      repository(env.ws);
      for (const c of REWRITERS) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git rewrite of a work tree under an Edit deny rule/) });
      }
    }
  });

  it('a rule matching at any depth reaches every tree', async () => {
    const env = ruleEnv({ deny: ['Edit(.env)'], allow: ['Bash(git:*)'], mode: BYPASS.defaultMode });
    repository(env.ws);
    // (A branch switch or a fast-forward is judged by what git says it writes: below.)
    for (const c of ['git rebase other', 'git pull', 'git clean -f build']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'git rewrite of a work tree under an Edit deny rule: Edit(.env)' });
    }
  });

  it('a work tree no check can place asks: no repository above', async () => {
    const env = ruleEnv({ deny: ['Edit(./src/**)'], allow: ['Bash(git:*)'], mode: 'acceptEdits' });
    fs.mkdirSync(path.join(env.ws, 'src'));
    expect(await env.check('git checkout other')).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'git rewrite of a work tree under an Edit deny rule: unknown work tree' });
  });

  it('commands that leave the tree, or write only what the rule does not reach, are as before', async () => {
    const env = ruleEnv({ deny: ['Edit(./src/**)'], allow: ['Bash(git:*)'], mode: 'acceptEdits' });
    repository(env.ws);
    for (const c of KEEPERS) expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    // A path checkout under the rule is denied by it, as before.
    expect(await env.check('git checkout other -- src/a.ts')).toMatchObject({ behavior: 'deny', type: 'rule' });
  });

  it('without an Edit deny rule reaching the tree, a checkout or pull is as before in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      for (const deny of [[], ['Edit(//nowhere-toolexec/**)']]) {
        const allowed = ruleEnv({ deny, allow: ['Bash(git:*)'], mode });
        repository(allowed.ws);
        for (const c of ['git checkout main', 'git checkout other', 'git pull', 'git reset --hard', 'git stash pop']) {
          { const r = await allowed.check(c); expect(r, `${mode} ${deny.join()}: ${c} ${JSON.stringify(r)}`).toMatchObject({ behavior: "allow" }); }
        }
        const bare = ruleEnv({ deny, mode });
        repository(bare.ws);
        for (const c of ['git checkout main', 'git pull']) {
          const r = await bare.check(c);
          expect(r, `${mode} ${deny.join()}: ${c}`).not.toMatchObject({ type: 'safety' });
          expect(r.behavior, `${mode} ${deny.join()}: ${c}`).not.toBe('deny');
        }
      }
    }
  });
});

describe('end to end in bypassPermissions', () => {
  it('git checkout other, git co (an alias), git stash pop, git apply and git reset --hard leave src/a.ts as it was; a patch of a.txt applies', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(./src/**)'] } });
    try {
      const git = repository(t.workspace);
      const a = path.join(t.workspace, 'src', 'a.ts');
      for (const command of ['git checkout other', 'git checkout build', 'git co other', 'git stash pop', 'git apply p.patch', 'git reset --hard other']) {
        const r = await run(t, 'Bash', { command });
        expect(r.exec.status, command).toBe('denied');
        expect(fs.readFileSync(a, 'utf8'), command).toBe('a\n');
        expect(fs.existsSync(path.join(t.workspace, 'src', 'new.ts')), command).toBe(false);
      }
      // What is not under the rule still runs.
      const ok = await run(t, 'Bash', { command: 'git checkout -b feat && git status --short' });
      expect(ok.exec.status).toBe('succeeded');
      const doc = await run(t, 'Bash', { command: 'git apply doc.patch' });
      expect(doc.exec.status).toBe('succeeded');
      expect(fs.readFileSync(path.join(t.workspace, 'a.txt'), 'utf8')).toBe('u\n');
      // What it rests on: git does replace it.
      git('checkout', '-q', 'other');
      expect(fs.readFileSync(a, 'utf8')).toBe('planted\n');
    } finally {
      await t.close();
    }
  });
});

/** What the check leaves to the mode (bypassPermissions runs it): no ask, no deny. */
const RUNS = { behavior: expect.stringMatching(/^(allow|passthrough)$/) };

/**
 * A repository on main (a.txt, src/a.ts, d/x, .gitignore ignoring .env) with branches: `clean` (a.txt and
 * src/b.ts changed, no .env), `envb` (adds .env), `dfile` (d a file), `amb` (envb's commit) beside a tag
 * `amb` (clean's commit), and `viaLink` (adds conf/key).
 */
function envRepository(ws: string): (...a: string[]) => Buffer {
  const git = (...a: string[]): Buffer => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: ws, stdio: 'pipe' });
  const write = (rel: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    fs.writeFileSync(path.join(ws, rel), text);
  };
  write('a.txt', 'a\n');
  write('src/a.ts', 'a\n');
  write('d/x', 'x\n');
  write('.gitignore', '.env\n');
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-qm', 'one');
  git('checkout', '-q', '-b', 'clean');
  write('a.txt', 'clean\n');
  write('src/b.ts', 'b\n');
  git('add', '.');
  git('commit', '-qm', 'clean');
  git('checkout', '-q', '-b', 'envb', 'main');
  write('.env', 'SECRET=planted\n');
  git('add', '-f', '.env');
  git('commit', '-qm', 'env');
  git('checkout', '-q', '-b', 'dfile', 'main');
  git('rm', '-q', '-r', 'd');
  write('d', 'a file\n');
  git('add', 'd');
  git('commit', '-qm', 'dfile');
  git('checkout', '-q', '-b', 'viaLink', 'main');
  write('conf/key', 'k\n');
  git('add', 'conf');
  git('commit', '-qm', 'conf');
  fs.rmSync(path.join(ws, 'conf'), { recursive: true });
  git('checkout', '-q', 'main');
  git('branch', 'amb', 'envb');
  git('tag', 'amb', 'clean');
  return git;
}

describe('what git lists of a rewrite: under Edit(.env), only the files it writes count', () => {
  const env = (deny = ['Edit(.env)'], extra: Partial<Parameters<typeof ruleEnv>[0]> = {}) => ruleEnv({ deny, mode: BYPASS.defaultMode, ...extra });
  const asks = { behavior: 'ask', type: 'safety', detail: 'git rewrite of a work tree under an Edit deny rule: Edit(.env)' };

  it('a branch switch, a reset or a detached checkout where no .env differs is not asked in bypassPermissions', async () => {
    const e = env();
    envRepository(e.ws);
    for (const c of ['git checkout clean', 'git switch clean', 'git checkout -q --detach clean', 'git switch -d clean', 'git reset --hard clean', 'git reset --keep clean', 'git -C src checkout clean', 'git status && git checkout clean', 'git checkout -f clean', 'git reset --hard']) {
      expect(await e.check(c), c).toMatchObject(RUNS);
    }
    // reset takes the tag amb (clean's commit) as git does; checkout the branch amb (envb's), below.
    expect(await e.check('git reset --hard amb')).toMatchObject(RUNS);
    // A staged .env is carried over by a plain checkout: not thrown away.
    const staged = env();
    const git = envRepository(staged.ws);
    fs.writeFileSync(path.join(staged.ws, '.env'), 'LOCAL=1\n');
    git('add', '-f', '.env');
    expect(await staged.check('git checkout clean')).toMatchObject(RUNS);
    // Under Edit(./secrets/**), a switch that writes nothing there.
    const s = env(['Edit(./secrets/**)']);
    envRepository(s.ws);
    fs.mkdirSync(path.join(s.ws, 'secrets'));
    fs.symlinkSync('secrets', path.join(s.ws, 'conf'));
    expect(await s.check('git checkout clean')).toMatchObject(RUNS);
  });

  it('a merge that fast-forwards to a commit writing no .env, or has nothing to do, is not asked', async () => {
    const e = env();
    const git = envRepository(e.ws);
    for (const c of ['git merge clean', 'git merge --ff-only clean', 'git merge -q --no-edit clean']) expect(await e.check(c), c).toMatchObject(RUNS);
    git('checkout', '-q', 'clean');
    expect(await e.check('git merge main')).toMatchObject(RUNS);
    // merge takes the tag amb (clean's commit, in HEAD's history) before the branch, as git does.
    expect(await e.check('git merge --ff-only amb')).toMatchObject(RUNS);
  });

  it('stash pop and apply of a stashed change to a.txt on its own base are not asked', async () => {
    const e = env();
    const git = envRepository(e.ws);
    fs.writeFileSync(path.join(e.ws, 'a.txt'), 'changed\n');
    git('stash', '-q');
    expect(await e.check('git stash pop')).toMatchObject(RUNS);
    expect(await e.check('git stash apply 0')).toMatchObject(RUNS);
    // A range names no one stash (git stash refuses it): no list is taken from its first commit.
    expect(await e.check('git stash apply main..stash@{0}')).toMatchObject({ behavior: 'ask', type: 'safety' });
    fs.writeFileSync(path.join(e.ws, '.env'), 'A=1\n');
    git('stash', '-q', '-a');
    expect(await e.check('git stash apply 1')).toMatchObject(RUNS);
  });

  it('where .env differs, or the target is the branch of a name a tag also has, it still asks', async () => {
    const e = env();
    envRepository(e.ws);
    for (const c of ['git checkout envb', 'git switch envb', 'git reset --hard envb', 'git checkout --detach envb', 'git checkout amb', 'git switch amb', 'git merge envb']) {
      expect(await e.check(c), c).toMatchObject(asks);
    }
    // A merge of diverged branches (clean and envb): three trees, whatever they hold.
    const d = env();
    const g = envRepository(d.ws);
    g('checkout', '-q', 'envb');
    expect(await d.check('git merge clean')).toMatchObject(asks);
    expect(await d.check('git merge --no-ff clean')).toMatchObject(asks);
  });

  it('checkout -f and reset --hard throw away a staged or changed .env', async () => {
    const e = env();
    const git = envRepository(e.ws);
    fs.writeFileSync(path.join(e.ws, '.env'), 'LOCAL=1\n');
    git('add', '-f', '.env');
    for (const c of ['git checkout -f clean', 'git switch --discard-changes clean', 'git reset --hard', 'git reset --hard clean', 'git reset --merge clean']) {
      expect(await e.check(c), c).toMatchObject(asks);
    }
    // A tracked .env changed and not staged: only the index lists it.
    const t = env();
    const g2 = envRepository(t.ws);
    g2('checkout', '-q', 'envb');
    fs.writeFileSync(path.join(t.ws, '.env'), 'SECRET=local\n');
    for (const c of ['git reset --hard', 'git checkout -f envb', 'git reset --hard amb']) expect(await t.check(c), c).toMatchObject(asks);
  });

  it('a directory the target replaces by a file (an ignored .env below it goes), a submodule, a link into a denied directory: asked', async () => {
    const e = env();
    envRepository(e.ws);
    fs.writeFileSync(path.join(e.ws, 'd', '.env'), 'x\n');
    expect(await e.check('git checkout dfile')).toMatchObject(asks);
    // A submodule (a gitlink) the target adds: what git puts below it is not listed.
    const m = env();
    const g = envRepository(m.ws);
    const head = g('rev-parse', 'HEAD').toString().trim();
    g('checkout', '-q', '-b', 'withsub', 'clean');
    g('update-index', '--add', '--cacheinfo', `160000,${head},sub`);
    g('commit', '-qm', 'sub');
    g('checkout', '-q', 'main');
    expect(await m.check('git checkout withsub')).toMatchObject(asks);
    // conf leads to secrets/, which Edit(./secrets/**) denies: git's conf/key is secrets/key.
    const s = env(['Edit(./secrets/**)']);
    envRepository(s.ws);
    fs.mkdirSync(path.join(s.ws, 'secrets'));
    fs.symlinkSync('secrets', path.join(s.ws, 'conf'));
    expect(await s.check('git checkout viaLink')).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'git rewrite of a work tree under an Edit deny rule: Edit(./secrets/**)' });
  });

  it('stash pop: a stashed .env change, an untracked .env stashed with -u, a stash on another base ask', async () => {
    const e = env();
    const git = envRepository(e.ws);
    fs.writeFileSync(path.join(e.ws, 'a.txt'), 'changed\n');
    git('stash', '-q');
    // An untracked (ignored) .env, stashed with -a: only in the stash's third parent.
    fs.writeFileSync(path.join(e.ws, '.env'), 'A=1\n');
    git('stash', '-q', '-a');
    expect(await e.check('git stash pop')).toMatchObject(asks);
    expect(await e.check('git stash apply stash@{0}')).toMatchObject(asks);
    // On another commit than the stash's base, the merge may put a change elsewhere: asked.
    git('checkout', '-q', 'clean');
    expect(await e.check('git stash apply 1')).toMatchObject(asks);

    const t = env();
    const g2 = envRepository(t.ws);
    g2('checkout', '-q', 'envb');
    fs.writeFileSync(path.join(t.ws, '.env'), 'SECRET=changed\n');
    g2('stash', '-q');
    expect(await t.check('git stash pop')).toMatchObject(asks);
    // A staged rename of the stash's a.txt: the change would land in the new name.
    const r = env();
    const g3 = envRepository(r.ws);
    fs.writeFileSync(path.join(r.ws, 'a.txt'), 'changed\n');
    g3('stash', '-q');
    g3('mv', 'a.txt', 'b.txt');
    expect(await r.check('git stash pop')).toMatchObject(asks);
  });

  it('what git cannot tell asks: an unknown target, an unborn HEAD, no stash, a range, pull, rebase, cherry-pick, -m, --recurse-submodules, -b, an alias, an expansion', async () => {
    const e = env();
    const git = envRepository(e.ws);
    git('config', 'alias.co', 'checkout');
    for (const c of ['git checkout nope', 'git switch nope', 'git reset --hard nope', 'git stash pop', 'git checkout clean..envb', 'git pull', 'git rebase clean',
      'git cherry-pick clean', 'git checkout -m clean', 'git checkout --recurse-submodules clean', 'git checkout -b x clean', 'git co clean', 'git checkout $B', 'git checkout "$(echo clean)"',
      'git checkout --det clean', 'git -c core.quotepath=off checkout clean', 'git --git-dir=.git checkout clean']) {
      expect(await e.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    const u = env();
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: u.ws });
    expect(await u.check('git checkout main')).toMatchObject({ behavior: 'ask', type: 'safety' });
    // A linked worktree (its .git a file, its configuration partly elsewhere): no list is taken, as before.
    const w = env();
    const main = path.join(path.dirname(w.ws), 'main');
    fs.mkdirSync(main);
    const g = envRepository(main);
    fs.rmdirSync(w.ws);
    g('worktree', 'add', '-q', w.ws, 'clean');
    expect(await w.check('git checkout main')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('git pointed elsewhere by a variable, or a line that moves the target first, asks', async () => {
    const e = env();
    envRepository(e.ws);
    for (const c of ['GIT_DIR=.git git checkout clean', 'export GIT_INDEX_FILE=x; git checkout clean', 'env GIT_WORK_TREE=. git checkout clean', 'git branch -f clean envb && git checkout clean', 'git update-ref refs/heads/clean envb; git checkout clean']) {
      expect(await e.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    const withEnv = env(['Edit(.env)'], {});
    envRepository(withEnv.ws);
    const ctx = { ...withEnv.ctx, childEnv: { ...process.env, GIT_DIR: path.join(withEnv.ws, 'nowhere') } };
    expect(await checkBashPermission('git checkout clean', ctx)).toMatchObject({ behavior: 'ask', type: 'safety' });
  });
});

describe('git asked during a decision obeys nothing the repository sets', () => {
  const hostile = ['--output=MARK', '-x', '--exec=touch MARK', '-oMARK'];

  /** A repository whose configuration runs `touch MARKER` as fsmonitor, external diff, textconv, pager and alias. */
  function hostileRepository(ws: string, marker: string): (...a: string[]) => Buffer {
    const git = envRepository(ws);
    const touch = `touch ${marker}`;
    git('config', 'core.fsmonitor', touch);
    git('config', 'diff.external', touch);
    git('config', 'diff.x.textconv', touch);
    git('config', 'core.pager', touch);
    git('config', 'pager.diff-tree', touch);
    git('config', 'core.sshCommand', touch);
    fs.writeFileSync(path.join(ws, '.gitattributes'), '* diff=x\n');
    return git;
  }

  it('fsmonitor, external diff, textconv, pager: none runs, and the decision is made', async () => {
    const e = ruleEnv({ deny: ['Edit(.env)'], mode: BYPASS.defaultMode });
    const marker = path.join(path.dirname(e.ws), 'marker');
    const git = hostileRepository(e.ws, marker);
    // What it rests on: git does run them.
    git('status');
    expect(fs.existsSync(marker)).toBe(true);
    fs.rmSync(marker);
    for (const c of ['git checkout clean', 'git reset --hard clean', 'git checkout envb', 'git switch amb', 'git stash pop']) {
      await e.check(c);
      expect(fs.existsSync(marker), c).toBe(false);
    }
    expect(await e.check('git checkout envb')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it("in such a repository git's list still decides: a switch that writes no .env is not asked", async () => {
    const e = ruleEnv({ deny: ['Edit(.env)'], mode: BYPASS.defaultMode });
    const marker = path.join(path.dirname(e.ws), 'marker');
    hostileRepository(e.ws, marker);
    expect(await e.check('git checkout clean')).toMatchObject(RUNS);
    expect(await e.check('git reset --hard clean')).toMatchObject(RUNS);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('revisions that look like options are never options; they ask', async () => {
    const e = ruleEnv({ deny: ['Edit(.env)'], mode: BYPASS.defaultMode });
    envRepository(e.ws);
    const dir = path.dirname(e.ws);
    for (const h of hostile) {
      const word = h.replace('MARK', path.join(dir, 'mark'));
      for (const c of [`git checkout '${word}'`, `git switch '${word}'`, `git reset --hard '${word}'`, `git stash apply '${word}'`, `git checkout -- '${word}'`, `git checkout 'x ${word}'`]) {
        // Asked, or (a word git takes for an option of its own, `git checkout -x`) no rewrite: never allowed as one.
        expect((await e.check(c)).behavior, c).not.toBe('allow');
        expect(fs.readdirSync(dir).filter((n) => n !== 'ws'), c).toEqual([]);
        expect(fs.existsSync(path.join(e.ws, 'mark')), c).toBe(false);
      }
    }
  });

  it('git is never handed a revision as an option: an option-like one is no answer, and writes nothing', async () => {
    // The check above stops most such words before git runs; this asks git-rewrites.ts itself, where only
    // --end-of-options keeps `--output=FILE` from being an option of rev-parse, rev-list or diff-tree.
    const e = ruleEnv({ deny: ['Edit(.env)'], mode: BYPASS.defaultMode });
    envRepository(e.ws);
    const dir = path.dirname(e.ws);
    const top = fs.realpathSync(e.ws);
    for (const h of hostile) {
      const rev = h.replace('MARK', path.join(dir, 'mark'));
      for (const kind of ['switch', 'hard', 'merge', 'stash'] as const) {
        expect(await gitRewrittenPaths({ top, kind, rev, branchFirst: kind === 'switch' }), `${kind} ${rev}`).toBeNull();
        expect(fs.readdirSync(dir).filter((n) => n !== 'ws'), `${kind} ${rev}`).toEqual([]);
        expect(fs.existsSync(path.join(e.ws, 'mark')), `${kind} ${rev}`).toBe(false);
      }
    }
  });

  it('a hook the command would run (post-checkout, reference-transaction) asks, and does not run during the decision', async () => {
    for (const hook of ['post-checkout', 'reference-transaction', 'post-index-change']) {
      const e = ruleEnv({ deny: ['Edit(.env)'], mode: BYPASS.defaultMode });
      const marker = path.join(path.dirname(e.ws), 'marker');
      envRepository(e.ws);
      const file = path.join(e.ws, '.git', 'hooks', hook);
      fs.writeFileSync(file, `#!/bin/sh\ntouch ${marker}\n`);
      fs.chmodSync(file, 0o755);
      for (const c of ['git checkout clean', 'git reset --hard clean', 'git stash pop']) {
        expect(await e.check(c), `${hook}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
        expect(fs.existsSync(marker), `${hook}: ${c}`).toBe(false);
      }
    }
  });
});

describe('end to end in bypassPermissions under Edit(.env)', () => {
  it('git checkout clean runs; git checkout envb is stopped and writes no .env', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(.env)'] } });
    try {
      envRepository(t.workspace);
      const ok = await run(t, 'Bash', { command: 'git checkout -q clean' });
      expect(ok.exec.status).toBe('succeeded');
      expect(fs.readFileSync(path.join(t.workspace, 'a.txt'), 'utf8')).toBe('clean\n');
      const stopped = await run(t, 'Bash', { command: 'git checkout -q envb' });
      expect(stopped.exec.status).toBe('denied');
      expect(fs.existsSync(path.join(t.workspace, '.env'))).toBe(false);
    } finally {
      await t.close();
    }
  });
});
