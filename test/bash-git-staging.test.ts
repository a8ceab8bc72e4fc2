/**
 * Staging that names no file: with Read(./.env) denied and Bash(git:*) allowed, `git add -A && git
 * commit -qm x && git push -q OUT HEAD:main` was allowed and sent an untracked .env no .gitignore
 * lists to a repository outside the workspace (`git --git-dir=OUT show main:.env` printed it), as
 * were `git add .`, `git add :/`, `git add -N .`, `git -C src add ..`; `git add -u`, `git commit
 * -a` and `git stash` likewise staged a tracked .env's new contents. Now they ask where the work tree
 * they cover holds a denied file (or a link to one) git would stage: for -A, `.` and directories one
 * that no simple ignore line surely leaves out, or that the index may track; for -u, commit -a and
 * stash, one the index may track. Real rule indexes and the real service; git run for real to show
 * what each judgement stands on.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { starMatch } from '../src/util/star-match.js';
import { tmpDir } from './helpers.js';
import { BYPASS, bashServiceTests, ruleEnv, type RuleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

const DENY = ['Read(./.env)', 'Read(**/.env)'];
const ID = ['-c', 'user.name=t', '-c', 'user.email=t@e'];

function gitIn(dir: string): (...args: string[]) => string {
  return (...args) => execFileSync('git', [...ID, ...args], { cwd: dir, encoding: 'utf8' });
}

/** A repository with one commit (src/a.ts), lib/b.ts untracked. */
function project(mode: 'default' | 'acceptEdits' | 'bypassPermissions' = 'default'): RuleEnv & { git: (...args: string[]) => string } {
  const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY, mode });
  const git = gitIn(env.ws);
  git('init', '-q', '-b', 'main');
  fs.mkdirSync(path.join(env.ws, 'src'));
  fs.mkdirSync(path.join(env.ws, 'lib'));
  fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), 'one\n');
  git('add', '-A');
  git('commit', '-qm', 'one');
  fs.writeFileSync(path.join(env.ws, 'lib', 'b.ts'), 'untracked\n');
  return { ...env, git };
}

const MODES = ['default', 'acceptEdits', BYPASS.defaultMode] as const;
const STAGE_ALL = ['git add -A', 'git add .', 'git add --all', 'git add -- .', 'git add :/', 'git add -N .', 'git add -Av', 'git add --no-all .', 'git add lib .', 'git -C src add ..', 'git add -A && git commit -qm x && git push -q /tmp/out.git HEAD:main'];
const STAGE_TRACKED = ['git add -u', 'git commit -am x', 'git commit -qm x -a', 'git commit -m x -- .', 'git commit -o -m x src', 'git stash', 'git stash -m wip', 'git stash push', 'git stash create'];

