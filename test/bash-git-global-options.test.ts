/**
 * Holes where a check of git's global options read them otherwise than git
 * does, each found by running git itself beside the permission check. Real
 * rule indexes, real repositories and, where it shows, the real service
 * running git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { bashServiceTests, BYPASS, plantRepository as plant, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

const GIT_ID = ['-c', 'user.name=a', '-c', 'user.email=a@b'];

/** A repository holding a committed .env, with a repository in sub/ whose remote URL holds a token. */
function repos(ws: string): void {
  execFileSync('git', ['init', '-q', ws]);
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  execFileSync('git', [...GIT_ID, 'add', '.env'], { cwd: ws });
  execFileSync('git', [...GIT_ID, 'commit', '-q', '-m', 'x'], { cwd: ws });
  fs.mkdirSync(path.join(ws, 'sub'));
  execFileSync('git', ['init', '-q', path.join(ws, 'sub')]);
  execFileSync('git', ['-C', path.join(ws, 'sub'), 'config', 'remote.origin.url', 'https://tok-hunter2@example.com/x']);
}

/** The workspace itself laid out as a bare repository (HEAD, objects, refs) whose config has an alias `leak` running `alias`. */
function bareLayout(ws: string, alias: string): void {
  fs.mkdirSync(path.join(ws, 'objects'));
  fs.mkdirSync(path.join(ws, 'refs'));
  fs.writeFileSync(path.join(ws, 'HEAD'), 'ref: refs/heads/master\n');
  fs.writeFileSync(path.join(ws, 'config'), `[alias]\n\tleak = ${alias}\n`);
}

/** The real service, with this configuration, in a workspace `setup` lays out, runs `command`: the call is denied and prints no secret. */
async function deniedUnprinted(config: ConfigInput, setup: (ws: string) => void, command: string): Promise<void> {
  const t = await openApp(config);
  setup(t.workspace);
  const r = await run(t, 'Bash', { command });
  expect(r.text).not.toContain('hunter2');
  expect(r.exec.status).toBe('denied');
}

