/**
 * Retention on a real SQLite file: old audit rows, executions, answered
 * permission requests and stored results go; recent ones and those a running
 * call refers to stay; the size cap removes the oldest first; work is done in
 * batches with the event loop turning between them.
 */
import { z } from 'zod';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Services } from '../src/services.js';
import { MIN_AGE_MS, Retention } from '../src/storage/retention.js';
import { buildTool } from '../src/tool/build-tool.js';
import { cleanupTmp, execute, makeApp, use, type TestApp } from './helpers.js';
import { waitFor } from './helpers-mcp.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const DAY = 86_400_000;
const now = Date.now();

function svc(): Services {
  return t!.app.toolexec;
}

function count(table: string, where = '1'): number {
  return (svc().db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get() as { n: number }).n;
}

function insertAudit(ts: number, executionId = `ex_old_${ts}_${Math.random()}`): void {
  svc()
    .db.prepare(
      `INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, input_digest)
       VALUES (?, 's', 'tu', ?, 'Read', 'allow', 'rule', 'd')`,
    )
    .run(ts, executionId);
}

let seq = 0;
function insertExecution(createdAt: number, status = 'succeeded'): string {
  const id = `ex_test_${++seq}`;
  svc()
    .db.prepare(
      `INSERT INTO executions (id, session_id, tool_use_id, tool, status, input_digest, created_at, finished_at)
       VALUES (?, 's', ?, 'Read', ?, 'd', ?, ?)`,
    )
    .run(id, `tu_${seq}`, status, createdAt, createdAt + 1);
  return id;
}

function insertRequest(createdAt: number, status: string): void {
  svc()
    .db.prepare(
      `INSERT INTO permission_requests (id, session_id, execution_id, tool_use_id, tool, input, input_digest, summary, suggested_rule,
         reason_type, status, created_at, expires_at)
       VALUES (?, 's', 'ex', 'tu', 'Bash', '{}', 'd', 'x', 'Bash', 'rule', ?, ?, ?)`,
    )
    .run(`req_${++seq}`, status, createdAt, createdAt + 1000);
}

/** A stored result of `bytes` ASCII bytes, created at `createdAt`. */
function putResult(createdAt: number, bytes: number, executionId?: string): string {
  const meta = svc().results.put({ sessionId: 's', tool: 'Bash', ...(executionId ? { executionId } : {}) }, 'x'.repeat(bytes));
  svc().db.prepare('UPDATE results SET created_at = ? WHERE id = ?').run(createdAt, meta.id);
  return meta.id;
}

function resultIds(): string[] {
  return (svc().db.prepare('SELECT id FROM results ORDER BY created_at, id').all() as Array<{ id: string }>).map((r) => r.id);
}

/** Spills its output to a stored result, then runs until cancelled. */
const streamer = buildTool({
  name: 'Streamer',
  description: 'Writes a large output and waits to be cancelled',
  inputSchema: z.strictObject({}),
  maxResultSizeChars: 100_000,
  isReadOnly: () => true,
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
  call: async (_input, ctx) => {
    const out = ctx.createOutput();
    out.write('y'.repeat(5000));
    await new Promise<void>((_, reject) => {
      ctx.signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
    });
    return { data: out.finish() };
  },
});

