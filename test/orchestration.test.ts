/**
 * Orchestration (contract §4): concurrency-safe calls run together up to
 * maxConcurrency, the others alone and in order, results in request order;
 * cancellation ends a running call.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { partition, siblingDescription } from '../src/orchestration/run-batch.js';
import { z } from 'zod';
import { buildTool } from '../src/tool/build-tool.js';
import { cleanupTmp, execute, makeApp, sleepTool, textOf, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

type Span = { id: string; start: number; end: number };

describe('partition', () => {
  it('groups consecutive safe calls and isolates the others', () => {
    expect(partition([true, true, false, true, false, false, true, true, true])).toEqual([
      { concurrent: true, indices: [0, 1] },
      { concurrent: false, indices: [2] },
      { concurrent: true, indices: [3] },
      { concurrent: false, indices: [4] },
      { concurrent: false, indices: [5] },
      { concurrent: true, indices: [6, 7, 8] },
    ]);
  });
});

describe('runs', () => {
  it('runs 10 concurrency-safe calls of 200 ms together', async () => {
    const log: Span[] = [];
    t = await makeApp({}, { extraTools: [sleepTool({ safe: true, log })] });
    const uses = Array.from({ length: 10 }, (_, i) => use('SafeSleep', { ms: 200, tag: `s${i}` }, `u${i}`));
    const r = await execute(t.app, { tool_uses: uses });
    expect(r.body.executions.every((e) => e.status === 'succeeded')).toBe(true);
    expect(log).toHaveLength(10);
    // Together: every call started before any call finished.
    const lastStart = Math.max(...log.map((s) => s.start));
    const firstEnd = Math.min(...log.map((s) => s.end));
    expect(lastStart).toBeLessThan(firstEnd);
  });

  it('caps a concurrent run at maxConcurrency', async () => {
    const log: Span[] = [];
    t = await makeApp({ execution: { maxConcurrency: 3 } }, { extraTools: [sleepTool({ safe: true, log })] });
    const uses = Array.from({ length: 7 }, (_, i) => use('SafeSleep', { ms: 60, tag: `s${i}` }, `u${i}`));
    await execute(t.app, { tool_uses: uses });
    // At no instant are more than 3 calls inside their span.
    const events = log.flatMap((s) => [
      { t: s.start, d: 1 },
      { t: s.end, d: -1 },
    ]);
    events.sort((a, b) => a.t - b.t || a.d - b.d);
    let cur = 0;
    let peak = 0;
    for (const e of events) {
      cur += e.d;
      peak = Math.max(peak, cur);
    }
    expect(peak).toBe(3);
  });

  it('runs unsafe calls alone and in order, and returns results in request order', async () => {
    const log: Span[] = [];
    t = await makeApp({}, { extraTools: [sleepTool({ safe: true, log }), sleepTool({ safe: false, log })] });
    const uses = [
      use('SafeSleep', { ms: 120, tag: 'a' }, 'a'),
      use('SafeSleep', { ms: 10, tag: 'b' }, 'b'),
      use('UnsafeSleep', { ms: 50, tag: 'c' }, 'c'),
      use('UnsafeSleep', { ms: 10, tag: 'd' }, 'd'),
      use('SafeSleep', { ms: 80, tag: 'e' }, 'e'),
      use('SafeSleep', { ms: 5, tag: 'f' }, 'f'),
    ];
    const r = await execute(t.app, { tool_uses: uses });
    expect(r.body.tool_results.map((b) => b.tool_use_id)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(r.body.tool_results.map((b) => textOf(b.content))).toEqual([
      'slept 120 ms: a',
      'slept 10 ms: b',
      'slept 50 ms: c',
      'slept 10 ms: d',
      'slept 80 ms: e',
      'slept 5 ms: f',
    ]);
    const span = (id: string) => log.find((s) => s.id === id)!;
    // b finished before a (they ran together) but the answer keeps request order.
    expect(span('b').end).toBeLessThan(span('a').end);
    // c starts after both a and b ended; d after c; e and f after d.
    expect(span('c').start).toBeGreaterThanOrEqual(Math.max(span('a').end, span('b').end));
    expect(span('d').start).toBeGreaterThanOrEqual(span('c').end);
    expect(Math.min(span('e').start, span('f').start)).toBeGreaterThanOrEqual(span('d').end);
  });
});

describe('a tool whose input schema throws', () => {
  it('fails that call with an error result, runs the rest of the batch, and answers 200', async () => {
    const throwing = buildTool({
      name: 'Throwing',
      description: 'A schema whose refinement throws',
      inputSchema: z.strictObject({ x: z.string() }).superRefine(() => {
        throw new Error('refinement exploded');
      }),
      maxResultSizeChars: 1000,
      mayBeReadOnly: true,
      isConcurrencySafe: () => true,
      isReadOnly: () => true,
      checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
      call: async () => ({ data: 'never' }),
    });
    t = await makeApp({}, { extraTools: [throwing, sleepTool({ safe: true })] });
    const r = await execute(t.app, {
      tool_uses: [use('SafeSleep', { ms: 1, tag: 'a' }, 'a'), use('Throwing', { x: 'y' }, 'b'), use('SafeSleep', { ms: 1, tag: 'c' }, 'c')],
    });
    expect(r.status).toBe(200);
    expect(r.body.tool_results.map((b) => b.tool_use_id)).toEqual(['a', 'b', 'c']);
    expect(textOf(r.body.tool_results[0]!.content)).toBe('slept 1 ms: a');
    expect(r.body.tool_results[1]!.is_error).toBe(true);
    expect(textOf(r.body.tool_results[1]!.content)).toContain('refinement exploded');
    expect(r.body.executions[1]!.error_class).toBe('internal');
    expect(textOf(r.body.tool_results[2]!.content)).toBe('slept 1 ms: c');
    expect(t.app.toolexec.registry.size).toBe(0);
  });
});

describe('cancellation', () => {
  it('cancels a running call: status cancelled, the interrupt message, the rest of the batch goes on', async () => {
    t = await makeApp({}, { extraTools: [sleepTool({ safe: false })] });
    const accepted = await execute(t.app, {
      session_id: 'c',
      wait: false,
      tool_uses: [use('UnsafeSleep', { ms: 30_000, tag: 'long' }, 'long'), use('UnsafeSleep', { ms: 1, tag: 'next' }, 'next')],
    });
    expect(accepted.status).toBe(202);
    const [longEx, nextEx] = accepted.body.executions;
    expect(longEx!.status).toBe('queued');
    const svc = t.app.toolexec;
    // Wait until the long call is running, then cancel it.
    for (let i = 0; i < 200 && svc.registry.get(longEx!.id)?.call.status !== 'running'; i++) await new Promise((r) => setTimeout(r, 10));
    expect(svc.registry.get(longEx!.id)?.call.status).toBe('running');
    expect(svc.registry.cancel(longEx!.id)).toBe(true);
    for (let i = 0; i < 200 && svc.registry.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    const row = svc.executions.get(longEx!.id)!;
    expect(row.status).toBe('cancelled');
    expect(row.error_class).toBe('cancelled');
    expect(JSON.parse(row.result_block!).content).toContain('Request interrupted by user');
    expect(svc.executions.get(nextEx!.id)!.status).toBe('succeeded');
    // A cancelled call that is asked again is replayed, not re-run.
    const again = await execute(t.app, { session_id: 'c', tool_uses: [use('UnsafeSleep', { ms: 30_000, tag: 'long' }, 'long')] });
    expect(again.body.executions[0]).toMatchObject({ status: 'cancelled', replayed: true });
  });

  it('cancels the calls of a client that disconnects while waiting', async () => {
    t = await makeApp({}, { extraTools: [sleepTool({ safe: false })] });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const addr = t.app.server.address() as { port: number };
    const ac = new AbortController();
    const req = fetch(`http://127.0.0.1:${addr.port}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: 'd', tool_uses: [use('UnsafeSleep', { ms: 30_000, tag: 'x' }, 'gone')] }),
      signal: ac.signal,
    }).catch(() => undefined);
    const svc = t.app.toolexec;
    for (let i = 0; i < 300 && svc.registry.size === 0; i++) await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await req;
    for (let i = 0; i < 300 && svc.registry.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(svc.registry.size).toBe(0);
    const row = svc.executions.findByToolUse('d', 'gone')!;
    expect(row.status).toBe('cancelled');
  });
});

describe('a failing Bash call cancels its concurrent siblings, as in Claude Code', () => {
  const FAIL = 'cat missing_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz.txt';
  const CANCELLED = `<tool_use_error>Cancelled: parallel tool call Bash(${FAIL.slice(0, 40)}\u2026) errored</tool_use_error>`;

  it('names the failed call by its first 40 characters', () => {
    expect(siblingDescription('Bash', { command: 'ls -la' })).toBe('Bash(ls -la)');
    expect(siblingDescription('Bash', { command: 'x'.repeat(41) })).toBe(`Bash(${'x'.repeat(40)}\u2026)`);
    expect(siblingDescription('Bash', {})).toBe('Bash');
  });

  it('aborts the running siblings and ends the ones not started, with rows cancelled and the audit kept; later runs go on', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] }, execution: { maxConcurrency: 3 } }, { extraTools: [sleepTool({ safe: true }), sleepTool({ safe: false })] });
    const t0 = performance.now();
    const r = await execute(t.app, {
      session_id: 'sib',
      tool_uses: [
        use('Bash', { command: FAIL }, 'fail'),
        use('Bash', { command: 'sleep 30; echo later' }, 'bash-sibling'),
        use('SafeSleep', { ms: 30_000, tag: 'running' }, 'running'),
        use('SafeSleep', { ms: 1, tag: 'not-started' }, 'not-started'),
        use('UnsafeSleep', { ms: 1, tag: 'after' }, 'after'),
      ],
    });
    expect(performance.now() - t0).toBeLessThan(20_000);
    const [fail, bash, running, notStarted, after] = r.body.tool_results;
    expect(fail).toMatchObject({ is_error: true });
    expect(textOf(fail!.content)).toMatch(/^Exit code 1\n/);
    for (const b of [bash, running, notStarted]) expect(b).toMatchObject({ is_error: true, content: CANCELLED });
    expect(textOf(after!.content)).toBe('slept 1 ms: after');
    expect(r.body.executions.map((e) => [e.status, e.error_class])).toEqual([
      ['failed', 'tool_error'],
      ['cancelled', 'cancelled'],
      ['cancelled', 'cancelled'],
      ['cancelled', 'cancelled'],
      ['succeeded', null],
    ]);
    const svc = t.app.toolexec;
    // Rows: the running sibling got as far as its call; the one not started never ran a step.
    const row = (i: number) => svc.executions.get(r.body.executions[i]!.id)!;
    expect(row(1)).toMatchObject({ status: 'cancelled', error_class: 'cancelled' });
    expect(JSON.parse(row(1).result_block!).content).toBe(CANCELLED);
    expect(JSON.parse(row(1).timings!)).toHaveProperty('call');
    expect(JSON.parse(row(3).timings!)).not.toHaveProperty('lookup');
    // The audit keeps the decision made for the Bash sibling before it was cancelled.
    expect(svc.audit.query({ executionId: r.body.executions[1]!.id, limit: 10 })).toEqual([expect.objectContaining({ behavior: 'allow', tool: 'Bash' })]);
    expect(svc.registry.size).toBe(0);
  });

  it('is not done for other tools\u2019 errors, nor for a Bash exit that is an answer (grep finding nothing)', async () => {
    t = await makeApp({ permissions: { allow: ['Bash', 'Read'] } }, { extraTools: [sleepTool({ safe: true })] });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'hello\n');
    const r = await execute(t.app, {
      tool_uses: [
        use('Read', { file_path: path.join(t.workspace, 'missing.txt') }, 'read'),
        use('Bash', { command: 'grep zzz a.txt' }, 'grep'),
        use('SafeSleep', { ms: 300, tag: 'goes on' }, 'sleep'),
      ],
    });
    expect(r.body.executions.map((e) => e.status)).toEqual(['failed', 'succeeded', 'succeeded']);
    expect(textOf(r.body.tool_results[2]!.content)).toBe('slept 300 ms: goes on');
  });
});
