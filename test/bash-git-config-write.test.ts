/**
 * `git config NAME VALUE` writes .git/config (or ~/.gitconfig, or --file):
 * protected paths, where core.hooksPath, core.fsmonitor, core.pager or an
 * alias makes a later git command run a program. Such a change asks as an
 * edit of that file does, even in bypassPermissions and under Bash(git:*);
 * reading the configuration stays read-only. Real rule indexes and
 * workspaces, and the real service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { bashTests, BYPASS, ruleEnv, type RuleEnvOptions } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

bashTests();

function repo(opts: RuleEnvOptions) {
  const env = ruleEnv(opts);
  fs.mkdirSync(path.join(env.ws, '.git'));
  fs.writeFileSync(path.join(env.ws, '.git', 'config'), '[core]\n');
  fs.mkdirSync(path.join(env.ws, 'src'));
  return env;
}

describe('git config changes', () => {
  const changes: Array<[string, RegExp]> = [
    ['git config core.hooksPath /tmp/h', /^\.git\//],
    ['git config core.fsmonitor "touch /tmp/pwned"', /^\.git\//],
    ['git config set core.pager evil', /^\.git\//],
    ["git config --add alias.st '!sh -c evil'", /^\.git\//],
    ['git config --replace-all core.sshCommand evil', /^\.git\//],
    ['git config --unset core.pager', /^\.git\//],
    ['git config -e', /^\.git\//],
    ['git --no-pager config --local diff.external evil', /^\.git\//],
    ['git -C src config core.pager evil', /^\.git\//],
    ['cd src && git config core.pager evil', /^\.git\//],
    ['git config --global core.pager evil', /^\.gitconfig/],
    ['git config --file .gitmodules submodule.x.update "!evil"', /^\.gitmodules/],
  ];

  it('ask as protected writes in bypassPermissions, acceptEdits and under Bash(git:*)', async () => {
    const cases: RuleEnvOptions[] = [{ mode: BYPASS.defaultMode }, { mode: 'acceptEdits', allow: ['Bash(git:*)'] }];
    for (const opts of cases) {
      const env = repo(opts);
      for (const [c, why] of changes) expect(await env.check(c), `${opts.mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(why) });
    }
  });

  it('leave reading the configuration as it was', async () => {
    const env = repo({ allow: ['Bash(git:*)'] });
    for (const c of ['git config --get user.name', 'git config -l', 'git config --list --show-origin', 'git config user.name', 'git config get user.name', 'git status']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
    expect(await repo({}).check('git config --get user.email')).toMatchObject({ behavior: 'allow', type: 'tool' });
  });

  it('setting a key that runs nothing (user.email, init.defaultBranch) is as before: allowed under Bash(git:*) and in bypassPermissions', async () => {
    const inert = [
      "git config user.name 'A B'",
      'git config user.email a@b.c',
      'git config --global user.email a@b.c',
      'git config --global init.defaultBranch main',
      'git config pull.rebase false',
      'git config --local core.autocrlf input',
      'git config set User.Email a@b.c',
      'git config --unset user.email',
      'git config user.email "$GIT_EMAIL"',
    ];
    for (const opts of [{ allow: ['Bash(git:*)'] }, { mode: BYPASS.defaultMode }] as RuleEnvOptions[]) {
      const env = repo(opts);
      // bypassPermissions: no ask from the check (passthrough), which the mode allows.
      for (const c of inert) expect(['allow', 'passthrough'], `${opts.mode ?? 'default'}: ${c}`).toContain((await env.check(c)).behavior);
    }
  });

  it('a key that runs nothing, in a form that may change more, still asks', async () => {
    const env = repo({ allow: ['Bash(git:*)'] });
    for (const c of [
      'git config --file .claude/settings.json user.name x',
      'git config -f .gitmodules user.name x',
      'git config --rename-section user core',
      'git config user.name.x y',
      'git config user.email $X',
      'git config $KEY a@b.c',
      'git config user.email "a"$X"b"',
      'git config user.email "a\\"$X"b"',
      'git config user.sshCommand evil',
    ]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    // git writes through a symlink: .git/config leading to a protected file is a write of that file, whatever the key.
    const linked = repo({ allow: ['Bash(git:*)'] });
    fs.mkdirSync(path.join(linked.ws, '.claude'));
    fs.writeFileSync(path.join(linked.ws, '.claude', 'settings.json'), '');
    fs.rmSync(path.join(linked.ws, '.git', 'config'));
    fs.symlinkSync('../.claude/settings.json', path.join(linked.ws, '.git', 'config'));
    expect(await linked.check('git config user.email a@b.c')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('do not change .git/config in bypassPermissions', async () => {
    const t = await makeApp({ permissions: { ...BYPASS } });
    try {
      fs.mkdirSync(path.join(t.workspace, '.git'));
      fs.writeFileSync(path.join(t.workspace, '.git', 'config'), '[core]\n\tbare = false\n');
      const r = await run(t, 'Bash', { command: 'git config core.fsmonitor "touch pwned"' });
      expect(r.exec.status).toBe('denied');
      expect(fs.readFileSync(path.join(t.workspace, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');
    } finally {
      await t.close();
    }
  });
});
