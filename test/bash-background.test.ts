/**
 * Background Bash tasks through POST /execute on a real app, with real bash
 * and real process groups: `run_in_background` answers at once with a task
 * id; TaskOutput reads the output without waiting, waits for the end (or
 * gives up at its timeout) and persists a large output; TaskStop (and its
 * old name KillShell) stops the whole group; tasks belong to their session;
 * the per-session limit, the output cap and the lifetime hold; deny rules
 * hold for background commands; the service's close stops what still runs;
 * and `bash.background.enabled: false` refuses run_in_background and hides
 * the tools.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import type { Approvals } from '../src/permissions/approvals.js';
import { reapOrphans, TASK_MARKER } from '../src/tasks/background.js';
import { cleanupTmp, execute, makeApp, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { eventually, isAlive, readPid } from './helpers-bash.js';
import { waitFor } from './helpers-mcp.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const ALLOW: ConfigInput = { permissions: { allow: ['Bash'] } };

async function call(name: string, input: Record<string, unknown>, session = 's') {
  const r = await execute(t!.app, { session_id: session, tool_uses: [use(name, input)] });
  expect(r.status).toBe(200);
  const block = r.body.tool_results[0]!;
  return { block, text: textOf(block.content), exec: r.body.executions[0]! };
}

/** Starts a background command; returns its task id. */
async function start(command: string, session = 's'): Promise<string> {
  const r = await call('Bash', { command, run_in_background: true, description: 'Run in the background' }, session);
  expect(r.block.is_error).toBeFalsy();
  const m = /^Command running in background with ID: (b[0-9a-f]{8})\. Read its output with TaskOutput and stop it with TaskStop, giving task_id "b[0-9a-f]{8}"\.$/.exec(r.text);
  expect(m, r.text).not.toBeNull();
  return m![1]!;
}

/** The toolexec_background_tasks_running gauge, as /metrics reports it. */
async function running(): Promise<number> {
  const res = await t!.app.inject({ method: 'GET', url: '/metrics' });
  return Number(/^toolexec_background_tasks_running (\d+)$/m.exec(res.body)?.[1]);
}

/** The tags of a TaskOutput answer. */
function tags(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/<(\w+)>\n?([\s\S]*?)\n?<\/\1>/g)) out[m[1]!] = m[2]!;
  return out;
}

async function output(id: string, input: Record<string, unknown> = {}, session = 's') {
  const r = await call('TaskOutput', { task_id: id, ...input }, session);
  return { ...r, tags: tags(r.text) };
}

