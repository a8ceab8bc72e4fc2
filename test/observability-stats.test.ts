/**
 * GET /stats: running aggregates fed by finished calls, persisted through the
 * group-commit writer and loaded at start; the histogram's resolution; and
 * that the answer never depends on the executions or audit tables.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import type { ConfigInput } from '../src/config/schema.js';
import { CallStats, UNKNOWN_TOOL } from '../src/observability/call-stats.js';
import { BUCKETS, bucketHigh, bucketLow, bucketOf, quantiles } from '../src/observability/latency-histogram.js';
import type { StatsBody } from '../src/observability/observability.js';
import { StatsResponse } from '../src/http/routes/stats.js';
import type { FinishedCall } from '../src/pipeline/types.js';
import { ToolError } from '../src/pipeline/error-class.js';
import { buildTool } from '../src/tool/build-tool.js';
import { z } from 'zod';
import { cleanupTmp, execute, makeApp, probeTool, tmpDir, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
const open: FastifyInstance[] = [];
afterEach(async () => {
  await t?.close();
  t = undefined;
  for (const a of open.splice(0)) await a.close();
});
afterAll(cleanupTmp);

/** A tool that fails with the error class named in its input. */
const failer = buildTool({
  name: 'Failer',
  description: 'Fails with the given error class',
  inputSchema: z.strictObject({ cls: z.enum(['io', 'network', 'timeout']) }),
  maxResultSizeChars: 1000,
  isReadOnly: () => true,
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
  call: async (input) => {
    throw new ToolError(`failed with ${input.cls}`, input.cls);
  },
});

async function stats(app: FastifyInstance, headers: Record<string, string> = {}): Promise<StatsBody> {
  const res = await app.inject({ method: 'GET', url: '/stats', headers });
  expect(res.statusCode).toBe(200);
  // The documented shape, strictly: a field added or renamed fails here.
  return StatsResponse.parse(res.json()) as StatsBody;
}

function finishedCall(tool: string | undefined, durationMs: number, over: Partial<FinishedCall> = {}): FinishedCall {
  return {
    id: 'ex_1',
    toolUseId: 'tu',
    sessionId: 's',
    name: tool ?? 'Nope',
    rawInput: {},
    inputDigest: '',
    createdAt: 0,
    startedPerf: 0,
    actor: null,
    timings: {},
    hookMessages: [],
    status: 'succeeded',
    tool: tool === undefined ? undefined : ({ name: tool } as FinishedCall['tool']),
    input: undefined,
    decision: undefined,
    block: { type: 'tool_result', tool_use_id: 'tu', content: '' },
    errorClass: null,
    resultId: null,
    finishedAt: 0,
    durationMs,
    ...over,
  };
}

describe('the latency histogram', () => {
  it('puts each duration in a bucket at most 10% wide that holds it', () => {
    for (const ms of [0.0011, 0.0999, 0.5, 1, 1.05, 2.5, 9.99, 123.4, 4567, 59_999, 599_000]) {
      const i = bucketOf(ms);
      expect(bucketLow(i)).toBeLessThanOrEqual(ms);
      expect(bucketHigh(i)).toBeGreaterThan(ms);
      expect((bucketHigh(i) - bucketLow(i)) / bucketLow(i)).toBeLessThanOrEqual(0.1 + 1e-9);
    }
    expect(bucketOf(0)).toBe(0);
    expect(bucketOf(Number.NaN)).toBe(0);
    expect(bucketOf(5e6)).toBe(BUCKETS - 1);
  });

  it('reports percentiles within 5% of the exact ones', () => {
    const counts = new Float64Array(BUCKETS);
    const values: number[] = [];
    // A skewed distribution over four decades.
    for (let i = 1; i <= 2000; i++) values.push(0.05 * Math.pow(1.005, i));
    for (const v of values) counts[bucketOf(v)]! += 1;
    values.sort((a, b) => a - b);
    const qs = [0.01, 0.5, 0.95, 0.99];
    const got = quantiles(counts, values.length, qs, values[0]!, values[values.length - 1]!);
    qs.forEach((q, i) => {
      const exact = values[Math.ceil(q * values.length) - 1]!;
      expect(Math.abs(got[i]! - exact) / exact).toBeLessThanOrEqual(0.05);
    });
    expect(quantiles(counts, 0, qs, 0, 0)).toEqual([null, null, null, null]);
  });

  it('counts calls per tool, status and class, and decisions per reason and behaviour', () => {
    const s = new CallStats();
    const decision = (type: 'rule' | 'mode', behavior: 'allow' | 'deny') => ({ behavior, reason: { type, detail: '' }, message: undefined, chain: [] });
    s.record(finishedCall('Read', 2, { decision: decision('rule', 'allow') }));
    s.record(finishedCall('Read', 4, { status: 'failed', errorClass: 'not_found', decision: decision('rule', 'allow') }));
    s.record(finishedCall('Bash', 8, { status: 'denied', errorClass: 'permission', decision: decision('mode', 'deny') }));
    s.record(finishedCall(undefined, 1, { status: 'failed', errorClass: 'not_found' }));
    const v = s.view();
    expect(Object.keys(v)).toEqual([UNKNOWN_TOOL, 'Bash', 'Read'].sort());
    expect(v.Read).toMatchObject({ calls: 2, statuses: { succeeded: 1, failed: 1 }, errors: { not_found: 1 } });
    expect(v.Read!.duration_ms).toMatchObject({ min: 2, max: 4, mean: 3 });
    expect(v.Bash).toMatchObject({ calls: 1, statuses: { denied: 1 }, errors: { permission: 1 } });
    expect(s.decisionView()).toEqual({ mode: { deny: 1 }, rule: { allow: 2 } });
  });
});

