/**
 * The spawn helper (execution.spawner "helper", the default): Bash, hooks and
 * background tasks are started by a small helper process rather than forked
 * from the service, and their pipes are handed to the service. The same
 * behaviour as a direct fork: output and exit codes, a large output byte for
 * byte, a hook's stdin, a timeout and a cancel that kill the whole group. The
 * helper's death fails what it was running (and kills those groups), and the
 * next command gets a new helper; the service's death makes the helper kill
 * what is still running.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { spawnHelperPid } from '../src/util/spawner.js';
import { cleanupTmp, execute, makeApp, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { eventually, isAlive, readPid } from './helpers-bash.js';
import { script } from './helpers-hooks.js';
import { waitFor } from './helpers-mcp.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const ALLOW: ConfigInput = { permissions: { allow: ['Bash'] } };
const DIRECT: ConfigInput = { ...ALLOW, execution: { spawner: 'direct' } };

async function bash(app: TestApp, input: Record<string, unknown>, session = 's') {
  const r = await execute(app.app, { session_id: session, tool_uses: [use('Bash', input)] });
  expect(r.status).toBe(200);
  return { block: r.body.tool_results[0]!, text: textOf(r.body.tool_results[0]!.content), exec: r.body.executions[0]! };
}

function parentOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

describe('commands started by the spawn helper', () => {
  it('are the helper’s children, not the service’s, with the same output, exit codes and large outputs as a direct fork', async () => {
    t = await makeApp(ALLOW);
    const r = await bash(t, { command: 'echo out; echo err >&2; echo $$' });
    const helper = spawnHelperPid();
    expect(helper).toBeDefined();
    expect(helper).not.toBe(process.pid);
    const [out, pid] = r.text.split('\n');
    expect(out).toBe('out');
    expect(r.text.endsWith('\nerr')).toBe(true);
    // The command's shell is the gate's process (exec keeps the pid), a child of the helper.
    expect(Number(pid)).toBeGreaterThan(0);
    expect((await bash(t, { command: 'echo partial; exit 3' })).text).toBe('Exit code 3\npartial');
    expect((await bash(t, { command: 'printf "%s\\n" a b | tac' })).text).toBe('b\na');

    // 3 MB stored byte for byte as a direct fork stores it.
    const command = `head -c 3000000 seed | base64 -w 76; echo tail >&2`;
    const seedBytes = Buffer.from(Array.from({ length: 3_000_000 }, (_, i) => (i * 7919) % 256));
    const stored = async (app: TestApp) => {
      fs.writeFileSync(path.join(app.workspace, 'seed'), seedBytes);
      const big = await execute(app.app, { session_id: 's', tool_uses: [use('Bash', { command })] });
      const id = big.body.executions[0]!.result_id;
      expect(id).toBeTruthy();
      return createHash('sha256').update((await app.app.inject({ method: 'GET', url: `/results/${id}` })).body).digest('hex');
    };
    const viaHelper = await stored(t);
    const direct = await makeApp(DIRECT);
    try {
      expect(await stored(direct)).toBe(viaHelper);
    } finally {
      await direct.close();
    }
  });

  it('the command’s parent is the helper', async () => {
    t = await makeApp(ALLOW);
    const pidFile = path.join(t.workspace, 'cmd.pid');
    const running = bash(t, { command: `echo $$ > ${pidFile}; sleep 0.5` });
    await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n'), 'the command pid');
    expect(parentOf(readPid(pidFile))).toBe(spawnHelperPid());
    // The helper holds none of the service's environment: a command reading its parent's sees no secret.
    const environ = fs.readFileSync(`/proc/${spawnHelperPid()}/environ`, 'utf8').split('\0').filter(Boolean);
    expect(environ.every((kv) => /^(PATH|NODE_CHANNEL_FD|NODE_CHANNEL_SERIALIZATION_MODE)=/.test(kv)), environ.join(' ')).toBe(true);
    expect((await running).exec.status).toBe('succeeded');
  });

  it('a hook gets its JSON on stdin, and a timeout kills the whole group', async () => {
    const dir = tmpDir('toolexec-sh-');
    const hook = script(dir, 'deny-rm.sh', `grep -q '"command":"rm' && { echo 'no rm here' >&2; exit 2; }; exit 0`);
    t = await makeApp({ ...ALLOW, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] } });
    const denied = await bash(t, { command: 'rm -f nothing' });
    expect(denied.exec.status).toBe('denied');
    expect(denied.text).toContain('no rm here');
    const pidFile = path.join(t.workspace, 'gc.pid');
    const slow = await bash(t, { command: `sh -c 'trap "" TERM; sleep 300 & echo $! > ${pidFile}; wait'`, timeout: 500 });
    expect(slow.text).toMatch(/^Command timed out after 500 ms/);
    const grandchild = readPid(pidFile);
    expect(await eventually(() => !isAlive(grandchild))).toBe(true);
  });

  it('a background task runs through the helper, and TaskStop stops its group', async () => {
    t = await makeApp(ALLOW);
    const started = await bash(t, { command: 'echo begun; sleep 300', run_in_background: true });
    const id = /ID: (\w+)/.exec(started.text)![1]!;
    const read = async () => {
      const r = await execute(t!.app, { session_id: 's', tool_uses: [use('TaskOutput', { task_id: id, block: false })] });
      return textOf(r.body.tool_results[0]!.content);
    };
    await waitFor(async () => (await read()).includes('begun'), 'the task’s first output');
    const stop = await execute(t.app, { session_id: 's', tool_uses: [use('TaskStop', { task_id: id })] });
    expect(stop.body.executions[0]!.status, textOf(stop.body.tool_results[0]!.content)).toBe('succeeded');
    expect(await read()).toContain('<status>killed</status>');
  });

  it('the helper’s death fails the command it was running, kills its group, and the next command gets a new helper', async () => {
    t = await makeApp(ALLOW);
    await bash(t, { command: 'true' });
    const first = spawnHelperPid()!;
    const pidFile = path.join(t.workspace, 'gc.pid');
    const running = bash(t, { command: `sleep 300 & echo $! > ${pidFile}; wait` });
    await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n'), 'the grandchild pid');
    const grandchild = readPid(pidFile);
    process.kill(first, 'SIGKILL');
    const r = await running;
    expect(r.block.is_error).toBe(true);
    expect(r.text).toContain('the spawn helper exited');
    expect(await eventually(() => !isAlive(grandchild))).toBe(true);
    expect((await bash(t, { command: 'echo again' })).text).toBe('again');
    expect(spawnHelperPid()).not.toBe(first);
  });

  it('when the service dies, the helper kills the commands still running and exits', async () => {
    const dir = tmpDir('toolexec-helper-death-');
    const pidFile = path.join(dir, 'cmd.pid');
    const driver = path.join(dir, 'driver.mjs');
    const spawner = path.resolve('dist/util/spawner.js');
    fs.writeFileSync(
      driver,
      `import { acquireSpawnHelper, spawnCommand, spawnHelperPid } from ${JSON.stringify(spawner)};
acquireSpawnHelper();
const c = spawnCommand({ file: 'bash', args: ['-c', 'echo $$ > ${pidFile}; sleep 300'], cwd: ${JSON.stringify(dir)}, env: { PATH: process.env.PATH }, stdin: '' });
c.onExit(() => {});
console.log(spawnHelperPid());
setInterval(() => {}, 1000);
`,
    );
    const proc = spawn(process.execPath, [driver], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.on('data', (b: Buffer) => (out += b.toString()));
    await waitFor(() => out.includes('\n') && fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n'), 'the driver and its command');
    const helper = Number(out.trim());
    const cmd = readPid(pidFile);
    expect(isAlive(helper)).toBe(true);
    expect(isAlive(cmd)).toBe(true);
    proc.kill('SIGKILL');
    expect(await eventually(() => !isAlive(cmd))).toBe(true);
    expect(await eventually(() => !isAlive(helper))).toBe(true);
  });

  it('a call cancelled before its command passed the gate ends, and nothing of it runs', async () => {
    t = await makeApp(ALLOW);
    const marker = path.join(t.workspace, 'ran');
    const ac = new AbortController();
    const { runChild } = await import('../src/util/child.js');
    const p = runChild({ file: 'bash', args: ['-c', `touch ${marker}`], cwd: t.workspace, env: { PATH: process.env.PATH }, timeoutMs: 10_000, signal: ac.signal });
    ac.abort();
    const r = await p;
    expect(r.aborted).toBe(true);
    await new Promise((res) => setTimeout(res, 200));
    expect(fs.existsSync(marker)).toBe(false);
  });
});