describe('run_in_background', () => {
  it('answers at once; TaskOutput reads the output so far, gives up at its timeout, and waits for the end with the exit code', async () => {
    t = await makeApp(ALLOW);
    const go = path.join(t.workspace, 'go');
    const id = await start(`echo started; while [ ! -e go ]; do sleep 0.05; done; echo finished >&2; exit 3`);

    const early = await waitFor(async () => {
      const o = await output(id, { block: false });
      return o.tags.output === 'started' ? o : undefined;
    }, 'the first line');
    expect(early.tags).toEqual({ retrieval_status: 'not_ready', task_id: id, task_type: 'local_bash', status: 'running', output: 'started' });
    expect(early.exec).toMatchObject({ tool: 'TaskOutput', status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'tool' } } });

    const waited = await output(id, { timeout: 100 });
    expect(waited.tags).toMatchObject({ retrieval_status: 'timeout', status: 'running' });

    fs.writeFileSync(go, '');
    const done = await output(id, { timeout: 20_000 });
    expect(done.tags).toEqual({ retrieval_status: 'success', task_id: id, task_type: 'local_bash', status: 'failed', exit_code: '3', output: 'started\nfinished' });
    expect(done.block.is_error).toBeFalsy();
    // Operators see the session's tasks.
    const session = (await t.app.inject({ method: 'GET', url: '/sessions/s' })).json() as { session: { background_tasks: unknown[] } };
    expect(session.session.background_tasks).toEqual([
      {
        id,
        command: 'echo started; while [ ! -e go ]; do sleep 0.05; done; echo finished >&2; exit 3',
        description: 'Run in the background',
        status: 'failed',
        exit_code: 3,
        started_at: expect.any(Number),
        ended_at: expect.any(Number),
        output_bytes: 'started\nfinished\n'.length,
      },
    ]);
    // The background command did not move the session: it ran where a foreground call would.
    expect((await call('Bash', { command: 'pwd -P' })).text).toBe(fs.realpathSync(t.workspace));
  });

  it('TaskStop stops the whole process group; the output stays readable; KillShell and shell_id still work', async () => {
    t = await makeApp(ALLOW);
    const pidFile = path.join(t.workspace, 'grandchild.pid');
    const id = await start(`sleep 300 & echo $! > grandchild.pid; echo up; wait`);
    const grandchild = await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n') && readPid(pidFile), 'the grandchild pid');
    expect(isAlive(grandchild)).toBe(true);
    expect(await running()).toBe(1);

    const stopped = await call('TaskStop', { task_id: id });
    expect(stopped.block.is_error).toBeFalsy();
    expect(JSON.parse(stopped.text)).toEqual({
      message: `Successfully stopped task: ${id} (sleep 300 & echo $! > grandchild.pid; echo up; wait)`,
      task_id: id,
      task_type: 'local_bash',
    });
    expect(await eventually(() => !isAlive(grandchild))).toBe(true);
    expect(await running()).toBe(0);
    expect((await output(id, { block: false })).tags).toMatchObject({ retrieval_status: 'success', status: 'killed', output: 'up' });

    const again = await call('TaskStop', { task_id: id });
    expect(again.block.is_error).toBe(true);
    expect(again.text).toContain(`Task ${id} is not running (status: killed)`);
    expect(again.exec.error_class).toBe('validation');

    // BashOutput, TaskOutput's old name, with its bash_id.
    expect((await call('BashOutput', { bash_id: id, block: false })).text).toContain(`<task_id>${id}</task_id>`);
    expect((await call('TaskOutput', {})).text).toContain('Missing required parameter: task_id');
    const other = await start('sleep 300');
    const killed = await call('KillShell', { shell_id: other });
    expect(killed.exec).toMatchObject({ tool: 'TaskStop', status: 'succeeded' });
    expect((await output(other)).tags).toMatchObject({ retrieval_status: 'success', status: 'killed' });
  });

  it('a task belongs to its session: another session is told there is no such task', async () => {
    t = await makeApp(ALLOW);
    const id = await start('sleep 300', 'owner');
    for (const [name, input] of [
      ['TaskOutput', { task_id: id }],
      ['TaskStop', { task_id: id }],
    ] as const) {
      const r = await call(name, input, 'intruder');
      expect(r.block.is_error).toBe(true);
      expect(r.text).toContain(`No task found with ID: ${id}`);
      expect(r.exec.error_class).toBe('validation');
    }
    expect((await output(id, { block: false }, 'owner')).tags.status).toBe('running');
  });

  it('a large output is persisted with its last characters shown, and a finished task’s is stored once', async () => {
    t = await makeApp(ALLOW);
    const id = await start('seq 1 20000');
    const r = await output(id, { timeout: 20_000 });
    expect(r.tags).toMatchObject({ retrieval_status: 'success', status: 'completed', exit_code: '0' });
    const ref = /Full output saved to: (result:\/\/[\w-]+)/.exec(r.tags.output!)?.[1];
    expect(ref, r.text).toBeDefined();
    // The newest lines are what a log is read for.
    const tail = /Preview \(last ([\d,]+) characters\):\n\.\.\.\n([\s\S]*\n19999\n20000)\n<\/persisted-output>$/.exec(r.tags.output!);
    expect(tail, r.tags.output).not.toBeNull();
    // From a line's start: every line shown is whole (not "…7234" of 17234).
    const shown = tail![2]!.split('\n');
    expect(shown).toEqual(Array.from({ length: shown.length }, (_, i) => String(20_001 - shown.length + i)));
    expect(Number(tail![1]!.replace(/,/g, ''))).toBeLessThanOrEqual(4096);
    expect(r.tags.output).not.toContain('\n1\n2\n3\n');
    const read = await call('Read', { file_path: ref, offset: 19_999, limit: 2 });
    expect(read.text).toMatch(/19999\n.*20000/);
    const again = await output(id);
    expect(/Full output saved to: (result:\/\/[\w-]+)/.exec(again.tags.output!)?.[1]).toBe(ref);
  });

  it('while a task runs, a large output shows its newest lines and stores nothing; once it has ended, the whole output is stored', async () => {
    t = await makeApp(ALLOW);
    const id = await start('seq 1 30000; while [ ! -e go ]; do sleep 0.05; done; echo done');
    const running = await waitFor(async () => {
      const o = await output(id, { block: false });
      return o.tags.output?.endsWith('\n30000') ? o : undefined;
    }, 'the whole sequence');
    expect(running.tags.status).toBe('running');
    expect(running.tags.output).toMatch(/^\[\.\.\. \d+ earlier bytes are not shown while the task runs; once it has ended, TaskOutput stores its whole output \.\.\.\]\n\d+\n/);
    expect(running.tags.output!.length).toBeLessThan(17_000);
    expect(running.exec.result_id).toBeNull();
    fs.writeFileSync(path.join(t.workspace, 'go'), '');
    const done = await output(id, { timeout: 20_000 });
    expect(done.tags).toMatchObject({ status: 'completed' });
    expect(done.exec.result_id).toBeTruthy();
    expect(done.tags.output).toMatch(/\n30000\ndone\n<\/persisted-output>$/);
  });

  it('deny rules hold for background commands: nothing is started', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'], deny: ['Bash(rm:*)'] } });
    fs.writeFileSync(path.join(t.workspace, 'keep'), 'x');
    const r = await call('Bash', { command: 'sleep 0.2; rm -f keep', run_in_background: true });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule' } } });
    expect(t.app.toolexec.tasks!.list('s')).toEqual([]);
    expect(fs.existsSync(path.join(t.workspace, 'keep'))).toBe(true);
  });
});