describe('GET /stats', () => {
  it('reports calls, statuses, errors by class, durations and decisions per tool', async () => {
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({}), failer] });
    await execute(t.app, { tool_uses: [use('Probe', { value: 'a' }), use('Probe', { value: 'b' }), use('Failer', { cls: 'io' })] });
    await execute(t.app, { tool_uses: [use('Failer', { cls: 'network' }), use('NoSuchTool', {}), use('AnotherMissingTool', {})] });
    const body = await stats(t.app);
    expect(body.tools.Probe).toMatchObject({ calls: 2, statuses: { succeeded: 2 }, errors: {} });
    expect(body.tools.Failer).toMatchObject({ calls: 2, statuses: { failed: 2 }, errors: { io: 1, network: 1 } });
    // Names the caller made up are one bounded entry, not one each.
    expect(body.tools[UNKNOWN_TOOL]).toMatchObject({ calls: 2, errors: { not_found: 2 } });
    expect(Object.keys(body.tools)).not.toContain('NoSuchTool');
    const d = body.tools.Probe!.duration_ms;
    expect(d.p50).not.toBeNull();
    expect(d.min!).toBeLessThanOrEqual(d.p50!);
    expect(d.p50!).toBeLessThanOrEqual(d.p95!);
    expect(d.p95!).toBeLessThanOrEqual(d.max!);
    expect(body.totals).toEqual({ calls: 6, errors: 4 });
    expect(body.decisions.rule).toEqual({ allow: 2 });
    expect(body.decisions.tool).toEqual({ allow: 2 });
    expect(typeof body.since).toBe('string');
    expect(body.resolution).toContain('5%');
  });

  it('does not read the executions or the audit log', async () => {
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    await execute(t.app, { tool_uses: [use('Probe', { value: 'a' })] });
    const before = await stats(t.app);
    t.app.toolexec.db.exec('DELETE FROM audit; DELETE FROM executions;');
    expect(await stats(t.app)).toEqual(before);
    expect(before.tools.Probe!.calls).toBe(1);
  });

  it('needs the read scope', async () => {
    const token = 'r'.repeat(24);
    const exec = 'e'.repeat(24);
    t = await makeApp({ server: { tokens: [{ name: 'reader', token, scopes: ['read'] }, { name: 'runner', token: exec, scopes: ['execute'] }] } });
    expect((await t.app.inject({ method: 'GET', url: '/stats' })).statusCode).toBe(401);
    const denied = await t.app.inject({ method: 'GET', url: '/stats', headers: { authorization: `Bearer ${exec}` } });
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ error: { code: 'TOOLEXEC_ERR_AUTH_SCOPE' } });
    await stats(t.app, { authorization: `Bearer ${token}` });
  });

  it('survives a restart: the aggregates are written on close and loaded at start', async () => {
    const root = tmpDir();
    fs.mkdirSync(path.join(root, 'ws'));
    const config: ConfigInput = {
      workspace: { root: path.join(root, 'ws') },
      storage: { path: path.join(root, 'db.sqlite') },
      permissions: { allow: ['Probe'] },
    };
    const first = await buildApp({ logger: false, config, extraTools: [probeTool({}), failer] });
    await execute(first, { tool_uses: [use('Probe', { value: 'a' }), use('Failer', { cls: 'timeout' })] });
    const before = await stats(first);
    await first.close();

    const second = await buildApp({ logger: false, config, extraTools: [probeTool({}), failer] });
    open.push(second);
    const after = await stats(second);
    expect(after).toEqual(before);
    await execute(second, { tool_uses: [use('Probe', { value: 'b' })] });
    const more = await stats(second);
    expect(more.tools.Probe!.calls).toBe(2);
    expect(more.tools.Failer).toMatchObject({ calls: 1, errors: { timeout: 1 } });
    expect(more.since).toBe(before.since);
  });

  it('writes changed aggregates periodically, without waiting for close', async () => {
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})], observability: { flushMs: 20 } });
    await execute(t.app, { tool_uses: [use('Probe', { value: 'a' }), use('Probe', { value: 'b' })] });
    const reader = new Database(t.dbPath, { readonly: true });
    try {
      // A flush may land between the two calls: the next one brings the second.
      const row = await poll(() => {
        const r = reader.prepare(`SELECT calls, outcomes, histogram FROM call_stats WHERE tool = 'Probe'`).get() as
          | { calls: number; outcomes: string; histogram: string }
          | undefined;
        return r?.calls === 2 ? r : undefined;
      });
      expect(JSON.parse(row.outcomes)).toEqual({ succeeded: { none: 2 } });
      const buckets = JSON.parse(row.histogram) as Array<[number, number]>;
      expect(buckets.reduce((n, [, c]) => n + c, 0)).toBe(2);
    } finally {
      reader.close();
    }
  });
});

async function poll<T>(fn: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
