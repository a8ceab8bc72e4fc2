/**
 * An Edit deny rule on files below a directory, against commands that change
 * the directory's whole tree: `rm -rf src`, `mv src y`, `chmod -R`, `find src -delete`, `rm -rf`
 * of the workspace itself, an archive extracted or a tree copied into it. The
 * rule held against `rm src/deep/b.ts` but not against these, which acceptEdits
 * allowed and bypassPermissions ran. And a copy into a directory makes a name
 * neither word spells (`cp x/.env build/` makes build/.env). `git checkout
 * [REV] [--] PATH` and `git restore PATH` overwrite what they name; so do
 * compressors, sponge, dos2unix, `perl -i`, formatters told to write, ed,
 * patch, split, mkfifo, mktemp, and downloads saved by wget and curl. Real
 * workspaces, real git, and the real service.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

bashTests();

function layout(ws: string): void {
  fs.mkdirSync(path.join(ws, 'src', 'deep'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'deep', 'b.ts'), 'keep\n');
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'a\n');
  fs.mkdirSync(path.join(ws, 'build'));
  fs.mkdirSync(path.join(ws, 'x'));
  fs.writeFileSync(path.join(ws, 'x', 'c.ts'), 'c\n');
  fs.writeFileSync(path.join(ws, 'a.txt'), 't\n');
}

describe('a write of a directory below which an Edit deny rule denies files', () => {
  it('asks (safety) when the tree holds a denied file or a program fills it, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Edit(./src/deep/**)'], mode });
      layout(env.ws);
      for (const c of [
        'rm -rf src',
        'rm -r src/',
        `rm -rf ${env.ws}`,
        `rm -rf ../${path.basename(env.ws)}`,
        'mv src y',
        'chmod -R 000 src',
        'chown -R 0 .',
        'find src -delete',
        "find . -name '*.ts' -delete",
        // Into a tree where the rule may match: what lands there is not listed.
        'tar xf a.tar',
        'tar xf a.tar -C src',
        'unzip -o a.zip -d src',
        'cp -r x/. src',
        'rsync -a --delete x/ ./',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^write of a tree under an Edit deny rule/) });
      }
      expect(await env.check('rm src/deep/b.ts'), mode).toMatchObject({ behavior: 'deny', type: 'rule' });
      expect(await env.check('find src/deep -delete'), mode).toMatchObject({ behavior: 'deny', type: 'rule' });
      expect((await env.check('find build -delete')).behavior, mode).not.toBe('deny');
      expect(await env.check('find build -delete'), mode).not.toMatchObject({ type: 'safety' });
    }
  });

  it('leaves trees the rule does not reach, and writers that keep what lies below, as they were in acceptEdits', async () => {
    const env = ruleEnv({ deny: ['Edit(./src/deep/**)'], mode: 'acceptEdits' });
    layout(env.ws);
    for (const c of ['rm -rf build', 'rm -rf x', 'mkdir -p src', 'touch src', 'cp a.txt build/', 'mv a.txt build', 'cp -r x build', 'rm -rf src/a.ts']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
  });

  it('under a rule that matches at any depth, a tree is listed: only one holding the file asks', async () => {
    const env = ruleEnv({ deny: ['Edit(.env)'], mode: 'acceptEdits' });
    layout(env.ws);
    fs.writeFileSync(path.join(env.ws, 'src', '.env'), 'S=1\n');
    expect(await env.check('rm -rf src')).toMatchObject({ behavior: 'ask', type: 'safety' });
    expect(await env.check('rm -rf build')).toMatchObject({ behavior: 'allow' });
    expect(await env.check('rm -rf x')).toMatchObject({ behavior: 'allow' });
  });
});

describe('cp, mv, ln and install into a directory', () => {
  it('write DIR/NAME, NAME the source’s base name: an Edit deny rule on that name holds', async () => {
    for (const mode of ['acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Edit(.env)'], mode });
      layout(env.ws);
      fs.writeFileSync(path.join(env.ws, 'x', '.env'), 'S=1\n');
      for (const c of ['cp x/.env build/', 'cp x/.env build', 'cp -t build x/.env', 'install x/.env build', 'ln -s ../x/.env build/', 'cp x/.e* build']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule' });
      }
    }
  });

  it('a name the copy keeps (-T), or another name, is as before', async () => {
    const env = ruleEnv({ deny: ['Edit(.env)'], mode: 'acceptEdits' });
    layout(env.ws);
    fs.writeFileSync(path.join(env.ws, 'x', '.env.example'), 'S=\n');
    for (const c of ['cp x/.env.example build/', 'cp x/c.ts build', 'cp -T x/c.ts build/c.ts', 'mv x/c.ts build']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
  });
});

describe('end to end in bypassPermissions', () => {
  it('rm -rf src does not remove the files Edit(./src/deep/**) denies; cp x/.env build/ does not make build/.env', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(./src/deep/**)', 'Edit(.env)'] } });
    try {
      layout(t.workspace);
      fs.writeFileSync(path.join(t.workspace, 'x', '.env'), 'S=1\n');
      const r = await run(t, 'Bash', { command: 'rm -rf src' });
      expect(r.exec.status).toBe('denied');
      expect(fs.readFileSync(path.join(t.workspace, 'src', 'deep', 'b.ts'), 'utf8')).toBe('keep\n');
      const c = await run(t, 'Bash', { command: 'cp x/.env build/' });
      expect(c.exec.status).toBe('denied');
      expect(fs.existsSync(path.join(t.workspace, 'build', '.env'))).toBe(false);
      // What the rules do not reach still runs.
      const ok = await run(t, 'Bash', { command: 'rm -rf x/c.ts && cp a.txt build/ && ls build' });
      expect(ok.text).toContain('a.txt');
    } finally {
      await t.close();
    }
  });
});

describe('git checkout and git restore of paths', () => {
  it('write them: an Edit deny rule denies, in every mode; a tree holding a denied file asks', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Edit(./src/**)'], allow: ['Bash(git:*)'], mode });
      layout(env.ws);
      for (const c of [
        'git checkout -- src/a.ts',
        'git checkout src/a.ts',
        'git checkout other -- src/a.ts',
        'git checkout other src/a.ts',
        'git restore src/a.ts',
        'git restore --source=other src/a.ts',
        'git restore -s other -- src/a.ts',
        'git -C src checkout a.ts',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Edit(./src/**)' });
      }
      for (const c of ['git checkout .', 'git restore .', 'git checkout other -- .']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
    }
  });

  it('a branch made, or another path is as before under Bash(git:*); a branch switched to asks', async () => {
    const env = ruleEnv({ deny: ['Edit(./src/**)'], allow: ['Bash(git:*)'] });
    layout(env.ws);
    for (const c of ['git checkout -b feat', 'git restore a.txt', 'git checkout -- a.txt', 'git checkout other x/c.ts']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow', type: 'rule' });
    }
    // A whole work tree rewritten, where the rule reaches (here no repository tells where it lies): bash-git-tree-rewrite.test.ts.
    for (const c of ['git checkout main', 'git checkout -b feat src']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git rewrite of a work tree/) });
    }
  });

  it('end to end in bypassPermissions: git checkout other -- src/a.ts does not replace it', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(./src/**)'] } });
    try {
      layout(t.workspace);
      const git = (...a: string[]) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: t.workspace, stdio: 'pipe' });
      git('init', '-q', '-b', 'main');
      git('add', '-A');
      git('commit', '-qm', 'one');
      git('checkout', '-q', '-b', 'other');
      fs.writeFileSync(path.join(t.workspace, 'src', 'a.ts'), 'planted\n');
      git('commit', '-qam', 'two');
      git('checkout', '-q', 'main');
      expect(fs.readFileSync(path.join(t.workspace, 'src', 'a.ts'), 'utf8')).toBe('a\n');
      const r = await run(t, 'Bash', { command: 'git checkout other -- src/a.ts' });
      expect(r.exec.status).toBe('denied');
      expect(fs.readFileSync(path.join(t.workspace, 'src', 'a.ts'), 'utf8')).toBe('a\n');
      // What it rests on: git does write it.
      git('checkout', 'other', '--', 'src/a.ts');
      expect(fs.readFileSync(path.join(t.workspace, 'src', 'a.ts'), 'utf8')).toBe('planted\n');
    } finally {
      await t.close();
    }
  });
});

describe('programs without an option table that change the files they are given in place', () => {
  it('are judged as writes of them: an Edit deny rule denies, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Edit(./src/**)'], allow: ['Bash(gzip:*)', 'Bash(perl:*)', 'Bash(prettier:*)'], mode });
      layout(env.ws);
      for (const c of [
        'gzip src/a.ts',
        'gzip -k9 src/a.ts',
        'bzip2 src/a.ts',
        'xz src/a.ts',
        'zstd --rm src/a.ts',
        'sponge src/a.ts',
        'dos2unix src/a.ts',
        "perl -pi -e 's/a/b/' src/a.ts",
        "perl -i.bak -pe 's/a/b/' src/a.ts",
        "ruby -i -pe 'x' src/a.ts",
        'prettier --write src/a.ts',
        'eslint --fix src',
        'black src',
        'gofmt -w src/a.ts',
        'clang-format -i src/a.ts',
        'npx prettier --write src',
        'ed -s src/a.ts',
        'patch src/a.ts fix.patch',
        'split -b1 a.txt src/part',
        'csplit -f src/part a.txt 1',
        'mkfifo src/p',
        'mktemp src/XXXXXX',
        'mktemp -p src',
        'wget -O src/a.ts http://127.0.0.1:9/x',
        'wget -P src http://127.0.0.1:9/x',
        'cd src && wget http://127.0.0.1:9/a.ts',
        'curl -o src/a.ts http://127.0.0.1:9/x',
        'curl -O --output-dir src http://127.0.0.1:9/a.ts',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Edit(./src/**)' });
      }
    }
  });

  it('reading them, writing elsewhere or checking only is as before', async () => {
    const env = ruleEnv({ deny: ['Edit(./src/**)'], allow: ['Bash(gzip:*)', 'Bash(perl:*)', 'Bash(prettier:*)', 'Bash(black:*)', 'Bash(eslint:*)'] });
    layout(env.ws);
    for (const c of ['gzip -c src/a.ts', 'gzip -t x.gz', 'gzip a.txt', "perl -pe 's/a/b/' src/a.ts", "perl -i -pe 's/src/x/' a.txt", 'prettier --check src', 'black --check src', 'eslint src']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow', type: 'rule' });
    }
    // A patch names its files inside: an unknown write, which asks (safety) while Edit deny rules exist.
    for (const mode of ['acceptEdits', BYPASS.defaultMode] as const) {
      const m = ruleEnv({ deny: ['Edit(./src/**)'], mode });
      layout(m.ws);
      expect(await m.check('patch -p1 < fix.patch'), mode).toMatchObject({ behavior: 'ask', type: 'safety' });
      expect(await m.check('patch --dry-run -p1 < fix.patch'), mode).toMatchObject({ behavior: 'passthrough' });
      expect(await m.check('wget -q -O y http://127.0.0.1:9/x'), mode).toMatchObject({ behavior: 'passthrough' });
    }
  });

  it('end to end in bypassPermissions: gzip src/a.ts and perl -pi leave it as it was', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Edit(./src/**)'] } });
    try {
      layout(t.workspace);
      for (const command of ['gzip src/a.ts', "perl -pi -e 's/a/pwned/' src/a.ts"]) {
        const r = await run(t, 'Bash', { command });
        expect(r.exec.status, command).toBe('denied');
      }
      expect(fs.readFileSync(path.join(t.workspace, 'src', 'a.ts'), 'utf8')).toBe('a\n');
      expect(fs.existsSync(path.join(t.workspace, 'src', 'a.ts.gz'))).toBe(false);
      // What it rests on: both change the file in place.
      execFileSync('perl', ['-pi', '-e', 's/a/pwned/', 'a.txt'], { cwd: t.workspace });
      execFileSync('gzip', ['x/c.ts'], { cwd: t.workspace });
      expect(fs.existsSync(path.join(t.workspace, 'x', 'c.ts'))).toBe(false);
    } finally {
      await t.close();
    }
  });
});