describe('in the bubblewrap sandbox', () => {
  it('a background task writes only inside the working directories, as a foreground call does', async () => {
    const approveAll: Approvals = { request: async () => ({ behavior: 'allow', reason: 'user', actor: 'tester' }) };
    t = await makeApp({ bash: { sandbox: { mode: 'bubblewrap', allowNetwork: false } } }, { approvals: approveAll });
    const outside = `/var/tmp/toolexec-outside-bg-${process.pid}`;
    const id = await start(`touch inside && echo inside-ok; touch ${outside} 2>/dev/null || echo outside-refused`);
    expect((await output(id, { timeout: 20_000 })).tags).toMatchObject({ status: 'completed', output: 'inside-ok\noutside-refused' });
    expect(fs.existsSync(path.join(t.workspace, 'inside'))).toBe(true);
    expect(fs.existsSync(outside)).toBe(false);
  });
});

describe('limits', () => {
  it('a session may run maxRunningPerSession tasks; the output is capped; a task is stopped at its lifetime', async () => {
    t = await makeApp({ ...ALLOW, bash: { background: { maxRunningPerSession: 2, maxOutputBytes: 1000, maxLifetimeMs: 1500 } } });
    const a = await start('sleep 30');
    await start('sleep 30');
    const third = await call('Bash', { command: 'sleep 30', run_in_background: true });
    expect(third.block.is_error).toBe(true);
    expect(third.text).toContain('This session already has 2 background tasks running, the most it may have.');
    expect(third.exec.error_class).toBe('tool_error');
    // Other sessions have their own count.
    const capped = await start(`head -c 5000 /dev/zero | tr '\\0' x`, 'other');
    expect((await output(capped, { timeout: 20_000 }, 'other')).tags.output).toBe(
      `${'x'.repeat(1000)}\n[4000 more bytes of output were not kept: a task keeps at most 1000 bytes]`,
    );
    // The lifetime ends the sleeps long before their 30 s.
    const ended = await output(a, { timeout: 20_000 });
    expect(ended.tags).toMatchObject({ retrieval_status: 'success', status: 'killed' });
    expect(t.app.toolexec.tasks!.get('s', a)!.stoppedBy).toBe('lifetime');
  });

  it('past maxKeptBytes in all, the oldest finished tasks are forgotten', async () => {
    t = await makeApp({ ...ALLOW, bash: { background: { maxKeptBytes: 150 } } });
    const first = await start(`head -c 100 /dev/zero | tr '\\0' a`);
    expect((await output(first, { timeout: 20_000 })).tags.status).toBe('completed');
    const second = await start(`head -c 100 /dev/zero | tr '\\0' b`);
    expect((await output(second, { timeout: 20_000 })).tags.output).toBe('b'.repeat(100));
    const gone = await call('TaskOutput', { task_id: first });
    expect(gone.text).toContain(`No task found with ID: ${first}`);
  });

  it('refuses timer settings a Node timer cannot hold (they would fire at once)', async () => {
    await expect(makeApp({ ...ALLOW, bash: { background: { maxLifetimeMs: 30 * 24 * 3600 * 1000 } } })).rejects.toThrow(/maxLifetimeMs/);
  });

  it('closing the service stops the tasks still running and removes their output', async () => {
    t = await makeApp(ALLOW);
    const pidFile = path.join(t.workspace, 'grandchild.pid');
    const id = await start(`sleep 300 & echo $! > grandchild.pid; wait`);
    const grandchild = await waitFor(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').endsWith('\n') && readPid(pidFile), 'the grandchild pid');
    const file = t.app.toolexec.tasks!.get('s', id)!.outputFile;
    expect(fs.existsSync(file)).toBe(true);
    await t.close();
    t = undefined;
    expect(await eventually(() => !isAlive(grandchild))).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('switched off: run_in_background is refused with the reason, and TaskOutput and TaskStop are not in the pool', async () => {
    t = await makeApp({ ...ALLOW, bash: { background: { enabled: false } } });
    const r = await call('Bash', { command: 'sleep 1', run_in_background: true });
    expect(r.block.is_error).toBe(true);
    expect(r.text).toContain('run_in_background is switched off on this service (bash.background.enabled is false)');
    expect(r.exec.error_class).toBe('validation');
    const names = t.app.toolexec.pool().view('default').map((x) => x.name);
    expect(names).toContain('Bash');
    expect(names).not.toContain('TaskOutput');
    expect(names).not.toContain('TaskStop');
    expect(t.app.toolexec.tasks).toBeUndefined();
  });
});

describe('the orphan reaper', () => {
  /** A directory as a service would make it, named after `pid` and `start`. */
  function serviceDir(tmp: string, pid: number, start: string, mode = 0o700): string {
    const d = path.join(tmp, `toolexec-tasks-${pid}-${start}-abcdef`);
    fs.mkdirSync(d, { mode });
    fs.chmodSync(d, mode);
    fs.writeFileSync(path.join(d, 'b00000000.output'), 'x');
    return d;
  }
  const startOf = (pid: number) => {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
  };

  it('takes only directories of services that are gone, made as a service makes them, and stops what their tasks left', async () => {
    const tmp = tmpDir();
    // A task process of a service that is gone: the marker in its environment names the directory.
    const gone = spawn('sleep', ['0'], { stdio: 'ignore' });
    await new Promise((r) => gone.on('exit', r));
    const dead = serviceDir(tmp, gone.pid!, '12345');
    const orphan = spawn('sleep', ['300'], { stdio: 'ignore', env: { ...process.env, [TASK_MARKER]: `${dead}/b00000000` } });
    // A live process with another start time: its pid was reused, its service is gone too.
    const reused = serviceDir(tmp, process.pid, '1');
    // Ours, alive: kept.
    const live = serviceDir(tmp, process.pid, startOf(process.pid));
    // Not as a service makes them: open to others, a symlink, a file, another name.
    const open = serviceDir(tmp, gone.pid!, '777', 0o755);
    const link = path.join(tmp, `toolexec-tasks-${gone.pid}-888-link`);
    fs.symlinkSync(live, link);
    const file = path.join(tmp, `toolexec-tasks-${gone.pid}-999-file`);
    fs.writeFileSync(file, '');
    const other = path.join(tmp, 'toolexec-tasks-elsewhere');
    fs.mkdirSync(other, { mode: 0o700 });
    try {
      await waitFor(() => fs.existsSync(`/proc/${orphan.pid}/environ`), 'the orphan to start');
      expect(reapOrphans(tmp)).toBe(1);
      expect(await eventually(() => !isAlive(orphan.pid!))).toBe(true);
      expect(fs.existsSync(dead)).toBe(false);
      expect(fs.existsSync(reused)).toBe(false);
      for (const kept of [live, open, link, file, other]) expect(fs.existsSync(kept), kept).toBe(true);
      // Nothing left to take: never throws, finds nothing.
      expect(reapOrphans(tmp)).toBe(0);
      expect(reapOrphans(path.join(tmp, 'missing'))).toBe(0);
    } finally {
      orphan.kill('SIGKILL');
    }
  });
});
