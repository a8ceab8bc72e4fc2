/**
 * Paths through a process's /proc directory (`/proc/self/cwd/.env`, or a
 * symlink to one): the checker resolving them follows its own process's
 * links, while the command follows its own, so `cat /proc/self/cwd/.env`
 * read the workspace's `.env` while the check saw a file in the service's
 * directory, outside the working directories (an ask bypassPermissions lets
 * through). Such a path is an unknown location: a safety ask while Read deny
 * rules exist. Real workspaces, and the real service running the command.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('reads through /proc/<pid>/', () => {
  it('are unknown locations while Read deny rules exist, in every mode', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Read(/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.symlinkSync('/proc/self/cwd', path.join(env.ws, 'here'));
      fs.symlinkSync('/proc', path.join(env.ws, 'pp'));
      for (const c of ['cat /proc/self/cwd/.env', 'cat /proc/thread-self/cwd/.env', 'cat /proc/1/root/etc/hostname', 'cat here/.env', 'cat pp/self/cwd/.env', 'cat /dev/fd/../../proc/self/cwd/.env', 'grep S < /proc/self/cwd/.env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
      // /proc files of no process, and ordinary files, as before.
      expect(await env.check('cat /proc/cpuinfo')).toMatchObject({ behavior: 'ask', type: 'working_dir' });
      fs.writeFileSync(path.join(env.ws, 'a.ts'), '');
      expect(await env.check('cat a.ts')).toMatchObject({ behavior: 'allow' });
    }
  });

  it('cat /proc/self/cwd/.env does not run in bypassPermissions', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(/.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const r = await run(t, 'Bash', { command: 'cat /proc/self/cwd/.env' });
    expect(r.text).not.toContain('hunter2');
    // The safety ask holds in bypassPermissions; with no one to ask (headless), it is a deny.
    expect(r.exec.status).toBe('denied');
    expect(r.chain.some((s) => /unknown read target/.test(s.detail))).toBe(true);
  });
});