async function expectAsk(env: RuleEnv, commands: readonly string[], why: string): Promise<void> {
  for (const c of commands) expect(await env.check(c), `${why}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/stages what Read deny rules cover/) });
}
async function expectAllowed(env: RuleEnv, commands: readonly string[], why: string): Promise<void> {
  // passthrough: no rule decides (bypassPermissions then allows).
  for (const c of commands) expect(['allow', 'passthrough'], `${why}: ${c}`).toContain((await env.check(c)).behavior);
}

describe('git add -A, git add . and other staging that names no file', () => {
  it('does not push an untracked .env out of the workspace (the real service runs git)', async () => {
    const out = path.join(tmpDir('toolexec-staging-out-'), 'out.git');
    execFileSync('git', ['init', '-q', '--bare', out]);
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: DENY } });
    const git = gitIn(t.workspace);
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(t.workspace, 'a.ts'), 'one\n');
    git('add', 'a.ts');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const r = await run(t, 'Bash', { command: `git add -A && git -c user.name=t -c user.email=t@e commit -qm x && git push -q ${out} HEAD:main` });
    expect(r.exec.status, r.text).toBe('denied');
    expect(git('ls-files')).toBe('a.ts\n');
    expect(() => execFileSync('git', ['--git-dir', out, 'show', 'main:.env'], { stdio: 'pipe' })).toThrow();
    // A plain name is judged as before; with .env ignored, the same line runs and leaves it out.
    fs.writeFileSync(path.join(t.workspace, '.gitignore'), '.env\n');
    const ok = await run(t, 'Bash', { command: `git add -A && git -c user.name=t -c user.email=t@e commit -qm x && git push -q ${out} HEAD:main` });
    expect(ok.exec.status, ok.text).toBe('succeeded');
    expect(execFileSync('git', ['--git-dir', out, 'ls-tree', '-r', '--name-only', 'main'], { encoding: 'utf8' })).toBe('.gitignore\na.ts\n');
  });

  it('asks where the work tree holds an untracked denied file no ignore line leaves out, in every mode', async () => {
    for (const mode of MODES) {
      const env = project(mode);
      await expectAllowed(env, [...STAGE_ALL, ...STAGE_TRACKED], `${mode}, nothing denied`);
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      await expectAsk(env, STAGE_ALL, `${mode}, .env untracked`);
      // -u, commit -a and stash take tracked files only; a plain file name is judged as a read.
      await expectAllowed(env, [...STAGE_TRACKED, 'git add src/a.ts', 'git add lib/b.ts src/a.ts', 'git add src', 'git add lib', 'git -C src add a.ts', 'git add gone.ts', 'git commit -m x', 'git add -n .'], `${mode}, .env untracked`);
      expect(await env.check('git add .env')).toMatchObject({ behavior: 'deny' });
    }
  });

  it('takes a pathspec\'s .. from where git really runs', async () => {
    // A rule that matches nothing below the link's target: the listing follows the link and finds nothing there.
    const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./lib/deep/.env)'] });
    const git = gitIn(env.ws);
    git('init', '-q');
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.mkdirSync(path.join(env.ws, 'lib', 'deep', 'dir'), { recursive: true });
    fs.writeFileSync(path.join(env.ws, 'lib', 'deep', '.env'), 'KEY=1\n');
    fs.mkdirSync(path.join(env.ws, 'src', 'x'));
    fs.symlinkSync('../../lib/deep/dir', path.join(env.ws, 'src', 'x', 'link'));
    // git runs in lib/deep/dir: `..` is lib/deep, which holds .env (src/x, where the link lies, does not).
    await expectAsk(env, ['git -C src/x/link add ..'], 'through a link');
    await expectAllowed(env, ['git -C src/x add .'], 'where the link lies');
    git('-C', 'src/x/link', 'add', '..');
    expect(git('ls-files', 'lib/deep')).toBe('lib/deep/.env\n');
  });

  it('asks for a directory holding the file, and for a link to a denied file, where git would stage it', async () => {
    const env = project();
    const secret = path.join(tmpDir('toolexec-staging-secret-'), 'secret.txt');
    fs.writeFileSync(secret, 'SECRET=hunter2\n');
    const linked = ruleEnv({ allow: ['Bash(git:*)'], deny: [...DENY, `Read(/${secret})`] });
    fs.writeFileSync(path.join(env.ws, 'lib', '.env'), 'KEY=1\n');
    await expectAsk(env, ['git add lib', 'git add lib/', 'git -C lib add .'], 'lib/.env');
    await expectAllowed(env, ['git add src', 'git -C src add .'], 'lib/.env');
    // A hard link to a denied file, under a name nothing ignores: git stores the contents.
    const g = gitIn(linked.ws);
    g('init', '-q');
    fs.linkSync(secret, path.join(linked.ws, 'notes.txt'));
    await expectAsk(linked, ['git add -A'], 'hard link');
    fs.writeFileSync(path.join(linked.ws, '.gitignore'), 'notes.txt\n');
    await expectAllowed(linked, ['git add -A'], 'hard link ignored');
    // A symbolic link, ignored (git neither stores nor follows it), then not.
    fs.rmSync(path.join(linked.ws, 'notes.txt'));
    fs.symlinkSync(secret, path.join(linked.ws, 'notes.txt'));
    await expectAllowed(linked, ['git add -A'], 'symbolic link ignored');
    fs.rmSync(path.join(linked.ws, '.gitignore'));
    await expectAsk(linked, ['git add -A'], 'symbolic link');
  });

  it('leaves a file out as ignored only where a simple ignore line says so and none takes one back', async () => {
    const env = project();
    fs.mkdirSync(path.join(env.ws, 'lib', 'conf'));
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    fs.writeFileSync(path.join(env.ws, 'lib', 'conf', '.env'), 'KEY=1\n');
    const gitignore = path.join(env.ws, '.gitignore');
    for (const lines of ['.env\n', '*.env\n', '.env*\n', '**/.env\n', '.env  \r\n', '# secrets\n.env\ndist/\n', '\ufeff.env\n']) {
      fs.writeFileSync(gitignore, lines);
      await expectAllowed(env, STAGE_ALL, JSON.stringify(lines));
    }
    // Anchored lines and directories: the top's own .env only, or every file below lib/conf.
    fs.writeFileSync(gitignore, '/.env\nconf/\n');
    await expectAllowed(env, STAGE_ALL, '/.env and conf/');
    for (const lines of ['/.env\n', '.env\n!.env\n', '\ufeff!x?\n.env\n', '.en?\n', 'lib/conf/.env\n/.env\n', '.e[n]v\n', '**/conf/.env\n/.env\n', '**.env\n', '\\.env\n']) {
      fs.writeFileSync(gitignore, lines);
      await expectAsk(env, ['git add -A', 'git add .'], JSON.stringify(lines));
    }
    // A deeper .gitignore's `!` takes a name back (git reads the deepest first; `!` lines: the next describe).
    fs.writeFileSync(gitignore, '.env\n');
    fs.writeFileSync(path.join(env.ws, 'lib', '.gitignore'), '!.env\n');
    await expectAsk(env, ['git add -A', 'git add lib'], 'lib/.gitignore !.env');
    fs.rmSync(path.join(env.ws, 'lib', '.gitignore'));
    // git does not follow a .gitignore that is a symbolic link.
    fs.renameSync(gitignore, path.join(env.ws, 'ignore.txt'));
    fs.symlinkSync('ignore.txt', gitignore);
    await expectAsk(env, ['git add -A'], '.gitignore a link');
    fs.rmSync(gitignore);
    // The repository's info/exclude counts as a .gitignore at the top.
    fs.appendFileSync(path.join(env.ws, '.git', 'info', 'exclude'), '.env\n');
    await expectAllowed(env, STAGE_ALL, 'info/exclude');
  });

  it('matches a line of many * in steps bounded by its length: a hostile .gitignore does not hold the service', async () => {
    const env = project();
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    // Backtracked as a regular expression, 12 stars against this 81-character name took 128 s; 40 would never end.
    fs.writeFileSync(path.join(env.ws, '.gitignore'), `${'*.'.repeat(40)}zz\n.env\n`);
    // A directory: the listing asks of each directory it enters whether git leaves it out.
    fs.mkdirSync(path.join(env.ws, 'lib', `${'a.'.repeat(120)}b`));
    fs.writeFileSync(path.join(env.ws, 'lib', `${'a.'.repeat(120)}b`, 'f.ts'), 'x\n');
    await expectAllowed(env, ['git add -A', 'git add lib'], 'hostile line');
    expect(starMatch(`${'*.'.repeat(40)}zz`, `${'a.'.repeat(120)}b`)).toBe(false);
    expect(starMatch(`${'*.'.repeat(40)}zz`, `${'a.'.repeat(40)}zz`)).toBe(true);
    // As git's fnmatch takes `*` within a name.
    for (const [p, n, m] of [['.env*', '.env', true], ['.env*', '.env.local', true], ['*.env', '.env', true], ['*', '', true], ['a*b*c', 'abxbc', true], ['a*b*c', 'acb', false], ['*a', 'ba', true], ['*a', 'ab', false], ['.e*v', '.env', true]] as const) {
      expect(starMatch(p, n), `${p} ${n}`).toBe(m);
    }
  });

  it('asks where a denied file may be tracked, ignored or not: -u, commit -a and stash take its new contents', async () => {
    const env = project();
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=old\n');
    env.git('add', '.env');
    env.git('commit', '-qm', 'env');
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=new\n');
    await expectAsk(env, [...STAGE_ALL, ...STAGE_TRACKED], 'tracked .env');
    await expectAllowed(env, ['git add src/a.ts', 'git commit -m x', 'git commit --amend --no-edit', 'git status'], 'tracked .env');
    // What it stands against: the ignore line does not keep git from staging a tracked file's new contents.
    env.git('add', '-A');
    expect(env.git('show', ':.env')).toBe('SECRET=new\n');
  });

  it('asks for a rebase, merge or pull that may autostash, and for update-index --again, where a denied file may be tracked', async () => {
    const env = project();
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=old\n');
    env.git('add', '.env');
    env.git('commit', '-qm', 'env');
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=new\n');
    const autostash = ['git rebase --autostash HEAD', 'git rebase HEAD', 'git -c rebase.autoStash=true rebase HEAD', 'git rebase --no-autostash --autostash HEAD', 'git merge --autostash main', 'git pull --autostash', 'git pull'];
    const again = ['git update-index --again', 'git update-index -g', 'git update-index -qg', 'git reset -q --soft HEAD~1 && git update-index --again'];
    await expectAsk(env, [...autostash, ...again], 'tracked .env');
    await expectAllowed(env, ['git rebase --no-autostash HEAD', 'git pull --no-autostash', 'git rebase --continue', 'git merge --abort', 'git update-index --refresh'], 'tracked .env');
    // What they stand against: git names the autostash (then `git push OUT e293929:refs/heads/x` sends it), and
    // --again after a soft reset stages the new contents, with no word naming .env.
    execFileSync('git', ['rebase', '--autostash', 'HEAD'], { cwd: env.ws, stdio: 'pipe' });
    const sha = /dangling commit ([0-9a-f]+)/.exec(env.git('fsck', '--lost-found'))?.[1];
    expect(sha).toBeDefined();
    expect(env.git('show', `${sha}:.env`)).toBe('SECRET=new\n');
    env.git('reset', '-q', '--soft', 'HEAD~1');
    env.git('update-index', '--again');
    expect(env.git('show', ':.env')).toBe('SECRET=new\n');
    // Where .env is not tracked, none of them asks.
    const plain = project();
    fs.writeFileSync(path.join(plain.ws, '.env'), 'SECRET=x\n');
    await expectAllowed(plain, [...autostash, ...again.slice(0, 3)], 'untracked .env');
  });

  it('looks a path up in the index whole: docs/.env and .env.example tracked are not .env', async () => {
    // Read(./.env) would cover docs/.env too (a name without a slash matches at any depth): the root's only here.
    const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(/.env)'] });
    const git = gitIn(env.ws);
    git('init', '-q');
    fs.mkdirSync(path.join(env.ws, 'docs'));
    for (const f of ['docs/.env', '.env.example', 'a.ts']) fs.writeFileSync(path.join(env.ws, f), 'KEY=example\n');
    git('add', '-A');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '/.env\n');
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    await expectAllowed(env, ['git add -A', 'git commit -am x', 'git stash'], '.env untracked');
    git('add', '-f', '.env');
    await expectAsk(env, ['git add -A', 'git commit -am x', 'git stash'], '.env tracked');
  });

  it('reads the index of a SHA-256 repository as well', async () => {
    const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY });
    const git = gitIn(env.ws);
    git('init', '-q', '--object-format=sha256');
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
    fs.writeFileSync(path.join(env.ws, 'a.ts'), 'one\n');
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=old\n');
    git('add', 'a.ts', '.gitignore');
    git('commit', '-qm', 'one');
    await expectAllowed(env, ['git add -A', 'git commit -am x'], 'sha256, .env ignored');
    git('add', '-f', '.env');
    await expectAsk(env, ['git add -A', 'git commit -am x'], 'sha256, .env tracked');
  });

  it('leaves an ignored directory holding nothing tracked unlisted, as git does (node_modules/ past the listing limit)', async () => {
    const env = project();
    const nm = path.join(env.ws, 'node_modules');
    fs.mkdirSync(path.join(nm, 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(nm, 'pkg', '.env'), 'KEY=1\n');
    // More entries than a listing looks through (TREE_LIMIT, 50,000).
    for (let i = 0; i <= 50_000; i++) fs.writeFileSync(path.join(nm, `f${i}.js`), '');
    await expectAsk(env, ['git add -A'], 'node_modules not ignored');
    fs.writeFileSync(path.join(env.ws, '.gitignore'), 'node_modules/\n');
    await expectAllowed(env, ['git add -A', 'git add .', 'git commit -am x'], 'node_modules/ ignored');
    // A file tracked there (vendored): git enters the directory for it, yet leaves the ignored .env out.
    env.git('add', '-f', 'node_modules/f1.js');
    expect(await env.check('git add -A')).toMatchObject({ behavior: 'ask', detail: expect.stringMatching(/unknown work tree$/) });
    fs.rmSync(nm, { recursive: true });
    fs.mkdirSync(path.join(nm, 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(nm, 'f1.js'), 'x\n');
    fs.writeFileSync(path.join(nm, 'pkg', '.env'), 'KEY=1\n');
    await expectAllowed(env, ['git add -A', 'git commit -am x'], 'vendored file tracked, .env ignored');
  });

  it('asks where an index git may read otherwise is (not version 2: skip-worktree, intent-to-add)', async () => {
    const env = project();
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    env.git('add', '.gitignore');
    env.git('commit', '-qm', 'ignore');
    await expectAllowed(env, STAGE_ALL, 'ignored');
    // skip-worktree: git reads the .gitignore from the index, not the file the listing reads.
    env.git('update-index', '--skip-worktree', '.gitignore');
    await expectAsk(env, ['git add -A', 'git commit -am x'], 'index version 3');
    env.git('update-index', '--no-skip-worktree', '.gitignore');
    env.git('update-index', '--index-version', '2');
    await expectAllowed(env, STAGE_ALL, 'version 2 again');
  });

  it('asks when another command of the line may change what git ignores or tracks first', async () => {
    const env = project();
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    await expectAllowed(env, ['git add -A && git commit -qm x', 'git status && git add . && git commit -qm x && git push -q origin HEAD', 'git add -A 2>/dev/null; git log --oneline -1'], 'ignored');
    await expectAsk(env, ["printf '' > .gitignore && git add -A", 'git checkout HEAD~0 -- .gitignore && git add -A', 'git rm -q --cached .gitignore && git add -A', 'touch x && git add .'], 'another command first');
    // What the first of them stands against: git stages .env once the line has emptied .gitignore.
    execFileSync('bash', ['-c', "printf '' > .gitignore && git add -A"], { cwd: env.ws });
    expect(env.git('ls-files', '.env')).toBe('.env\n');
  });

  it('is as before where no repository is, and where no Read deny rule is', async () => {
    const bare = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY });
    fs.writeFileSync(path.join(bare.ws, '.env'), 'SECRET=hunter2\n');
    await expectAllowed(bare, ['git add .', 'git add -A', 'git commit -am x'], 'no repository');
    const open = ruleEnv({ allow: ['Bash(git:*)'] });
    gitIn(open.ws)('init', '-q');
    fs.writeFileSync(path.join(open.ws, '.env'), 'SECRET=hunter2\n');
    await expectAllowed(open, ['git add .', 'git add -A'], 'no deny rule');
  });

  it('what the checks stand on: git stages an untracked .env with -A, ., :/ and a directory, and leaves it with -u or an ignore line', () => {
    const dir = tmpDir('toolexec-staging-git-');
    const git = gitIn(dir);
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(dir, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(dir, '.env'), 'SECRET=hunter2\n');
    for (const args of [['-A'], ['.'], [':/'], ['-N', '.']]) {
      git('add', ...args);
      expect(git('ls-files', '.env'), args.join(' ')).toBe('.env\n');
      git('rm', '-q', '--cached', '.env');
    }
    git('add', '-u');
    git('commit', '-qam', 'x', '--allow-empty');
    expect(git('ls-files', '.env')).toBe('');
    for (const line of ['*.env', '.env*', '/.env', '.env  ']) {
      fs.writeFileSync(path.join(dir, '.gitignore'), `${line}\n`);
      git('add', '-A');
      expect(git('ls-files', '.env'), line).toBe('');
    }
  });
});

/**
 * `!` lines: any `!` line in an ignore file on the way made the denied file count as not ignored,
 * so the common `.env*` then `!.env.example` (keep the example, ignore the rest) asked on every `git
 * add -A` with an untracked .env, which git leaves out. A `!` line of the simple forms is now judged
 * as git judges it: the last matching line of a file decides, a deeper .gitignore before a shallower
 * one before info/exclude, and nothing in a directory left out comes back; with and without
 * core.ignorecase. Each case is checked against real git's `git add -A --dry-run`.
 */
describe('git add -A where the ignore files have ! lines', () => {
  /** The denied files the cases lay out (DENY covers .env at any depth). */
  const DENIED = ['.env', 'lib/.env', 'lib/conf/.env'];
  type Case = { files: Record<string, string>; denied?: string[]; stages: boolean; ignorecase?: true };

  async function judge(env: ReturnType<typeof project>, c: Case): Promise<void> {
    const why = JSON.stringify(c.files);
    const laid = ['.gitignore', 'lib/.gitignore', 'lib/conf/.gitignore', ...DENIED, '.env.example', 'lib/conf/.env.example'];
    for (const f of laid) fs.rmSync(path.join(env.ws, f), { force: true });
    fs.writeFileSync(path.join(env.ws, '.git', 'info', 'exclude'), '');
    for (const f of [...(c.denied ?? ['.env']), '.env.example', 'lib/conf/.env.example']) fs.writeFileSync(path.join(env.ws, f), 'KEY=1\n');
    for (const [f, text] of Object.entries(c.files)) fs.writeFileSync(path.join(env.ws, f), text);
    // What git stages, with core.ignorecase as the case says (a checker knows neither: it judges both ways).
    const dry = env.git(...(c.ignorecase ? ['-c', 'core.ignorecase=true'] : []), 'add', '-A', '--dry-run');
    const staged = dry.split('\n').filter((l) => DENIED.some((d) => l === `add '${d}'`));
    expect(staged.length > 0, `${why}: git add -A --dry-run said\n${dry}`).toBe(c.stages);
    if (c.stages) await expectAsk(env, ['git add -A', 'git add .'], why);
    else await expectAllowed(env, ['git add -A', 'git add .'], why);
  }

  it('lets git add -A through where a simple ! line takes back only other names', async () => {
    const env = project();
    fs.mkdirSync(path.join(env.ws, 'lib', 'conf'));
    const cases: Case[] = [
      { files: { '.gitignore': '.env*\n!.env.example\n' }, stages: false },
      { files: { '.gitignore': '.env*\n!.env.example\n' }, denied: DENIED, stages: false },
      { files: { '.gitignore': '# env\r\n.env*  \r\n!/.env.example \r\n!*.example\n!**/.env.example\n!docs/\n' }, denied: DENIED, stages: false },
      { files: { '.gitignore': '!.env\n.env\n' }, stages: false },
      // info/exclude is read after every .gitignore: what none of them matches, it decides.
      { files: { '.gitignore': '!.env.example\n', '.git/info/exclude': '.env*\n' }, stages: false },
      // A directory left out: no ! line (nor a .gitignore in it) takes a file in it back.
      { files: { '.gitignore': 'conf/\n!.env\n' }, denied: ['lib/conf/.env'], stages: false },
      { files: { '.gitignore': '*\n!.env.example\n!.env\n' }, denied: ['lib/.env', 'lib/conf/.env'], stages: false },
      { files: { '.gitignore': 'lib/\n', 'lib/.gitignore': '!.env\n!*/\n' }, denied: ['lib/.env', 'lib/conf/.env'], stages: false },
      // git ends lines at \n only: '.env*\r!.env' is one line, no ! line.
      { files: { '.gitignore': '.env\n.env*\r!.env\n' }, stages: false },
      // An escaped ! is a name, not a ! line.
      { files: { '.gitignore': '.env\n\\!.env\n' }, stages: false },
    ];
    for (const c of cases) await judge(env, c);
    // git enters the directory left out for a file tracked in it, and still takes no file in it back.
    fs.writeFileSync(path.join(env.ws, 'lib', 'conf', 'x.ts'), 'x\n');
    env.git('add', '-f', 'lib/conf/x.ts');
    await judge(env, { files: { '.gitignore': 'conf/\n!.env\n!x.ts\n' }, denied: ['lib/conf/.env'], stages: false });
  });

  it('asks where a ! line takes the denied file back, or may, as git reads it', async () => {
    const env = project();
    fs.mkdirSync(path.join(env.ws, 'lib', 'conf'));
    const cases: Case[] = [
      { files: { '.gitignore': '.env*\n!.env\n' }, stages: true },
      { files: { '.gitignore': '.env*\n!.env  \r\n' }, stages: true },
      { files: { '.gitignore': '*\n!.env\n' }, stages: true },
      { files: { '.gitignore': '*\n!*/\n!.env\n' }, denied: ['lib/conf/.env'], stages: true },
      { files: { '.gitignore': '.env\n!.en*\n' }, stages: true },
      { files: { '.gitignore': '.env\n!**/.env\n' }, denied: ['lib/conf/.env'], stages: true },
      { files: { '.gitignore': '/.env\n!/.env\n' }, stages: true },
      { files: { '.gitignore': 'conf/\n!conf/\n' }, denied: ['lib/conf/.env'], stages: true },
      // A deeper .gitignore is read before a shallower one, and any .gitignore before info/exclude.
      { files: { '.gitignore': '.env*\n', 'lib/.gitignore': '!.env\n' }, denied: ['lib/conf/.env'], stages: true },
      { files: { '.gitignore': '!.env\n', '.git/info/exclude': '.env\n' }, stages: true },
      // With core.ignorecase git matches !.ENV to .env; whether it is set is not known here.
      { files: { '.gitignore': '.env*\n!.ENV\n' }, stages: true, ignorecase: true },
      // ! lines of other forms: git takes .env back, the check cannot tell that it does.
      { files: { '.gitignore': '.env\n!.e?v\n' }, stages: true },
      { files: { '.gitignore': '.env\n!\\.env\n' }, stages: true },
      { files: { '.gitignore': '.env\n!lib/conf/.env\n' }, denied: ['lib/conf/.env'], stages: true },
      { files: { '.gitignore': '.env\n!.e[n]v\n' }, stages: true },
    ];
    for (const c of cases) await judge(env, c);
    // What git does not take back, the check still asks for where the ! line is of another form.
    fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n!x?\n');
    expect(env.git('add', '-A', '--dry-run')).not.toContain("'.env'");
    await expectAsk(env, ['git add -A'], '!x?');
  });
});

/**
 * `git stage` is git's other name for `git add`, and was judged as neither: with Read(./.env) denied
 * under Bash(git:*), `git stage .env && git commit -qm y && git push -q OUT HEAD:main` was allowed and
 * `git --git-dir=OUT show main:.env` printed the secret. Its operands are now reads, and its -f and
 * -A as add's.
 */
describe('git stage', () => {
  it('is judged as git add', async () => {
    for (const mode of MODES) {
      const env = project(mode);
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      for (const c of ['git stage .env', 'git stage -- .env', 'git -C src stage ../.env']) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule' });
      await expectAsk(env, ['git stage -A', 'git stage .'], mode);
      fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
      expect(await env.check('git stage -f .'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git add -f stores ignored files/) });
      await expectAllowed(env, ['git stage -A', 'git stage src/a.ts'], mode);
    }
  });

  it('does not send a denied file out (the real service runs git)', async () => {
    const out = path.join(tmpDir('toolexec-stage-out-'), 'out.git');
    execFileSync('git', ['init', '-q', '--bare', out]);
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: DENY } });
    const git = gitIn(t.workspace);
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const r = await run(t, 'Bash', { command: `git stage .env && git -c user.name=t -c user.email=t@e commit -qm y && git push -q ${out} HEAD:main` });
    expect(r.exec.status, r.text).toBe('denied');
    expect(git('ls-files')).toBe('');
    expect(() => execFileSync('git', ['--git-dir', out, 'show', 'main:.env'], { stdio: 'pipe' })).toThrow();
  });
});
