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
    for (const c of ['git checkout other', 'git pull', 'git clean -f build']) {
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
