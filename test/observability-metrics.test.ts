/**
 * GET /metrics: Prometheus text from the app's own registry, open without a
 * token, with bounded labels; gauges read their sources at scrape time.
 */
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DURATION_BUCKETS_SECONDS } from '../src/observability/metrics.js';
import { cleanupTmp, execute, makeApp, probeTool, sleepTool, use, type TestApp } from './helpers.js';
import { fixtureStdio, makeMcpApp, waitConnected, waitFor } from './helpers-mcp.js';

const apps: TestApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
afterAll(cleanupTmp);

async function app(...args: Parameters<typeof makeApp>): Promise<TestApp> {
  const a = await makeApp(...args);
  apps.push(a);
  return a;
}

interface SampleLine {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parse(text: string): SampleLine[] {
  const out: SampleLine[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function value(samples: SampleLine[], name: string, labels: Record<string, string> = {}): number | undefined {
  const s = samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}

async function scrape(a: FastifyInstance): Promise<{ text: string; samples: SampleLine[] }> {
  const res = await a.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toContain('text/plain');
  return { text: res.body, samples: parse(res.body) };
}

describe('GET /metrics', () => {
  it('is open, and counts calls by tool, status and error class, with per-tool duration histograms', async () => {
    const token = 't'.repeat(24);
    const a = await app({ server: { tokens: [{ name: 'ops', token }] }, permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    const headers = { authorization: `Bearer ${token}` };
    await execute(a.app, { tool_uses: [use('Probe', { value: 'x' }), use('Probe', { value: 'y' }), use('Probe', { nope: 1 }), use('Missing', {})] }, headers);
    const { samples, text } = await scrape(a.app);
    expect(value(samples, 'toolexec_tool_calls_total', { tool: 'Probe', status: 'succeeded', error_class: 'none' })).toBe(2);
    expect(value(samples, 'toolexec_tool_calls_total', { tool: 'Probe', status: 'failed', error_class: 'validation' })).toBe(1);
    expect(value(samples, 'toolexec_tool_calls_total', { tool: '<unknown>', status: 'failed', error_class: 'not_found' })).toBe(1);
    expect(text).not.toContain('Missing');

    const buckets = samples.filter((s) => s.name === 'toolexec_tool_call_duration_seconds_bucket' && s.labels.tool === 'Probe');
    expect(buckets.map((b) => b.labels.le)).toEqual([...DURATION_BUCKETS_SECONDS.map(String), '+Inf']);
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    expect(buckets.at(-1)!.value).toBe(3);
    expect(value(samples, 'toolexec_tool_call_duration_seconds_count', { tool: 'Probe' })).toBe(3);
    expect(value(samples, 'toolexec_tool_call_duration_seconds_sum', { tool: 'Probe' })).toBeGreaterThan(0);
    expect(value(samples, 'toolexec_permission_decisions_total', { reason_type: 'rule', behavior: 'allow' })).toBe(2);

    // Never labelled by session, execution or request.
    const labelNames = new Set(samples.flatMap((s) => Object.keys(s.labels)));
    for (const n of ['session_id', 'session', 'execution_id', 'tool_use_id', 'request_id']) expect(labelNames.has(n)).toBe(false);
  });

  it('reports calls in flight and pending permission requests as they are', async () => {
    const a = await app(
      { permissions: { ask: ['SafeSleep'], headless: 'wait' } },
      { extraTools: [sleepTool({ safe: true })] },
    );
    const r = await execute(a.app, { tool_uses: [use('SafeSleep', { ms: 1, tag: 'a' })], wait: false });
    expect(r.status).toBe(202);
    await waitFor(() => a.app.toolexec.broker.pendingCount === 1, 'the permission request');
    let { samples } = await scrape(a.app);
    expect(value(samples, 'toolexec_permission_requests_pending')).toBe(1);
    expect(value(samples, 'toolexec_executions_in_flight')).toBe(1);

    const id = r.body.executions[0]!.id;
    expect((await a.app.inject({ method: 'POST', url: `/executions/${id}/cancel` })).statusCode).toBeLessThan(300);
    await waitFor(() => a.app.toolexec.registry.size === 0, 'the call to end');
    ({ samples } = await scrape(a.app));
    expect(value(samples, 'toolexec_permission_requests_pending')).toBe(0);
    expect(value(samples, 'toolexec_executions_in_flight')).toBe(0);
    expect(value(samples, 'toolexec_tool_calls_total', { tool: 'SafeSleep', status: 'cancelled' })).toBe(1);
  });

  it('counts open websocket connections', async () => {
    const a = await app();
    await a.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (a.app.server.address() as { port: number }).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    await new Promise<void>((resolve, reject) => {
      ws.once('message', () => resolve());
      ws.once('error', reject);
    });
    try {
      const { samples } = await scrape(a.app);
      expect(value(samples, 'toolexec_websocket_connections')).toBe(1);
    } finally {
      ws.close();
    }
    await waitFor(() => a.app.toolexec.hub.connections === 0, 'the websocket to close');
    expect(value((await scrape(a.app)).samples, 'toolexec_websocket_connections')).toBe(0);
  });

  it('reports each MCP server’s state, one state at 1', async () => {
    const a = await makeMcpApp({ mcpServers: { good: fixtureStdio(), broken: { command: '/nonexistent/mcp-server' } } });
    apps.push(a);
    await waitConnected(a.app, ['good']);
    await waitFor(() => a.app.toolexec.mcp.status().find((s) => s.name === 'broken')?.state !== 'connecting', 'the broken server to fail');
    const { samples } = await scrape(a.app);
    expect(value(samples, 'toolexec_mcp_server_state', { server: 'good', state: 'connected' })).toBe(1);
    for (const server of ['good', 'broken']) {
      const states = samples.filter((s) => s.name === 'toolexec_mcp_server_state' && s.labels.server === server);
      expect(states).toHaveLength(5);
      expect(states.reduce((n, s) => n + s.value, 0)).toBe(1);
    }
    expect(value(samples, 'toolexec_mcp_server_state', { server: 'broken', state: 'connected' })).toBe(0);
    expect(value(samples, 'toolexec_mcp_server_tools', { server: 'good' })).toBeGreaterThan(0);
  });

  it('includes process metrics, and two apps in one process keep their own counts', async () => {
    const one = await app({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    const two = await app({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    await execute(one.app, { tool_uses: [use('Probe', { value: 'a' })] });
    const s1 = (await scrape(one.app)).samples;
    const s2 = (await scrape(two.app)).samples;
    expect(value(s1, 'toolexec_tool_calls_total', { tool: 'Probe' })).toBe(1);
    expect(value(s2, 'toolexec_tool_calls_total', { tool: 'Probe' })).toBeUndefined();
    for (const s of [s1, s2]) {
      expect(value(s, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(value(s, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    }
  });
});

/** What operators build dashboards from: the README names every toolexec_* family /metrics exports, with its labels. */
describe('the README’s metrics', () => {
  it('are the toolexec_* families GET /metrics exports, with the labels their samples carry', async () => {
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('\n## Observability\n'), readme.indexOf('\n## Benchmarks\n'));
    const documented = new Map([...section.matchAll(/`(toolexec_[a-z_]+)(?:\{([a-z_,]*)\})?`/g)].map((m) => [m[1]!, (m[2] ?? '').split(',').filter(Boolean).sort()]));
    const a = await makeMcpApp({ permissions: { allow: ['Probe'] }, mcpServers: { good: fixtureStdio() } }, { extraTools: [probeTool({})] });
    apps.push(a);
    await waitConnected(a.app, ['good']);
    await execute(a.app, { tool_uses: [use('Probe', { value: 'a' })] });
    const { text, samples } = await scrape(a.app);
    const families = [...text.matchAll(/^# TYPE (toolexec_\w+) /gm)].map((m) => m[1]!);
    expect([...documented.keys()].sort()).toEqual([...families].sort());
    for (const family of families) {
      const sample = samples.find((x) => x.name === family || x.name === `${family}_count`);
      expect(sample, family).toBeDefined();
      expect(Object.keys(sample!.labels).sort(), family).toEqual(documented.get(family));
    }
  });
});
