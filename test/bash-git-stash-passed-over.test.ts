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
    if (process.getuid?.() !== 0) {
      // objects or refs git cannot enter (root enters any directory).
      for (const d of ['objects', 'refs']) {
        fs.chmodSync(path.join(sub, '.git', d), 0o600);
        await over(d);
        fs.chmodSync(path.join(sub, '.git', d), 0o755);
      }
      await ok();
    }
  });
});
