/**
 * git obeys a configuration given on its command line (`git -c KEY=VALUE`,
 * `--config-env=KEY=VAR`) for that very command: `git -c
 * core.fsmonitor='cat .env >&2' status` runs the program, `git -c
 * alias.x='!sh' x` a shell. Under Bash(git:*) (in any mode) or in
 * bypassPermissions, these ran without asking and printed .env with
 * Read(./.env) denied. A key not known to be harmless is now a safety ask;
 * `git -c color.ui=always`, `-c user.name=…` are as before. So does
 * `git --exec-path=DIR foo`, which runs DIR/git-foo. Real rule
 * indexes, a real repository and the real service running git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('git -c on the command line', () => {
  it('asks (safety) for a key that can run a program or read a file, under Bash(git:*) and in bypassPermissions', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)'], mode });
      for (const c of [
        "git -c core.fsmonitor='cat .env >&2' status",
        "git -c alias.x='!cat .env' x",
        'git -c alias.st=status st',
        'git --config-env=core.sshCommand=CMD fetch origin',
        'git --config-env core.fsmonitor=CMD status',
        'git -C . -c core.hooksPath=h commit --allow-empty -m x',
        'git -c include.path=../x.cfg status',
        'git -c commit.template=.env commit --allow-empty',
        'git -c $K status',
        'timeout 5 git -c core.FSMonitor=x status',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git -c /) });
      }
      // git runs bin/git-foo (a script the agent may have written) for `git foo`.
      expect(await env.check('git --exec-path=bin foo'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git --exec-path=DIR/) });
      for (const c of ['git -c color.ui=always log --oneline', 'git -c user.name=a -c user.email=b commit --allow-empty -m x', 'git status']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('lets hooks turned off and a plain pager through, and nothing like them', async () => {
    // `-c core.hooksPath=/dev/null` (skip hooks for one commit) and `-c core.pager=cat` asked under
    // Bash(git:*) and in bypassPermissions since the key can name a program or a directory of them.
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)'], mode });
      for (const c of ['git -c core.hooksPath=/dev/null commit -m m', 'git -c core.pager=cat log', "git -c 'core.pager=less -R' log", 'git -c pager.log=false log']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
      for (const c of [
        'git -c core.hooksPath=/dev/nullx commit -m m',
        'git -c core.hooksPath commit -m m',
        'git -c core.hooksPath=h commit -m m',
        "git -c core.pager='cat .env' log",
        "git -c 'core.pager=less; cat .env' log",
        'git -c pager.log=sh log',
        // The value of --config-env is the name of an environment variable: `cat` may hold anything.
        'git --config-env=core.pager=cat log',
        'git --config-env core.hooksPath=/dev/null commit -m m',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git -c /) });
      }
    }
  });

  it('git -c core.hooksPath=/dev/null commit runs under Bash(git:*) and skips the repository\'s hook', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } });
    const ws = t.workspace;
    execFileSync('git', ['init', '-q', ws]);
    fs.writeFileSync(path.join(ws, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\necho HOOK-RAN\nexit 1\n', { mode: 0o755 });
    const r = await run(t, 'Bash', { command: 'git -c core.hooksPath=/dev/null -c user.name=a -c user.email=a@b commit --allow-empty -q -m no-hook-ran && git log --format=%s' });
    expect(r.exec.status).toBe('succeeded');
    expect(r.text).not.toContain('HOOK-RAN');
    expect(r.text).toContain('no-hook-ran');
  });

  it('git -c core.fsmonitor=… status does not run under Bash(git:*)', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } });
    execFileSync('git', ['init', '-q', t.workspace]);
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const r = await run(t, 'Bash', { command: "git -c core.fsmonitor='cat .env; echo' status" });
    expect(r.text).not.toContain('hunter2');
    // The safety ask, with no one to ask (headless), is a deny.
    expect(r.exec.status).toBe('denied');
    expect(r.chain.some((s) => /git -c core\.fsmonitor/.test(s.detail))).toBe(true);
  });
});