describe('git --shallow-file takes the next word as its value', () => {
  // git's handle_options reads `--shallow-file FILE` (no `=` form): every walk took FILE for the
  // subcommand and stopped there, so nothing after it was seen.
  it('is not where the global options end, for any check', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Bash(git push:*)', 'Read(./.env)', 'Read(./sub/.git/config)'], mode });
      repos(env.ws);
      plant(env.ws);
      expect(await env.check('git --shallow-file x push origin'), mode).toMatchObject({ behavior: 'deny', detail: 'Bash(git push:*)' });
      expect(await env.check('git --shallow-file x show HEAD:.env'), mode).toMatchObject({ behavior: 'ask', type: 'safety' });
      expect(await env.check("git --shallow-file x -c core.fsmonitor='cat .env' status"), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git -c core\.fsmonitor/) });
      expect(await env.check('git --shallow-file x -C sub config -l'), mode).toMatchObject({ behavior: 'deny', detail: 'Read(./sub/.git/config)' });
      expect(await env.check('git --shallow-file x --git-dir=src/p --work-tree=. status'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of /) });
      expect(await env.check('git --shallow-file x mv .env y'), mode).toMatchObject({ behavior: 'deny', detail: 'Read(./.env)' });
      // Still allowed as before.
      expect(await env.check('git --shallow-file x status'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('git --shallow-file x -C sub remote -v does not print the token of a denied config', async () => {
    await deniedUnprinted({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./sub/.git/config)'] } }, repos, 'git --shallow-file x -C sub remote -v');
  });
});

describe('git resolves --git-dir and --work-tree from where the last -C leads', () => {
  // git sets GIT_DIR as written and changes directory for each -C in turn, then reads GIT_DIR:
  // `git --git-dir=.git -C sub config -l` prints sub/.git/config, which was judged as ./.git/config.
  it('judges the config of the repository git reads', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./sub/.git/config)'], mode });
      repos(env.ws);
      for (const c of ['git --git-dir=.git -C sub config -l', 'git --git-dir .git -C sub remote -v', 'git --git-dir=.git -C . -C sub config --get remote.origin.url']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', detail: 'Read(./sub/.git/config)' });
      }
      expect(await env.check('git -C sub --git-dir=../.git config -l'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('git --git-dir=.git -C sub remote -v does not print the token of a denied config', async () => {
    await deniedUnprinted({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./sub/.git/config)'] } }, repos, 'git --git-dir=.git -C sub remote -v');
  });
});

describe('git -C changes directory as chdir does, through symbolic links', () => {
  // `-C link/..` is the parent of where the link leads (chdir), not the directory holding the link
  // (which is what `cd link/..` means to bash): it was judged as the latter.
  it('finds the planted repository and the config behind a link', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)', 'Read(./sub/.git/config)'], mode });
      repos(env.ws);
      plant(env.ws);
      fs.symlinkSync('src/p/refs', path.join(env.ws, 'l'));
      fs.mkdirSync(path.join(env.ws, 'sub', 'deep'));
      fs.symlinkSync('sub/deep', path.join(env.ws, 'h'));
      expect(await env.check('git -C l/.. status'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of .*src\/p,/) });
      expect(await env.check('git -C l -C .. status'), mode).toMatchObject({ behavior: 'ask', type: 'safety' });
      expect(await env.check('git -C h/.. config -l'), mode).toMatchObject({ behavior: 'deny', detail: 'Read(./sub/.git/config)' });
      expect(await env.check('git -C h -C .. remote -v'), mode).toMatchObject({ behavior: 'deny', detail: 'Read(./sub/.git/config)' });
      // A link's own directory is where git runs without `..`.
      expect(await env.check('git -C src/.. status'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('resolves --git-dir and --work-tree through links as git does', async () => {
    // git makes GIT_DIR absolute with its real path: `--git-dir=h/../.git` is sub/.git when h leads to sub/deep.
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./sub/.git/config)'], mode });
      repos(env.ws);
      fs.mkdirSync(path.join(env.ws, 'sub', 'deep'));
      fs.symlinkSync('sub/deep', path.join(env.ws, 'h'));
      for (const c of ['git --git-dir=h/../.git config -l', 'git --git-dir h/../.git remote -v', 'git -C h --git-dir=../.git remote -v']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', detail: 'Read(./sub/.git/config)' });
      }
    }
  });

  it('looks for the repository from where a link leads, as git does', async () => {
    // git looks for its repository in the real directory and its real parents: `git -C l status`
    // (l a link to src/p/refs) obeyed src/p, `cd h && git remote -v` (h to sub/deep) read sub/.git/config.
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)', 'Read(./sub/.git/config)'], mode });
      repos(env.ws);
      plant(env.ws);
      fs.symlinkSync('src/p/refs', path.join(env.ws, 'l'));
      fs.mkdirSync(path.join(env.ws, 'sub', 'deep'));
      fs.symlinkSync('sub/deep', path.join(env.ws, 'h'));
      for (const c of ['git -C l status', 'cd l && git status']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of /) });
      }
      for (const c of ['git -C h config -l', 'git -C h remote -v', 'cd h && git remote -v']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', detail: 'Read(./sub/.git/config)' });
      }
    }
  });

  it('git -C link/.. does not run an alias of the planted repository behind the link', async () => {
    await deniedUnprinted({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } }, (ws) => {
      repos(ws);
      plant(ws);
      fs.writeFileSync(path.join(ws, 'src', 'p', 'config'), `[alias]\n\tleak = !cat ${path.join(ws, '.env')}\n`);
      fs.symlinkSync('src/p/refs', path.join(ws, 'l'));
    }, 'git -C l/.. leak');
  });
});

describe('git run in a workspace that is itself laid out as a repository', () => {
  // With no .git, git takes a directory holding HEAD, objects and refs for a repository (a bare
  // one) and obeys its config: files the Write tool writes in acceptEdits. Only a cd of the line
  // led to the check; plain `git leak` ran the alias under Bash(git:*) and in bypassPermissions.
  function plantRoot(ws: string): void {
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
    bareLayout(ws, `!cat ${path.join(ws, '.env')}`);
  }

  it('asks (safety) for git there, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)'], mode });
      plantRoot(env.ws);
      fs.mkdirSync(path.join(env.ws, 'src'));
      for (const c of ['git leak', 'git status', 'git -C src log', 'timeout 5 git leak']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of /) });
      }
    }
  });

  it('git leak does not run the alias under Bash(git:*)', async () => {
    await deniedUnprinted({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } }, plantRoot, 'git leak');
  });
});

