/**
 * Variables whose value a program runs as a command: with Read(./.env) denied,
 * `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='cat
 * .env >&2' git status` (the `git -c` check's key, passed through the
 * environment), `GIT_SSH_COMMAND='cat .env' git fetch`, `GIT_EDITOR=… git
 * commit` or `LD_PRELOAD=./x.so ls` ran in bypassPermissions and printed .env
 * (or ran anything): no argument names the file, and
 * only bash's own code variables (BASH_ENV, PS4, …) were looked at. Giving one
 * of them a value is now too complex to check: a safety ask while deny rules
 * exist, as it was asked in other modes anyway (an assignment before a command
 * is matched by no prefix rule). A pager or editor that runs nothing
 * (`GIT_EDITOR=true`, `GIT_PAGER=cat`) and other variables (`NODE_ENV=test`)
 * are as before. Real rule indexes, and bash and git run for real.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { initBashParser } from '../src/bash/parser.js';
import { BYPASS, ruleEnv } from './helpers-bash.js';

beforeAll(async () => {
  await initBashParser();
});

describe('variables a program runs as a command', () => {
  const runs = [
    "GIT_PAGER='cat .env' git -p log",
    "PAGER='cat .env' git -p log",
    "env GIT_SSH_COMMAND='cat .env' git fetch",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='cat .env >&2' git status",
    "GIT_EDITOR='cat .env >&2; true' git commit --allow-empty",
    "GIT_EXTERNAL_DIFF=./d.sh git log -p --ext-diff",
    "GIT_DIR=src/p git status",
    'LD_PRELOAD=./x.so ls',
    "NODE_OPTIONS='--require ./x.js' npm test",
    'export GIT_PAGER=./pager.sh; git -p log',
    // git reads $XDG_CONFIG_HOME/git/config and $HOME/.config/git/config (ordinary files the Write tool writes) and obeys their aliases.
    'XDG_CONFIG_HOME=cfg git leak',
    'HOME=h git leak',
    'env XDG_CONFIG_HOME=cfg git status',
    // Their own configuration files, which the Write tool writes, name files to upload or programs to run.
    'CURL_HOME=h curl -s http://127.0.0.1:1/',
    'WGETRC=h/rc wget -q http://127.0.0.1:1/',
    'KUBECONFIG=h/kc kubectl get pods',
    'DOCKER_CONFIG=h docker pull alpine',
    'AWS_CONFIG_FILE=h/aws aws s3 ls',
  ];

  it('are a safety ask while deny rules exist, in bypassPermissions too', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(git:*)'], mode: BYPASS.defaultMode });
    for (const c of runs) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/too complex: \w+ is given a value, which a program/) });
    }
  });

  it('a pager or editor that runs nothing, and other variables, are as before', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    for (const c of ['GIT_EDITOR=true git rebase --continue', 'GIT_PAGER=cat git log', "GIT_PAGER='less -R' git log", 'NODE_ENV=test npm test', 'CI=1 git status']) {
      // passthrough: no rule decides, and bypassPermissions then allows it.
      expect(['allow', 'passthrough'], c).toContain((await env.check(c)).behavior);
    }
    // Without deny rules it is an ordinary ask, which bypassPermissions lets through, as any command it cannot check.
    const open = ruleEnv({ mode: BYPASS.defaultMode });
    expect(await open.check("GIT_SSH_COMMAND='ssh -v' git fetch")).toMatchObject({ behavior: 'ask', type: 'tool' });
  });

  it('HOME or XDG_CONFIG_HOME before a program that runs the project\'s own code is no reason to ask', async () => {
    // npm runs package.json's scripts (and obeys the project's .npmrc), pytest conftest.py, make the Makefile:
    // a user configuration the line points them at gives them nothing they lack.
    const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(git:*)', 'Bash(npm run:*)'], mode: BYPASS.defaultMode });
    for (const c of [
      'HOME=/tmp npm test',
      'HOME=/tmp/h npm run build',
      'XDG_CONFIG_HOME=/tmp/cfg npx prettier --check src',
      'HOME=$PWD/.home pytest -q',
      'HOME=/tmp make test',
      'HOME=/tmp ./node_modules/.bin/vitest run',
      'HOME=/tmp npm test && git status',
    ]) {
      expect(['allow', 'passthrough'], c).toContain((await env.check(c)).behavior);
    }
    // Before git, curl, less or anything else, through a wrapper or a shell, on a line that defines a
    // function (which may take npm's name), or for the rest of the line, it asks as before.
    for (const c of [
      'HOME=h curl -s',
      'HOME=h less README.md',
      'HOME=h ls',
      'HOME=h npm test $(HOME=h git leak)',
      'HOME=h env git leak',
      'HOME=h sudo npm test',
      'HOME=h bash -c "git leak"',
      'env HOME=h npm test',
      'npm() { git leak; }; HOME=h npm',
      'export HOME=h; npm test',
      'HOME=h; npm test',
    ]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^too complex: /) });
    }
  });

  it('NODE_OPTIONS holding only flags that load and read nothing is no reason to ask; any other flag asks', async () => {
    // Heap sizes and warnings were a safety ask as any NODE_OPTIONS value: `NODE_OPTIONS=--max-old-space-size=4096 npm test` asked.
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    for (const c of [
      'NODE_OPTIONS=--max-old-space-size=4096 npm test',
      'NODE_OPTIONS="--max-old-space-size=4096 --trace-warnings" node x.js',
      'env NODE_OPTIONS=--max-old-space-size=8192 npx vitest run',
      'export NODE_OPTIONS="--enable-source-maps --unhandled-rejections=strict"; npm test',
      'NODE_OPTIONS= npm test',
    ]) {
      expect(['allow', 'passthrough'], c).toContain((await env.check(c)).behavior);
    }
    // A flag that runs code (--require, -r, --import, loaders), reads a file (--env-file), opens a port
    // (--inspect), writes one (--redirect-warnings), or a value node would unquote or bash would expand, asks.
    for (const c of [
      'NODE_OPTIONS=--require=./evil.js npm test',
      "NODE_OPTIONS='--max-old-space-size=4096 -r ./evil.js' npm test",
      'NODE_OPTIONS=--import=./evil.mjs npm test',
      'NODE_OPTIONS=--loader=./l.mjs npm test',
      'NODE_OPTIONS=--experimental-loader=./l.mjs npm test',
      'NODE_OPTIONS=--env-file=.env npm test',
      'NODE_OPTIONS=--inspect=0.0.0.0:9229 npm test',
      'NODE_OPTIONS=--inspect-brk npm test',
      'NODE_OPTIONS=--redirect-warnings=out.txt npm test',
      'NODE_OPTIONS=--openssl-legacy-provider npm test',
      'NODE_OPTIONS="--max-old-space-size=4096 \\"--require\\" ./evil.js" npm test',
      'NODE_OPTIONS="--max-old-space-size=4096\t--require=./evil.js" npm test',
      'NODE_OPTIONS=--max-old-space-size=$N npm test',
      'NODE_OPTIONS=$OPTS npm test',
      'export NODE_OPTIONS="--trace-warnings --require ./evil.js"; npm test',
    ]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/too complex: NODE_OPTIONS is given a value/) });
    }
  });

  it('what the NODE_OPTIONS check stands against: node runs a --require given there, and not a heap size', () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'toolexec-nodeopts-'));
    try {
      fs.writeFileSync(path.join(dir, 'evil.js'), 'console.log("EVIL RAN")\n');
      const run = (opts: string) => spawnSync(process.execPath, ['-e', 'console.log("main")'], { cwd: dir, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: opts } }).stdout;
      expect(run('--require ./evil.js')).toContain('EVIL RAN');
      expect(run('--max-old-space-size=4096 --trace-warnings')).toBe('main\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('what the check stands against: git obeys configuration given through the environment', () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'toolexec-pager-'));
    try {
      fs.writeFileSync(path.join(dir, '.env'), 'SECRET=hunter2\n');
      const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, encoding: 'utf8' });
      git('init', '-q');
      git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'm');
      const r = spawnSync('bash', ['-c', "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='cat .env >&2; false' git status"], {
        cwd: dir,
        encoding: 'utf8',
      });
      expect(r.stderr).toContain('SECRET=hunter2');
      fs.mkdirSync(path.join(dir, 'cfg', 'git'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'cfg', 'git', 'config'), '[alias]\n\tleak = !cat .env\n');
      fs.mkdirSync(path.join(dir, 'h', '.config', 'git'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'h', '.config', 'git', 'config'), '[alias]\n\tleak = !cat .env\n');
      for (const c of ['XDG_CONFIG_HOME=cfg git leak', 'HOME=h git leak']) {
        expect(spawnSync('bash', ['-c', c], { cwd: dir, encoding: 'utf8' }).stdout, c).toContain('SECRET=hunter2');
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