describe('retention', () => {
  it('prunes old audit rows, finished executions and answered requests; keeps recent and unfinished ones', async () => {
    t = await makeApp({ retention: { auditMaxAgeDays: 30 } });
    for (let i = 0; i < 5; i++) insertAudit(now - 40 * DAY + i);
    insertAudit(now - 10 * DAY);
    const oldDone = insertExecution(now - 40 * DAY);
    const oldFailed = insertExecution(now - 39 * DAY, 'failed');
    const oldRunning = insertExecution(now - 38 * DAY, 'running');
    const recent = insertExecution(now - DAY);
    insertRequest(now - 40 * DAY, 'denied');
    insertRequest(now - 40 * DAY, 'pending');
    insertRequest(now - DAY, 'allowed');

    const r = await svc().retention.runOnce();
    expect(r).toMatchObject({ audit: 5, executions: 2, permissionRequests: 1 });
    expect(count('audit')).toBe(1);
    const left = (svc().db.prepare('SELECT id FROM executions ORDER BY seq').all() as Array<{ id: string }>).map((x) => x.id);
    expect(left).toEqual([oldRunning, recent]);
    expect(left).not.toContain(oldDone);
    expect(left).not.toContain(oldFailed);
    expect(count('permission_requests')).toBe(2);
    expect(count('permission_requests', `status = 'pending'`)).toBe(1);
  });

  it('prunes results by age, chunks included, and never one younger than the floor', async () => {
    t = await makeApp({ retention: { resultsMaxAgeDays: 7 } });
    const old1 = putResult(now - 10 * DAY, 200_000);
    const old2 = putResult(now - 8 * DAY, 100);
    const week = putResult(now - 6 * DAY, 100);
    expect(count('result_chunks', `result_id = '${old1}'`)).toBeGreaterThan(1);
    const r = await svc().retention.runOnce();
    expect(r.resultsByAge).toBe(2);
    expect(r.bytesFreed).toBe(200_100);
    expect(resultIds()).toEqual([week]);
    expect(count('result_chunks', `result_id IN ('${old1}', '${old2}')`)).toBe(0);

    // A configured age shorter than the floor still leaves a result that is minutes old.
    await t.close();
    t = await makeApp({ retention: { resultsMaxAgeDays: 0.00001 } });
    const minuteOld = putResult(now - 60_000, 100);
    const hourOld = putResult(now - 3_600_000, 100);
    await svc().retention.runOnce();
    expect(resultIds()).toEqual([minuteOld]);
    expect(resultIds()).not.toContain(hourOld);
    expect(MIN_AGE_MS).toBeGreaterThan(60_000);
  });

  it('keeps the rows of a call that is still running, however old they look', async () => {
    t = await makeApp(
      { retention: { resultsMaxAgeDays: 1, auditMaxAgeDays: 1 }, results: { persistThresholdChars: 1000 } },
      { extraTools: [streamer] },
    );
    const r = await execute(t.app, { tool_uses: [use('Streamer', {})], wait: false });
    const id = r.body.executions[0]!.id;
    await waitFor(() => count('results', `execution_id = '${id}'`) === 1 && count('audit', `execution_id = '${id}'`) === 1, 'the running call to store its output');
    expect(svc().registry.get(id)).toBeDefined();
    const finished = putResult(now - 5 * DAY, 100, 'ex_finished_long_ago');
    // Everything looks a week old.
    svc().db.exec(`UPDATE results SET created_at = ${now - 7 * DAY}; UPDATE audit SET ts = ${now - 7 * DAY}; UPDATE executions SET created_at = ${now - 7 * DAY}`);

    const report = await svc().retention.runOnce();
    expect(report.resultsByAge).toBe(1);
    expect(resultIds()).not.toContain(finished);
    expect(count('results', `execution_id = '${id}'`)).toBe(1);
    expect(count('audit', `execution_id = '${id}'`)).toBe(1);
    expect(count('executions', `id = '${id}'`)).toBe(1);

    svc().registry.cancel(id);
    await waitFor(() => svc().registry.get(id) === undefined, 'the call to end');
    svc().db.exec(`UPDATE audit SET ts = ${now - 7 * DAY}; UPDATE executions SET created_at = ${now - 7 * DAY}`);
    const after = await svc().retention.runOnce();
    expect(after).toMatchObject({ audit: 1, executions: 1 });
  });

  it('caps the stored results’ total size, oldest first, sparing recent and live ones', async () => {
    t = await makeApp({ retention: { resultsMaxBytes: 25_000 } });
    const ids = [5, 4, 3, 2, 1].map((d) => putResult(now - d * DAY, 10_000));
    const recent = putResult(now - 60_000, 10_000);
    const r = await svc().retention.runOnce();
    // 60,000 bytes against a cap of 25,000: the four oldest go (40,000 freed).
    expect(r).toMatchObject({ resultsBySize: 4, bytesFreed: 40_000 });
    expect(resultIds()).toEqual([ids[4], recent]);

    // Below the cap nothing more goes; recent results stay even when they alone exceed it.
    await t.close();
    t = await makeApp({ retention: { resultsMaxBytes: 5_000 } });
    const fresh = [putResult(now - 60_000, 10_000), putResult(now - 30_000, 10_000)];
    expect((await svc().retention.runOnce()).resultsBySize).toBe(0);
    expect(resultIds()).toEqual(fresh);
  });

  it('works in batches, letting the event loop turn between them', async () => {
    t = await makeApp();
    for (let i = 0; i < 10; i++) insertAudit(now - 40 * DAY + i);
    for (let i = 0; i < 10; i++) insertExecution(now - 40 * DAY + i);
    for (let i = 0; i < 10; i++) putResult(now - 40 * DAY + i, 100);
    for (let i = 0; i < 7; i++) insertRequest(now - 40 * DAY + i, 'expired');
    const retention = new Retention(svc().db, {
      auditMaxAgeDays: 30,
      resultsMaxAgeDays: 30,
      intervalMs: 3_600_000,
      isLive: () => false,
      log: svc().log,
      batchRows: 3,
    });
    const order: string[] = [];
    const run = retention.runOnce().then((r) => {
      order.push('done');
      return r;
    });
    setImmediate(() => order.push('turn'));
    const r = await run;
    expect(r).toMatchObject({ audit: 10, executions: 10, permissionRequests: 7, resultsByAge: 10 });
    expect(order).toEqual(['turn', 'done']);
    expect(count('audit') + count('executions') + count('results') + count('permission_requests')).toBe(0);
  });

  it('prunes a large backlog in batches that each walk an index from where the last stopped (no sort of the whole backlog)', async () => {
    t = await makeApp();
    const db = svc().db;
    const OLD = 60_000;
    // Built in SQL, in one transaction: 60,000 old audit rows (three per millisecond) and 3,000 old results, then young ones.
    db.exec(`
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${OLD - 1})
      INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, input_digest)
        SELECT ${now - 40 * DAY} + i / 3, 's' || (i % 100), 'tu' || i, 'ex_old_' || i, 'Read', 'allow', 'rule', 'd' FROM n;
      WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)
      INSERT INTO results (id, session_id, execution_id, tool, total_bytes, complete, created_at)
        SELECT 'res_old_' || i, 's', 'ex_old_' || i, 'Bash', 10, 1, ${now - 40 * DAY} + i / 3 FROM n;`);
    for (let i = 0; i < 5; i++) insertAudit(now - DAY + i);
    const retention = new Retention(db, { auditMaxAgeDays: 30, resultsMaxAgeDays: 30, intervalMs: 3_600_000, isLive: () => false, log: svc().log });
    // Each batch's query walks audit_ts / results_created from the previous batch's last row and stops after
    // a batch: no temporary B-tree, which would gather and sort every old row of the backlog for each batch.
    const q = (retention as unknown as { q: Record<string, { source: string }> }).q;
    for (const name of ['audit', 'results']) {
      const sql = q[name]!.source;
      const params = new Array<number>(sql.split('?').length - 1).fill(0);
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
      expect(plan, name).not.toMatch(/TEMP B-TREE|SCAN/);
      expect(plan, name).toMatch(/USING INDEX (audit_ts|results_created)/);
    }
    let turns = 0;
    let done = false;
    const tick = (): void => {
      if (done) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const r = await retention.runOnce();
    done = true;
    expect(r).toMatchObject({ audit: OLD, resultsByAge: 3000 });
    expect(count('audit')).toBe(5);
    expect(count('results')).toBe(0);
    // One batch of 500 per turn of the event loop: the calls served meanwhile waited for one batch at most.
    expect(turns).toBeGreaterThanOrEqual(OLD / 500 + 3000 / 500 - 1);
  });

  it('runs on its timer once configured, and stops with the service', async () => {
    t = await makeApp({ retention: { auditMaxAgeDays: 30, intervalMs: 50 } });
    insertAudit(now - 40 * DAY);
    insertAudit(now - DAY);
    await waitFor(() => count('audit') === 1, 'the timer to prune');
    const retention = svc().retention;
    await retention.stop();
    // Stopped: no timer is armed, and old rows stay.
    expect((retention as unknown as { timer: unknown }).timer).toBeUndefined();
    insertAudit(now - 40 * DAY);
    await new Promise((r) => setTimeout(r, 200));
    expect(count('audit')).toBe(2);
    await t.close();
    t = undefined;
  });

  it('does nothing when nothing is configured', async () => {
    t = await makeApp();
    insertAudit(now - 400 * DAY);
    putResult(now - 400 * DAY, 100);
    expect(svc().retention.enabled).toBe(false);
    expect(await svc().retention.runOnce()).toMatchObject({ audit: 0, executions: 0, resultsByAge: 0, resultsBySize: 0 });
    expect(count('audit')).toBe(1);
    expect(count('results')).toBe(1);
  });
});

describe('retention and idempotency', () => {
  it('a tool_use id whose execution was pruned runs again rather than being refused', async () => {
    const probe = buildTool({
      name: 'Counter',
      description: 'Counts its calls',
      inputSchema: z.strictObject({}),
      maxResultSizeChars: 1000,
      checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
      call: async () => ({ data: 'counted' }),
    });
    t = await makeApp({ retention: { auditMaxAgeDays: 1 } }, { extraTools: [probe] });
    const first = await execute(t.app, { session_id: 'ret', tool_uses: [use('Counter', {}, 'again')] });
    expect(first.body.executions[0]!.status).toBe('succeeded');
    await svc().retention.runOnce(now + 10 * DAY);
    expect(count('executions')).toBe(0);
    const second = await execute(t.app, { session_id: 'ret', tool_uses: [use('Counter', {}, 'again')] });
    expect(second.status).toBe(200);
    expect(second.body.executions[0]).toMatchObject({ status: 'succeeded' });
    expect(second.body.executions[0]!.replayed).toBeUndefined();
  });
});
