/**
 * git passes over a `.git` directory it does not take for a repository (HEAD that names no ref
 * and no object, objects or refs it cannot enter) and goes on to the `.git` above. The listing for
 * `git stash -u` / `git add -f` stopped at the first `.git` directory holding HEAD, objects and
 * refs, whatever HEAD said: with Read(./.env) denied in bypassPermissions, in a workspace that is a
 * repository, a sub/.git holding objects, refs, an empty config and a HEAD saying `x` (unpacked from a tar archive
 * the agent made: writes the mode allows), then `cd sub && git stash -a` was allowed (sub's listing holds nothing denied) while git
 * stored the workspace's .env; `git worktree add /tmp/x stash@{0}^3` and `cat /tmp/x/.env` printed it.
 * The top is now taken only where git would take the `.git` as its repository. The real service runs git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { BYPASS, bashServiceTests, ruleEnv } from './helpers-bash.js';
import { BIN } from './helpers-cli.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();
const GIT_ID = ['-c', 'user.name=t', '-c', 'user.email=t@e'];

describe('git stash -u where git passes over the nearest .git', () => {
  it('does not store the workspace .env through a .git directory whose HEAD git refuses', async () => {
    const out = path.join(tmpDir('toolexec-stash-over-'), 'wt');
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    execFileSync('git', ['init', '-q'], { cwd: t.workspace });
    execFileSync('git', [...GIT_ID, 'commit', '-q', '--allow-empty', '-m', 'x'], { cwd: t.workspace });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    // (A write into sub/.git asks; a tar archive holding .git, made and unpacked by the agent, does not.)
    for (const command of ['mkdir -p st/g/objects st/g/refs sub', 'echo x > st/g/HEAD', 'touch st/g/config', "tar -C st -cf t.tar --transform 's,^g,.git,' g", 'tar -C sub -xf t.tar']) {
      const r = await run(t, 'Bash', { command });
      expect(r.exec.status, `${command}: ${r.text}`).toBe('succeeded');
    }
    const stash = await run(t, 'Bash', { command: 'cd sub && git stash -a' });
    // Had it run: the stash's untracked (and ignored) files, checked out outside the workspace, hold .env.
    await run(t, 'Bash', { command: `git worktree add -q ${out} 'stash@{0}^3'` });
    const r = await run(t, 'Bash', { command: `cat ${out}/.env` });
    expect(r.text).not.toContain('hunter2');
    expect(stash.exec.status, stash.text).toBe('denied');
    expect(fs.readFileSync(path.join(t.workspace, '.env'), 'utf8')).toBe('SECRET=hunter2\n');
  });

  it('asks for each .git git would pass over; a repository git takes is as before', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    const git = (cwd: string, ...args: string[]): string => execFileSync('git', [...GIT_ID, ...args], { cwd, encoding: 'utf8' });
    git(env.ws, 'init', '-q');
    fs.writeFileSync(path.join(env.ws, '.env'), 'KEY=1\n');
    const sub = path.join(env.ws, 'sub');
    git(env.ws, 'init', '-q', 'sub');
    git(sub, 'commit', '-q', '--allow-empty', '-m', 'x');
    const head = path.join(sub, '.git', 'HEAD');
    const top = (): string => git(sub, 'rev-parse', '--show-toplevel').trim();
    const ok = async (): Promise<void> => {
      expect(top()).toBe(fs.realpathSync(sub));
      expect(await env.check('cd sub && git stash -u')).not.toMatchObject({ type: 'safety' });
    };
    const over = async (what: string): Promise<void> => {
      expect(top(), what).toBe(fs.realpathSync(env.ws));
      expect(await env.check('cd sub && git stash -u'), what).toMatchObject({ behavior: 'ask', type: 'safety' });
      expect(await env.check('cd sub && git add -f :/'), what).toMatchObject({ behavior: 'ask', type: 'safety' });
    };
    await ok();
    const id = git(sub, 'rev-parse', 'HEAD').trim();
    // A detached HEAD, and `ref:` followed by other white space, are taken by git.
    fs.writeFileSync(head, `${id}\n`);
    await ok();
    fs.writeFileSync(head, 'ref:\trefs/heads/main\n');
    await ok();
    for (const text of ['x\n', 'ref: heads/main\n', `${id.slice(0, 20)}\n`, '']) {
      fs.writeFileSync(head, text);
      await over(JSON.stringify(text));
    }
    fs.writeFileSync(head, 'ref: refs/heads/main\n');
    await ok();
  });

  it('asks where git cannot enter objects or refs, as a user other than root (root enters any directory)', () => {
    // The image runs the service as a user (node), CI as root: as root, git, the service and the
    // check run as nobody, here through the built command (its check prints the decision).
    const dir = tmpDir('toolexec-stash-user-');
    const ws = path.join(dir, 'ws');
    const home = path.join(dir, 'home');
    fs.mkdirSync(ws);
    fs.mkdirSync(home);
    const config = path.join(dir, 'toolexec.json');
    fs.writeFileSync(config, JSON.stringify({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } }));
    const root = process.getuid?.() === 0;
    if (root) {
      fs.chmodSync(dir, 0o755);
      for (const p of [dir, ws, home, config]) fs.chownSync(p, 65534, 65534);
    }
    const user = (file: string, args: string[], cwd = ws): string =>
      execFileSync(root ? 'setpriv' : file, [...(root ? ['--reuid=65534', '--regid=65534', '--clear-groups', file] : []), ...args], {
        cwd,
        encoding: 'utf8',
        env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1' },
      });
    const sub = path.join(ws, 'sub');
    user('git', ['init', '-q']);
    user('git', ['init', '-q', 'sub']);
    user('git', [...GIT_ID, 'commit', '-q', '--allow-empty', '-m', 'x'], sub);
    user('sh', ['-c', 'echo KEY=1 > .env']);
    const top = (): string => user('git', ['rev-parse', '--show-toplevel'], sub).trim();
    const check = (command: string): { behavior: string; reason: { type: string } } =>
      JSON.parse(user(process.execPath, [BIN, 'check', '--json', '--config', config, '--no-mcp', '--workspace', ws, 'Bash', JSON.stringify({ command })])) as { behavior: string; reason: { type: string } };
    expect(top()).toBe(sub);
    expect(check('cd sub && git stash -u')).toMatchObject({ behavior: 'allow', reason: { type: 'mode' } });
    for (const d of ['objects', 'refs']) {
      fs.chmodSync(path.join(sub, '.git', d), 0o600);
      expect(top(), d).toBe(ws);
      expect(check('cd sub && git stash -u'), d).toMatchObject({ behavior: 'ask', reason: { type: 'safety' } });
      fs.chmodSync(path.join(sub, '.git', d), 0o755);
    }
  }, 120_000);
});
