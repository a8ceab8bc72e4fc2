/**
 * A long history on a real SQLite file (300,000 audit rows and 300,000
 * executions, built once in SQL): GET /audit and GET /executions with every
 * documented filter walk an index from the
 * cursor and looks at a bounded window of rows per page, so that a rare
 * filter never blocks the service for a scan of the whole table; paging
 * finds every matching row exactly once, in order, while rows are added and
 * retention prunes the oldest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_FLOOR_SQL, AUDIT_SCAN_ROWS, AUDIT_SESSION_FLOOR_SQL, AUDIT_SINCE_PROBE_SQL, auditSelect, type AuditQuery } from '../src/storage/audit.js';
import { EXECUTIONS_FLOOR_SQL, EXECUTIONS_SCAN_ROWS, EXECUTIONS_SESSION_FLOOR_SQL, executionsSelect, type ListFilter } from '../src/storage/executions.js';
import { MAX_SESSIONS_IN_MEMORY, TOOL_USE_LOAD_ROWS } from '../src/sessions/store.js';
import { cleanupTmp, makeApp, type TestApp } from './helpers.js';

let t: TestApp;
const ROWS = 300_000;
const T0 = Date.now() - 30 * 86_400_000;

beforeAll(async () => {
  t = await makeApp();
  // One row a second from T0; every 10,000th is a rare tool, a timeout and a deny; 100 sessions.
  t.app.toolexec.db.exec(`
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
    INSERT INTO audit (id, ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
      SELECT i, ${T0} + i * 1000, 's' || (i % 100), 'tu' || i, 'ex' || i,
             CASE WHEN i % 10000 = 0 THEN 'Rare' ELSE 'Read' END,
             CASE WHEN i % 10000 = 0 THEN 'deny' ELSE 'allow' END,
             CASE WHEN i % 10000 = 0 THEN 'timeout' ELSE 'rule' END,
             'd', 'agent', 'x' FROM n;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
    INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, error_class, is_error, created_at, finished_at, duration_ms)
      SELECT i, 'ex_h' || i, 's' || (i % 100), 'tu' || i,
             CASE WHEN i % 10000 = 0 THEN 'Rare' ELSE 'Read' END,
             CASE WHEN i % 10000 = 5000 THEN 'denied' ELSE 'succeeded' END,
             'x', NULL, 0, ${T0} + i * 1000, ${T0} + i * 1000 + 1, 1 FROM n;`);
}, 120_000);
afterAll(async () => {
  await t.close();
  cleanupTmp();
});

// Response bodies are checked field by field below.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function pages(query: string, between?: () => void): Promise<{ ids: number[]; pages: number }> {
  const ids: number[] = [];
  let cursor: string | null = null;
  let n = 0;
  do {
    const r = await t.app.inject({ url: `/audit?${query}${cursor ? `&cursor=${cursor}` : ''}` });
    expect(r.statusCode).toBe(200);
    const body = r.json() as Json;
    ids.push(...body.entries.map((e: Json) => e.id));
    cursor = body.next_cursor;
    n++;
    between?.();
    if (n > 1000) throw new Error('too many pages');
  } while (cursor !== null);
  return { ids, pages: n };
}

function plan(sql: string, params: unknown[]): string {
  return (t.app.toolexec.db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
}

const since = T0 + (ROWS - 50) * 1000;
const until = T0 + 50_000 * 1000;
const FILTERS: Array<[string, Omit<AuditQuery, 'limit'>, string]> = [
  ['tool=Rare', { tool: 'Rare' }, "tool = 'Rare'"],
  ['behavior=deny', { behavior: 'deny' }, "behavior = 'deny'"],
  ['reason=timeout', { reason: 'timeout' }, "reason_type = 'timeout'"],
  [`since=${since}`, { since }, `ts >= ${since}`],
  [`until=${until}`, { until }, `ts <= ${until}`],
  [`since=${T0}&until=${until}`, { since: T0, until }, `ts >= ${T0} AND ts <= ${until}`],
  ['session_id=s0&tool=Rare', { sessionId: 's0', tool: 'Rare' }, "session_id = 's0' AND tool = 'Rare'"],
  ['session_id=s7', { sessionId: 's7' }, "session_id = 's7'"],
  ['', {}, '1'],
];

describe('GET /audit over 300,000 rows', () => {
  it('walks an index from the cursor for every filter: no scan of the table, no sort', () => {
    for (const [name, f] of FILTERS) {
      const { sql, params } = auditSelect({ ...f, beforeId: 200_000, atLeastId: 180_000, limit: 101 });
      const p = plan(sql, params);
      expect(p, name).not.toMatch(/TEMP B-TREE|SCAN audit(?! USING)/);
      expect(p, name).toMatch(/SEARCH audit USING (INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)|INDEX audit_session \(session_id=\? AND rowid>\? AND rowid<\?\)|INDEX audit_session)/);
    }
    expect(plan(AUDIT_FLOOR_SQL, [200_000, AUDIT_SCAN_ROWS])).toMatch(/SEARCH audit USING INTEGER PRIMARY KEY \(rowid<\?\)/);
    expect(plan(AUDIT_SESSION_FLOOR_SQL, ['s0', 200_000, AUDIT_SCAN_ROWS])).toMatch(/USING COVERING INDEX audit_session/);
    expect(plan(AUDIT_SINCE_PROBE_SQL, [1, 2, 3])).toMatch(/USING COVERING INDEX audit_ts \(ts>\?\)/);
  });

  it('pages find every matching row once, newest first; a rare filter takes one page per window of rows, never a scan of all', async () => {
    const db = t.app.toolexec.db;
    for (const [name, , where] of FILTERS) {
      const expected = (db.prepare(`SELECT id FROM audit WHERE ${where} ORDER BY id DESC`).all() as Array<{ id: number }>).map((r) => r.id);
      const got = await pages(`limit=1000&${name}`);
      expect(got.ids, name).toEqual(expected);
      if (name === 'tool=Rare' || name === 'reason=timeout') {
        // 30 matches spread over 300,000 rows: each page looked at one window at most.
        expect(got.pages, name).toBeGreaterThanOrEqual(ROWS / AUDIT_SCAN_ROWS);
      }
      // The last 50 seconds: one page, not a cursor through the rest of the history.
      if (name.startsWith('since=') && !name.includes('until')) expect(got.pages, name).toBe(1);
    }
  });

  it('cursors stay put while rows are added and retention prunes the oldest', async () => {
    const db = t.app.toolexec.db;
    const before = (db.prepare("SELECT id FROM audit WHERE reason_type = 'timeout' ORDER BY id DESC").all() as Array<{ id: number }>).map((r) => r.id);
    let pruned = 0;
    const insert = db.prepare(
      "INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, input_digest) VALUES (?, 's1', 'new', 'exnew', 'Rare', 'deny', 'timeout', 'x')",
    );
    const got = await pages('reason=timeout&limit=2', () => {
      insert.run(Date.now());
      // Retention deletes the oldest rows first, 20,000 at a time.
      db.prepare('DELETE FROM audit WHERE id IN (SELECT id FROM audit ORDER BY id LIMIT 20000)').run();
      pruned += 20_000;
    });
    expect(new Set(got.ids).size).toBe(got.ids.length);
    // Every matching row that existed when paging began and was not pruned first, once, in order; none added since.
    const survived = new Set((db.prepare("SELECT id FROM audit WHERE reason_type = 'timeout'").all() as Array<{ id: number }>).map((r) => r.id));
    expect(got.ids.filter((id) => survived.has(id))).toEqual(before.filter((id) => survived.has(id)));
    expect(got.ids.every((id) => before.includes(id))).toBe(true);
    expect(pruned).toBeGreaterThan(0);
  });
});

const EXEC_FILTERS: Array<[string, Omit<ListFilter, 'limit'>, string]> = [
  ['status=denied', { status: 'denied' }, "status = 'denied'"],
  ['tool=Rare', { tool: 'Rare' }, "tool = 'Rare'"],
  ['status=succeeded&tool=Rare', { status: 'succeeded', tool: 'Rare' }, "status = 'succeeded' AND tool = 'Rare'"],
  ['session_id=s0&status=denied', { sessionId: 's0', status: 'denied' }, "session_id = 's0' AND status = 'denied'"],
  ['session_id=s7', { sessionId: 's7' }, "session_id = 's7'"],
  ['', {}, '1'],
];

describe('GET /executions over 300,000 rows', () => {
  it('walks an index from the cursor for every filter: no scan of the table, no sort', () => {
    for (const [name, f] of EXEC_FILTERS) {
      const { sql, params } = executionsSelect({ ...f, beforeSeq: 200_000, atLeastSeq: 180_000, limit: 51 });
      const p = plan(sql, params);
      expect(p, name).not.toMatch(/TEMP B-TREE|SCAN executions(?! USING)/);
      expect(p, name).toMatch(/SEARCH executions USING (INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)|INDEX executions_session)/);
    }
    expect(plan(EXECUTIONS_FLOOR_SQL, [200_000, EXECUTIONS_SCAN_ROWS])).toMatch(/SEARCH executions USING INTEGER PRIMARY KEY \(rowid<\?\)/);
    expect(plan(EXECUTIONS_SESSION_FLOOR_SQL, ['s0', 200_000, EXECUTIONS_SCAN_ROWS])).toMatch(/USING COVERING INDEX executions_session/);
  });

  it('pages find every matching row once, newest first; a rare filter takes one page per window of rows', async () => {
    const db = t.app.toolexec.db;
    for (const [name, , where] of EXEC_FILTERS) {
      const expected = (db.prepare(`SELECT id FROM executions WHERE ${where} ORDER BY seq DESC`).all() as Array<{ id: string }>).map((r) => r.id);
      const ids: string[] = [];
      let cursor: string | null = null;
      let n = 0;
      do {
        const r = await t.app.inject({ url: `/executions?limit=500&${name}${cursor ? `&cursor=${cursor}` : ''}` });
        expect(r.statusCode).toBe(200);
        const body = r.json() as Json;
        ids.push(...body.executions.map((e: Json) => e.id));
        cursor = body.next_cursor;
        n++;
      } while (cursor !== null && n < 2000);
      expect(ids, name).toEqual(expected);
      if (name === 'status=denied' || name === 'tool=Rare') expect(n, name).toBeGreaterThanOrEqual(ROWS / EXECUTIONS_SCAN_ROWS);
    }
  });
});

describe('a session with 300,000 calls behind it', () => {
  it('loads its idempotency index row by row: the heap does not take the whole history at once, and an old id is still replayed', async () => {
    const big = await makeApp();
    big.app.toolexec.db.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
      INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, result_block, created_at, finished_at, duration_ms)
        SELECT i, printf('ex_%011d', i) || 'AAAAAAAA', 'big', 'toolu_01ABCDEFGHIJKLMNOPQRSTUV' || i, 'Read', 'succeeded', 'x',
               '{"type":"tool_result","tool_use_id":"toolu_01ABCDEFGHIJKLMNOPQRSTUV' || i || '","content":"old"}', ${T0}, ${T0} + 1, 1 FROM n;
      INSERT INTO sessions (id, mode, cwd, created_at, updated_at) VALUES ('big', 'default', '${big.workspace}', ${T0}, ${T0});`);
    try {
      const before = process.memoryUsage().heapUsed;
      const session = await big.app.toolexec.sessions.ready('big');
      const grown = process.memoryUsage().heapUsed - before;
      expect(session.toolUses.size).toBe(ROWS);
      // As one array, the 300,000 rows were about 65 MB of heap at once; row by row, what stays is the
      // index (4,096 ids and 4-byte hashes) and young garbage.
      expect(grown).toBeLessThan(40 * 1024 * 1024);
      // The first of them is still known: a replay, not a second run.
      const r = await big.app.inject({
        method: 'POST',
        url: '/execute',
        payload: { session_id: 'big', tool_uses: [{ type: 'tool_use', id: 'toolu_01ABCDEFGHIJKLMNOPQRSTUV1', name: 'Read', input: { file_path: 'x' } }] },
      });
      expect(r.json().executions[0]).toMatchObject({ replayed: true, status: 'succeeded' });
    } finally {
      await big.close();
    }
  }, 120_000);

  it('reads a long history into the index a chunk per turn: other sessions are served while the first call waits, and no id runs twice', async () => {
    // The history is there when the service starts (new calls are numbered after it).
    const seed = await makeApp();
    seed.app.toolexec.db.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
      INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, result_block, created_at, finished_at, duration_ms)
        SELECT i, printf('ex_%011d', i) || 'AAAAAAAA', 'big', 'toolu_old' || i, 'Glob', 'succeeded', 'x',
               '{"type":"tool_result","tool_use_id":"toolu_old' || i || '","content":"old"}', ${T0}, ${T0} + 1, 1 FROM n;
      INSERT INTO sessions (id, mode, cwd, created_at, updated_at) VALUES ('big', 'default', '${seed.workspace}', ${T0}, ${T0});`);
    await seed.close();
    const big = await makeApp({ storage: { path: seed.dbPath }, workspace: { root: seed.workspace } });
    try {
      const post = (session_id: string, id: string) =>
        big.app.inject({ method: 'POST', url: '/execute', payload: { session_id, tool_uses: [{ type: 'tool_use', id, name: 'Glob', input: { pattern: '*' } }] } });
      // The session's first calls after a start: a new id twice (racing), and its oldest id.
      let bigDone = false;
      const first = Promise.all([post('big', 'toolu_new'), post('big', 'toolu_new'), post('big', 'toolu_old1')]).finally(() => {
        bigDone = true;
      });
      // Meanwhile another session's calls, one after the other: read whole at once, the history held the
      // event loop (1.8 s for 500,000 rows), and none of them was answered before the big session's.
      let served = 0;
      while (!bigDone) {
        const r = await post('other', `toolu_o${served}`);
        expect(r.statusCode, r.body).toBe(200);
        if (!bigDone) served++;
      }
      expect(served).toBeGreaterThanOrEqual(10);
      const [a, b, old] = (await first).map((r) => r.json().executions[0]);
      // One of the racing two ran; the other got its outcome. The old id was not run again.
      expect([a.replayed === true, b.replayed === true].sort()).toEqual([false, true]);
      expect(a.id).toBe(b.id);
      expect(old).toMatchObject({ replayed: true, status: 'succeeded', id: 'ex_00000000001AAAAAAAA' });
      const runs = big.app.toolexec.db.prepare("SELECT COUNT(*) AS n FROM executions WHERE session_id = 'big' AND tool_use_id = 'toolu_new'").get() as { n: number };
      expect(runs.n).toBe(1);
      const view = await big.app.inject({ url: '/sessions/big' });
      expect(view.json().session.executions).toBe(ROWS + 1);
    } finally {
      await big.close();
    }
  }, 120_000);

  it('reads the indexes of several long sessions touched at once a chunk of one per turn, in turn', async () => {
    const seed = await makeApp();
    const PER = 40_000;
    seed.app.toolexec.db.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${3 * PER})
      INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, created_at, finished_at, duration_ms)
        SELECT i, printf('ex_%011d', i) || 'AAAAAAAA', 'long' || (i % 3), 'toolu_' || i, 'Glob', 'succeeded', 'x', ${T0}, ${T0} + 1, 1 FROM n;`);
    await seed.close();
    const t2 = await makeApp({ storage: { path: seed.dbPath }, workspace: { root: seed.workspace } });
    try {
      // Three agents resume their long sessions at once after a restart.
      const sessions = [0, 1, 2].map((i) => t2.app.toolexec.sessions.get(`long${i}`));
      // More sessions than memory keeps come meanwhile: the ones being read stay (evicted, each read began again).
      for (let i = 0; i <= MAX_SESSIONS_IN_MEMORY; i++) t2.app.toolexec.sessions.get(`short${i}`);
      for (const [i, s] of sessions.entries()) expect(t2.app.toolexec.sessions.get(`long${i}`)).toBe(s);
      const read = (): number => sessions.reduce((n, s) => n + s.toolUses.size, 0);
      let most = 0;
      let last = read();
      let turns = 0;
      await new Promise<void>((resolve) => {
        const tick = (): void => {
          const now = read();
          most = Math.max(most, now - last);
          last = now;
          turns++;
          if (sessions.every((s) => s.toolUses.loaded)) resolve();
          else setImmediate(tick);
        };
        setImmediate(tick);
      });
      // Each of them a chunk per turn, side by side, was three chunks a turn: one in all now.
      expect(most).toBeLessThanOrEqual(TOOL_USE_LOAD_ROWS);
      expect(turns).toBeGreaterThanOrEqual((3 * PER) / TOOL_USE_LOAD_ROWS - 3);
      expect(sessions.map((s) => s.toolUses.size)).toEqual([PER, PER, PER]);
      // Each is complete: its oldest id is known (a replay), not run again.
      const r = await t2.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'long1', tool_uses: [{ type: 'tool_use', id: 'toolu_1', name: 'Glob', input: { pattern: '*' } }] } });
      expect(r.json().executions[0]).toMatchObject({ replayed: true, id: 'ex_00000000001AAAAAAAA' });
    } finally {
      await t2.close();
    }
  }, 120_000);
});
