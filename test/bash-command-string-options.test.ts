/**
 * Programs that are no wrappers but run a command given in an option: tar's
 * `--to-command`, `-I`, `-F`, `--checkpoint-action=exec=`; rsync's `-e`; ssh's
 * `-o ProxyCommand=`; scp's and sftp's `-S` (sftp's `-D`); zip's `-TT`; man's
 * `-P`; sort's `--compress-program`, and the variables that give them options
 * (TAR_OPTIONS, RSYNC_RSH, …). `tar --to-command='rm -rf x' -xf a.tar` ran rm
 * past `Bash(rm:*)` in bypassPermissions. Real tar, ssh and zip show what
 * each option runs; the real service refuses them.
 *
 * And programs that run a command line they are given but are not modelled
 * as wrappers (`eatmydata`, `prlimit`, `setarch`, `uv run`, `npm exec`,
 * `tmux new`): every word that may start the command is searched by the deny
 * rules, and what they allow is as before.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp, tmpDir } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

bashTests();

const RUN_RM = [
  "tar --to-command='rm -rf x' -xf a.tar",
  "tar --to-com='rm -rf x' -xf a.tar",
  "tar -I 'rm -rf x' -cf a.tar m",
  "tar -cI'rm -rf x' -f a.tar m",
  "tar cIf 'rm -rf x' a.tar m",
  "tar --use-compress-program='rm -rf x' -cf a.tar m",
  "tar -F 'rm -rf x' -cf a.tar m",
  "tar --info-script='rm -rf x' -cf a.tar m",
  "tar --checkpoint=1 --checkpoint-action=exec='rm -rf x' -cf a.tar m",
  "tar --rsh-command='rm -rf x' -cf h:a.tar m",
  "gtar --to-command='rm -rf x' -xf a.tar",
  "rsync -e 'rm -rf x' a h:b",
  "rsync -avze 'rm -rf x' a h:b",
  "rsync --rsh='rm -rf x' a h:b",
  "ssh -o ProxyCommand='rm -rf x' h",
  "ssh -oProxyCommand='rm -rf x' h",
  "ssh -o 'proxycommand rm -rf x' h",
  "ssh -v -o LocalCommand='rm -rf x' h",
  "scp -S rm m h:",
  "scp -o ProxyCommand='rm -rf x' m h:",
  "sftp -D rm h",
  "zip -TT 'rm -rf x' -T a.zip m",
  "zip --unzip-command='rm -rf x' -T a.zip m",
  "man -P 'rm -rf x' ls",
  "man --pager='rm -rf x' ls",
  'sort --compress-program=rm m',
  "timeout 5 tar --to-command='rm -rf x' -xf a.tar",
];

describe('options that run a command given on the line', () => {
  it('are analysed as scripts: Bash(rm:*) denies what they run, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Bash(rm:*)'], allow: ['Bash(tar:*)', 'Bash(ssh:*)'], mode });
      for (const c of RUN_RM) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Bash(rm:*)' });
    }
  });

  it('ask (safety) where the command is not spelt out: an expansion, a variable giving options, PermitLocalCommand', async () => {
    const env = ruleEnv({ deny: ['Bash(rm:*)'], mode: BYPASS.defaultMode });
    for (const c of [
      "x='--to-command=rm -rf y'; tar xf a.tar $x",
      'tar xf a.tar "$opt"',
      'ssh -o "$o" h',
      'rsync -e "$RSH" a h:b',
      'ssh -o PermitLocalCommand=yes h',
      "TAR_OPTIONS='--to-command=rm -rf x' tar xf a.tar",
      "export TAR_OPTIONS='--to-command=rm -rf x'; tar xf a.tar",
      "RSYNC_RSH='rm -rf x' rsync a h:b",
      "env MANOPT='-P ./pager.sh' man ls",
      "ZIPOPT='-TT ./t.sh' zip -T a.zip m",
    ]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
  });

  it('everyday uses are as before, and what they run meets the allow rules', async () => {
    const env = ruleEnv({ deny: ['Bash(rm:*)'], allow: ['Bash(tar:*)', 'Bash(ssh:*)', 'Bash(man:*)', 'Bash(sort:*)', 'Bash(rsync:*)'] });
    for (const c of [
      'tar czf a.tar.gz m',
      'tar -xzf a.tar.gz -C build',
      'tar --checkpoint=1 --checkpoint-action=dot -cf a.tar m',
      "tar --to-command='cat' -xf a.tar",
      'tar xf a.tar ./m',
      'ssh -v -o ConnectTimeout=5 -o BatchMode=yes h ls',
      'ssh -lroot h',
      'man ls',
      'man -H ls',
      'sort -o y m',
      'rsync -avz a/ b/',
      'rsync -avze ssh a h:b',
    ]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow', type: 'rule' });
    }
    // What the option runs is a command of its own: allowed only when a rule or read-only-ness allows it.
    expect(await env.check("tar --to-command='python3 x.py' -xf a.tar")).toMatchObject({ behavior: 'passthrough' });
  });

  it('what it rests on: tar, ssh and zip run the command they are given', () => {
    const d = tmpDir('toolexec-command-strings-');
    fs.writeFileSync(path.join(d, 'm'), 'a\n');
    execFileSync('tar', ['cf', 'a.tar', 'm'], { cwd: d });
    execFileSync('tar', ['--to-command=touch ran-tar', '-xf', 'a.tar'], { cwd: d });
    expect(fs.existsSync(path.join(d, 'ran-tar'))).toBe(true);
    spawnSync('ssh', ['-o', 'ProxyCommand=touch ran-ssh', '-o', 'BatchMode=yes', 'nohost', 'true'], { cwd: d, timeout: 10_000 });
    expect(fs.existsSync(path.join(d, 'ran-ssh'))).toBe(true);
    spawnSync('zip', ['-q', 'b.zip', 'm', '-T', '-TT', 'touch ran-zip'], { cwd: d, timeout: 10_000 });
    expect(fs.existsSync(path.join(d, 'ran-zip'))).toBe(true);
  });

  it("end to end in bypassPermissions: tar --to-command='rm -f victim' does not remove it under Bash(rm:*)", async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Bash(rm:*)'] } });
    try {
      fs.writeFileSync(path.join(t.workspace, 'victim'), 'v\n');
      fs.writeFileSync(path.join(t.workspace, 'm'), 'a\n');
      execFileSync('tar', ['cf', 'a.tar', 'm'], { cwd: t.workspace });
      const r = await run(t, 'Bash', { command: "tar --to-command='rm -f victim' -xf a.tar" });
      expect(r.exec.status).toBe('denied');
      expect(fs.existsSync(path.join(t.workspace, 'victim'))).toBe(true);
      const ok = await run(t, 'Bash', { command: 'tar tf a.tar' });
      expect(ok.text).toContain('m');
    } finally {
      await t.close();
    }
  });
});

describe('programs that run a command line they are given', () => {
  it('do not carry a denied command past the deny rules, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Bash(rm:*)', 'Read(./.env)', 'Edit(./src/**)'], allow: ['Bash(prlimit:*)', 'Bash(uv run:*)', 'Bash(npm exec:*)'], mode });
      for (const c of [
        'eatmydata rm -rf x',
        'xvfb-run -a rm -rf x',
        'numactl -N 0 rm -rf x',
        "faketime '2020-01-01' rm -rf x",
        'prlimit --nofile=100 rm -rf x',
        'setarch x86_64 -R rm -rf x',
        'linux64 rm -rf x',
        'setpriv --no-new-privs rm -rf x',
        'tini -- rm -rf x',
        'gosu me rm -rf x',
        'ssh-agent rm -rf x',
        'dbus-run-session -- rm -rf x',
        'perf stat -e cycles rm -rf x',
        'toybox rm -rf x',
        'uv run rm -rf x',
        'uv run --with foo rm -rf x',
        'npm exec -- rm -rf x',
        'npx -y rm -rf x',
        'poetry run rm -rf x',
        'bundle exec rm -rf x',
        "nix-shell --run 'rm -rf x'",
        "tmux new-session -d 'rm -rf x'",
        'screen -dm rm -rf x',
        "hyperfine 'rm -rf x'",
        'timeout 5 eatmydata rm -rf x',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Bash(rm:*)' });
      }
      expect(await env.check('prlimit --nofile=100 cat .env'), mode).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
      expect(await env.check('eatmydata truncate -s0 src/a.ts'), mode).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Edit(./src/**)' });
    }
  });

  it('tmux, screen, at and the like, which run shell strings or their input, ask (safety) while deny rules exist', async () => {
    const env = ruleEnv({ deny: ['Bash(rm:*)'], mode: BYPASS.defaultMode });
    for (const c of ['at now < job.txt', "tmux ls -F '#(cat .env)'", 'tmux send-keys -t 0 "$k" Enter', "watchexec -- 'make x'"]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
  });

  it('what they run otherwise is as before: allowed by their rules, passed through in bypassPermissions', async () => {
    const env = ruleEnv({ deny: ['Bash(rm:*)'], allow: ['Bash(xvfb-run:*)', 'Bash(uv run:*)'] });
    for (const c of ['xvfb-run -a npm test', 'uv run pytest -q', 'uv run python -m build']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow', type: 'rule' });
    }
    const bypass = ruleEnv({ deny: ['Bash(rm:*)'], mode: BYPASS.defaultMode });
    const many = Array.from({ length: 80 }, (_, i) => `f${i}.ts`).join(' ');
    for (const c of [`npx eslint ${many}`, 'npm exec -- tsc -p .', 'prlimit --nofile=100 node x.js']) {
      expect(await bypass.check(c), c.slice(0, 40)).toMatchObject({ behavior: 'passthrough' });
    }
  });

  it('what it rests on: prlimit and setarch run the command that follows their options', () => {
    const d = tmpDir('toolexec-runners-');
    execFileSync('prlimit', ['--nofile=100', 'touch', 'ran-prlimit'], { cwd: d });
    execFileSync('setarch', [process.arch === 'arm64' ? 'aarch64' : 'x86_64', '-R', 'touch', 'ran-setarch'], { cwd: d });
    expect(fs.readdirSync(d).sort()).toEqual(['ran-prlimit', 'ran-setarch']);
  });

  it('end to end in bypassPermissions: prlimit … rm -f victim does not remove it under Bash(rm:*)', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Bash(rm:*)'] } });
    try {
      fs.writeFileSync(path.join(t.workspace, 'victim'), 'v\n');
      const r = await run(t, 'Bash', { command: 'prlimit --nofile=100 rm -f victim' });
      expect(r.exec.status).toBe('denied');
      expect(fs.existsSync(path.join(t.workspace, 'victim'))).toBe(true);
      const ok = await run(t, 'Bash', { command: 'prlimit --nofile=100 ls' });
      expect(ok.text).toContain('victim');
    } finally {
      await t.close();
    }
  });
});