describe('git started in another directory by a wrapper (env -C, sudo -D)', () => {
  // `env -C sub git config -l` reads sub's config and `env -C src/p git status` obeys a planted
  // repository, but the git checks looked from the shell's directory: in bypassPermissions both
  // ran (a denied config printed, a planted program run).
  it('judges git where the wrapper starts it', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(env:*)'], deny: ['Read(./.env)', 'Read(./sub/.git/config)'], mode });
      repos(env.ws);
      plant(env.ws);
      for (const c of ['env -C sub git config -l', 'env --chdir=sub git remote -v', 'sudo -D sub git config --get remote.origin.url', 'env -C src env -C ../sub git config -l', 'env -C sub/.. git -C sub remote -v']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', detail: 'Read(./sub/.git/config)' });
      }
      for (const c of ['env -C src/p git status', 'env --chdir src/p/refs git log', 'env -C src git -C p status']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of /) });
      }
      // Started where no word says: which repository git obeys is not known.
      for (const c of ['env -C "$D" git status', 'sudo -i git status', 'chroot /x git status', 'sudo -D sub -i git status']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git runs where no word of the line says/) });
      }
      // Where nothing is denied or planted, as before.
      expect(await env.check('env -C src git status'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('asks (safety) for git a wrapper starts in a directory another command of the line fills', async () => {
    // `tar xf a.tar && git -C p status` asked; `tar xf a.tar && env -C p git status` ran p's config.
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(tar:*)', 'Bash(env:*)'], deny: ['Read(./.env)'], mode });
      for (const c of ['tar xf a.tar && env -C p git status', 'unzip a.zip; sudo -D p git fetch']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of a directory another command/) });
      }
      expect(await env.check('tar xf a.tar && env -C . git status'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('env -C sub git remote -v does not print the token of a denied config in bypassPermissions', async () => {
    await deniedUnprinted({ permissions: { ...BYPASS, deny: ['Read(./sub/.git/config)'] } }, repos, 'env -C sub git remote -v');
  });
});

describe('the files a git command names, from where -C and --work-tree put them', () => {
  // git opens `-F .env`, `add .env`, `--output=F` from where -C leads (and takes pathspecs from the
  // work tree's top when it runs outside it), but they were resolved from the shell's directory:
  // with Read(/sub/.env) denied, `git -C sub commit -F .env` put sub/.env in a message `git log` prints.
  it('judges them there', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(/sub/.env)', 'Edit(/sub/out.txt)'], mode });
      repos(env.ws);
      fs.writeFileSync(path.join(env.ws, 'sub', '.env'), 'SUB=hunter2\n');
      for (const c of ['git -C sub commit --allow-empty -F .env', 'git -C sub add .env', 'git -C sub mv .env y', 'git -C src -C ../sub add .env', 'git --work-tree=sub add .env', 'git --git-dir=sub/.git --work-tree=sub add .env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', detail: 'Read(/sub/.env)' });
      }
      expect(await env.check('git -C sub log -1 --output=out.txt'), mode).toMatchObject({ behavior: 'deny', detail: 'Edit(/sub/out.txt)' });
      // The same names elsewhere, as before.
      for (const c of ['git add .env', 'git -C sub add README', 'git -C sub commit --allow-empty -F ../msg']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('git -C sub commit -F .env does not put a denied file in a commit message', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(/sub/.env)'] } });
    repos(t.workspace);
    fs.writeFileSync(path.join(t.workspace, 'sub', '.env'), 'SUB=hunter2\n');
    const r = await run(t, 'Bash', { command: 'git -C sub -c user.name=a -c user.email=a@b commit -q --allow-empty -F .env' });
    expect(r.exec.status).toBe('denied');
    const log = await run(t, 'Bash', { command: 'git -C sub log --format=%B 2>&1; true' });
    expect(log.text).not.toContain('hunter2');
  });
});

describe('git --bare takes the directory it stands in for the git directory', () => {
  // `--bare` sets GIT_DIR to where git is at that point (unless --git-dir did before): in a
  // workspace with a .git, `git --bare leak` obeyed a config, HEAD, objects and refs written
  // beside it as ordinary files, and ran its alias under Bash(git:*).
  it('asks (safety) for git --bare where that is no .git', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(tar:*)'], deny: ['Read(./.env)'], mode });
      repos(env.ws);
      bareLayout(env.ws, '!cat .env');
      for (const c of ['git --bare leak', 'git --bare -C sub leak', 'git -C sub --bare status']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of /) });
      }
      expect(await env.check('tar xf a.tar; git --bare status'), mode).toMatchObject({ behavior: 'ask', type: 'safety' });
      // --git-dir before it wins (git keeps a GIT_DIR already set).
      expect(await env.check('git --git-dir=.git --bare log -1'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('git --bare leak does not run the alias under Bash(git:*)', async () => {
    await deniedUnprinted({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } }, (ws) => {
      repos(ws);
      bareLayout(ws, '!cat .env');
    }, 'git --bare leak');
  });
});

