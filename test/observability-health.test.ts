/**
 * /healthz and /readyz: open; ready when the database takes a committed
 * write and the writer is not failing, with MCP states reported and gating
 * only for servers configured `required: true`; 503 during shutdown.
 */
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ReadinessReport } from '../src/observability/readiness.js';
import { ReadinessResponse } from '../src/http/routes/health.js';
import { cleanupTmp, makeApp, type TestApp } from './helpers.js';
import { fixtureStdio, makeMcpApp, waitConnected, waitFor } from './helpers-mcp.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

async function readyz(app: FastifyInstance): Promise<{ status: number; body: ReadinessReport['body'] }> {
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  // The documented shape, strictly, for both answers.
  return { status: res.statusCode, body: ReadinessResponse.parse(res.json()) as ReadinessReport['body'] };
}

const TOKEN = 'k'.repeat(32);

describe('/healthz and /readyz', () => {
  it('answer without a token when tokens are configured', async () => {
    t = await makeApp({ server: { tokens: [{ name: 'ops', token: TOKEN }] } });
    const h = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(h.statusCode).toBe(200);
    expect(h.json()).toEqual({ status: 'ok' });
    const r = await readyz(t.app);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready', checks: { database: 'ok', mcp: { total: 0, connected: 0, servers: {}, required: [] } } });
  });

  it('is not ready while another connection holds the database’s write lock, and ready once it lets go', async () => {
    t = await makeApp({}, { observability: { readinessCacheMs: 0 } });
    const other = new Database(t.dbPath);
    try {
      other.exec('BEGIN IMMEDIATE');
      const r = await readyz(t.app);
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('not_ready');
      expect(r.body.failing).toEqual(['database']);
      expect(r.body.checks.database).toContain('SQLITE_BUSY');
      // Liveness is not readiness.
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      other.exec('ROLLBACK');
      expect((await readyz(t.app)).status).toBe(200);
    } finally {
      other.close();
    }
  });

  it('is not ready after the writer failed for a storage reason, and recovers through its own probe', async () => {
    t = await makeApp({}, { observability: { readinessCacheMs: 0 } });
    const writer = t.app.toolexec.writer;
    // A transient I/O error: the write fails once, then succeeds when tried again.
    let failures = 1;
    await writer
      .write(() => {
        if (failures-- > 0) throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_WRITE');
      })
      .catch(() => undefined);
    const r = await readyz(t.app);
    expect(r.status).toBe(503);
    expect(r.body.checks.database).toContain('SQLITE_IOERR_WRITE');
    // The probe it queued commits, which clears the writer's failure.
    await waitFor(async () => (await readyz(t!.app)).status === 200, 'readiness to recover');
    expect(writer.failing).toBeUndefined();
  });

  it('stays ready when one write fails a constraint: a bad row is not a bad database', async () => {
    t = await makeApp({}, { observability: { readinessCacheMs: 0 } });
    const db = t.app.toolexec.db;
    await t.app.toolexec.writer
      .write(() => {
        db.prepare('INSERT INTO health_probe (id, ts) VALUES (2, 0)').run();
      })
      .catch(() => undefined);
    expect(t.app.toolexec.writer.failing).toBeDefined();
    expect((await readyz(t.app)).status).toBe(200);
  });

  it('reports MCP servers without gating on them, unless one is required', async () => {
    t = await makeMcpApp({ mcpServers: { good: fixtureStdio(), broken: { command: '/nonexistent/mcp-server' } } });
    await waitConnected(t.app, ['good']);
    const r = await readyz(t.app);
    expect(r.status).toBe(200);
    expect(r.body.checks.mcp).toMatchObject({ total: 2, connected: 1, required: [] });
    expect(r.body.checks.mcp.servers.good).toBe('connected');
    expect(r.body.checks.mcp.servers.broken).not.toBe('connected');
    await t.close();

    t = await makeMcpApp({ mcpServers: { good: { ...fixtureStdio(), required: true }, broken: { command: '/nonexistent/mcp-server', required: true } } });
    await waitConnected(t.app, ['good']);
    const red = await readyz(t.app);
    expect(red.status).toBe(503);
    expect(red.body.failing).toEqual(['mcp:broken']);
    expect(red.body.checks.database).toBe('ok');
    expect(red.body.checks.mcp.required).toEqual(['broken', 'good']);
  });

  it('is not ready once a shutdown has begun, while /healthz still answers', async () => {
    t = await makeApp();
    expect((await readyz(t.app)).status).toBe(200);
    t.app.toolexec.closing = true;
    const r = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(r.statusCode).toBe(503);
    expect(r.json()).toMatchObject({ status: 'not_ready', failing: ['shutting_down'] });
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