describe('a command find -execdir runs, in the directory of each match', () => {
  // find -execdir (and -okdir) runs its command where each match is, but its names were resolved
  // from the shell's directory: with Read(/sub/.env) denied, `find sub -name README -execdir cat
  // .env \;` printed sub/.env in bypassPermissions, and git run so was judged from the workspace.
  it('takes its names for unknown locations, and git run so asks', async () => {
    const env = ruleEnv({ deny: ['Read(/sub/.env)', 'Read(./sub/.git/config)'], mode: BYPASS.defaultMode });
    repos(env.ws);
    fs.writeFileSync(path.join(env.ws, 'sub', '.env'), 'SUB=hunter2\n');
    fs.writeFileSync(path.join(env.ws, 'sub', 'README'), 'r\n');
    for (const c of ['find sub -maxdepth 1 -name README -execdir cat .env \\;', 'find sub -name README -okdir head .env \\;']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'unknown read target: .env' });
    }
    expect(await env.check('find sub -name config -execdir git remote -v \\;')).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git runs where no word of the line says/) });
    // -exec runs it here: ./.env is not denied.
    expect(await env.check('find sub -maxdepth 1 -name README -exec cat .env \\;')).toMatchObject({ behavior: 'passthrough' });
  });

  it('find -execdir cat .env does not print a denied file in bypassPermissions', async () => {
    await deniedUnprinted({ permissions: { ...BYPASS, deny: ['Read(/sub/.env)'] } }, (ws) => {
      repos(ws);
      fs.writeFileSync(path.join(ws, 'sub', '.env'), 'SUB=hunter2\n');
      fs.writeFileSync(path.join(ws, 'sub', 'README'), 'r\n');
    }, 'find sub -maxdepth 1 -name README -execdir cat .env \\;');
  });
});

describe('a glob or a tilde in a directory git is pointed at', () => {
  // `git -C su* remote -v` runs in sub once bash expands the glob, but the pattern was taken for a
  // directory named `su*`: a denied config printed, a planted repository (`-C sr?/p`) obeyed.
  it('is judged where it leads, or asks', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(env:*)'], deny: ['Read(./.env)', 'Read(./sub/.git/config)'], mode });
      repos(env.ws);
      plant(env.ws);
      for (const c of ['git -C su* remote -v', 'git -C s?b config -l', 'git --git-dir=s*/.git config -l', 'env -C su* git remote -v', 'git -C sr?/p status', 'git -C src/[p] status', 'git --git-dir=src/[p] status']) {
        expect((await env.check(c)).behavior, `${mode}: ${c}`).not.toBe('allow');
        expect(await env.check(c), `${mode}: ${c}`).not.toMatchObject({ behavior: 'passthrough' });
      }
      // A tilde is the home directory.
      expect(await env.check('git -C ~ status'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('git -C su* remote -v does not print the token of a denied config', async () => {
    await deniedUnprinted({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./sub/.git/config)'] } }, repos, 'git -C su* remote -v');
  });
});
