/**
 * Faults the service must survive without crashing or answering 5xx for the
 * caller's sake: a database that becomes full or read-only (a clear error,
 * /readyz red, recovery once writable again), and a thousand concurrent
 * POST /execute (429/503 with Retry-After rather than collapse).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildTool } from '../src/tool/build-tool.js';
import { MAX_SESSIONS_IN_MEMORY } from '../src/sessions/store.js';
import { RECENT_TOOL_USES } from '../src/sessions/tool-use-index.js';
import { cleanupTmp, makeApp, probeTool, sleepTool, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

async function readyz(app: TestApp['app']) {
  const r = await app.inject({ method: 'GET', url: '/readyz' });
  return { status: r.statusCode, body: r.json() as { status: string; checks: { database: string } } };
}

async function until(cond: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('a database that stops taking writes', () => {
  for (const [what, stop, resume] of [
    [
      'full (SQLITE_FULL: max_page_count reached)',
      (t2: TestApp) => {
        const db = t2.app.toolexec.db;
        const pages = db.pragma('page_count', { simple: true }) as number;
        db.pragma(`max_page_count = ${pages}`);
      },
      (t2: TestApp) => {
        t2.app.toolexec.db.pragma('max_page_count = 1073741823');
      },
    ],
    [
      'read-only (SQLITE_READONLY: query_only)',
      (t2: TestApp) => {
        t2.app.toolexec.db.pragma('query_only = ON');
      },
      (t2: TestApp) => {
        t2.app.toolexec.db.pragma('query_only = OFF');
      },
    ],
  ] as const) {
    it(`${what}: 503 with a clear code, /readyz red, no crash, and recovery once writable`, async () => {
      t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})], observability: { readinessCacheMs: 0 } });
      const ok = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'f', tool_uses: [use('Probe', { value: 'before' })] } });
      expect(ok.statusCode).toBe(200);
      // Fill the database's free pages so that the next rows need new ones.
      t.app.toolexec.db.exec("CREATE TABLE IF NOT EXISTS filler (x TEXT); INSERT INTO filler VALUES (randomblob(1))");
      stop(t);
      // A burst of calls, each with a sizeable input, needs pages the database cannot have.
      const big = 'x'.repeat(8000);
      const failed = await t.app.inject({
        method: 'POST',
        url: '/execute',
        payload: { session_id: 'f', tool_uses: Array.from({ length: 20 }, (_, i) => use('Probe', { value: `${big}${i}` }, `burst-${i}`)) },
      });
      expect(failed.statusCode).toBe(503);
      expect(failed.json().error.code).toBe('TOOLEXEC_ERR_STORAGE_UNAVAILABLE');
      // Asked again while the rows are held, a call is not run a second time.
      const again = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'f', tool_uses: [use('Probe', { value: `${big}3` }, 'burst-3')] } });
      expect(again.statusCode).toBe(503);
      expect(again.json().error.code).toBe('TOOLEXEC_ERR_STORAGE_UNAVAILABLE');
      const r = await readyz(t.app);
      expect(r.status).toBe(503);
      expect(r.body.status).toBe('not_ready');
      // Still serving: the catalog and health answer.
      expect((await t.app.inject({ url: '/tools' })).statusCode).toBe(200);
      expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
      resume(t);
      await until(async () => (await readyz(t!.app)).status === 200, 'readiness to recover');
      const after = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'f', tool_uses: [use('Probe', { value: 'after' }, 'after')] } });
      expect(after.statusCode).toBe(200);
      expect(after.json().executions[0].status).toBe('succeeded');
      expect(t.app.toolexec.executions.findByToolUse('f', 'after')?.status).toBe('succeeded');
      // The burst's calls did run: their rows and audit rows are written once the database takes writes again.
      await until(async () => t!.app.toolexec.executions.findByToolUse('f', 'burst-19') !== undefined, 'the held rows to be written');
      const db = t.app.toolexec.db;
      expect((db.prepare("SELECT COUNT(*) AS n FROM executions WHERE tool_use_id LIKE 'burst-%'").get() as { n: number }).n).toBe(20);
      expect((db.prepare("SELECT COUNT(*) AS n FROM audit WHERE tool_use_id LIKE 'burst-%'").get() as { n: number }).n).toBe(20);
      // Now it is replayed from its row, not run again.
      const replay = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'f', tool_uses: [use('Probe', { value: `${big}3` }, 'burst-3')] } });
      expect(replay.json().executions[0]).toMatchObject({ replayed: true, status: 'succeeded' });
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    });
  }
});

describe('storage failures in the middle of a call', () => {
  it('a Bash output spilling into a read-only database fails the call (io), the process stays up', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(head:*)'] } }, { observability: { readinessCacheMs: 0 } });
    t.app.toolexec.db.pragma('query_only = ON');
    const r = await t.app.inject({
      method: 'POST',
      url: '/execute',
      payload: { session_id: 'spill', tool_uses: [use('Bash', { command: 'head -c 300000 /dev/zero | tr "\\0" a' }, 'spill-1')] },
    });
    // The call ran; its record cannot be written: its result is withheld.
    expect(r.statusCode).toBe(503);
    t.app.toolexec.db.pragma('query_only = OFF');
    await until(async () => t!.app.toolexec.executions.findByToolUse('spill', 'spill-1') !== undefined, 'the held row');
    const row = t.app.toolexec.executions.findByToolUse('spill', 'spill-1')!;
    expect(row).toMatchObject({ status: 'failed', error_class: 'io' });
    expect(JSON.parse(row.result_block!).content).toContain('could not be stored');
    expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
  });

  it('an approver’s answer while the database is read-only still reaches the waiting call', async () => {
    t = await makeApp(
      { permissions: { headless: 'wait', askTimeoutMs: 30_000 } },
      { extraTools: [probeTool({})], observability: { readinessCacheMs: 0 } },
    );
    const pending = t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'ro', tool_uses: [use('Probe', { value: 'v' }, 'ro-1')] } });
    let id: string | undefined;
    await until(async () => {
      id = t!.app.toolexec.broker.list().pending[0]?.id;
      return id !== undefined;
    }, 'the permission request');
    t.app.toolexec.db.pragma('query_only = ON');
    const answer = await t.app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'allow' } });
    expect(answer.statusCode).toBe(200);
    const res = await pending;
    // The call ran; its record waits for the database.
    expect(res.statusCode).toBe(503);
    t.app.toolexec.db.pragma('query_only = OFF');
    await until(async () => t!.app.toolexec.executions.findByToolUse('ro', 'ro-1')?.status === 'succeeded', 'the held row');
  });
});

describe('wait:false calls whose records cannot be committed', () => {
  it('reject nothing unhandled (Node would end the process): the calls are written once the database takes writes', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown): void => {
      unhandled.push(e);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})], observability: { readinessCacheMs: 0 } });
      t.app.toolexec.db.pragma('query_only = ON');
      const r = await t.app.inject({
        method: 'POST',
        url: '/execute',
        // The same id twice: the second item is the first one's replay.
        payload: { session_id: 'nw', wait: false, tool_uses: [use('Probe', { value: 'a' }, 'nw-1'), use('Probe', { value: 'a' }, 'nw-1'), use('Probe', { value: 'b' }, 'nw-2')] },
      });
      expect(r.statusCode).toBe(202);
      // The calls ran; their commits failed.
      await until(async () => t!.app.toolexec.registry.size === 0, 'the calls to end');
      // A repeat while the rows are held is told so (as a waiting caller is), and not run twice.
      const again = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'nw', wait: false, tool_uses: [use('Probe', { value: 'a' }, 'nw-1')] } });
      expect(again.statusCode).toBe(503);
      expect(again.json().error.code).toBe('TOOLEXEC_ERR_STORAGE_UNAVAILABLE');
      await new Promise((res) => setTimeout(res, 100));
      expect(unhandled).toEqual([]);
      t.app.toolexec.db.pragma('query_only = OFF');
      await until(async () => t!.app.toolexec.executions.findByToolUse('nw', 'nw-2')?.status === 'succeeded', 'the held rows');
      expect(t.app.toolexec.executions.findByToolUse('nw', 'nw-1')?.status).toBe('succeeded');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('a call whose row is held, looked up', () => {
  it('GET /executions/:id says the record is not written yet (503), not that there is no such execution; cancel says it is not running', async () => {
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    t.app.toolexec.db.pragma('query_only = ON');
    const r = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'look', wait: false, tool_uses: [use('Probe', { value: 'a' }, 'look-1')] } });
    expect(r.statusCode).toBe(202);
    const id = r.json().executions[0].id as string;
    // The call ran; its commit failed, and its row is held.
    await until(async () => t!.app.toolexec.registry.size === 0, 'the call to end');
    expect(t.app.toolexec.executions.isHeld(id)).toBe(true);
    const got = await t.app.inject({ method: 'GET', url: `/executions/${id}` });
    expect(got.statusCode).toBe(503);
    expect(got.json().error).toMatchObject({ code: 'TOOLEXEC_ERR_STORAGE_UNAVAILABLE', details: { execution_id: id } });
    const cancel = await t.app.inject({ method: 'POST', url: `/executions/${id}/cancel` });
    expect(cancel.statusCode).toBe(409);
    expect(cancel.json().error.code).toBe('TOOLEXEC_ERR_EXECUTION_NOT_RUNNING');
    t.app.toolexec.db.pragma('query_only = OFF');
    await until(async () => t!.app.toolexec.executions.get(id)?.status === 'succeeded', 'the held row');
    const later = await t.app.inject({ method: 'GET', url: `/executions/${id}` });
    expect(later.statusCode).toBe(200);
    expect(later.json().execution).toMatchObject({ id, status: 'succeeded' });
  });
});

describe('a call whose row is held, repeated', () => {
  it('is not run again once its session was evicted and made anew, nor once its id left the recent ones', async () => {
    const calls: unknown[] = [];
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({ calls })], observability: { readinessCacheMs: 0 } });
    const db = t.app.toolexec.db;
    db.pragma('query_only = ON');
    const send = (id: string) => t!.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'ev', tool_uses: [use('Probe', { value: id }, id)] } });
    expect((await send('x1')).json().error.code).toBe('TOOLEXEC_ERR_STORAGE_UNAVAILABLE');
    expect((await send('x2')).json().error.code).toBe('TOOLEXEC_ERR_STORAGE_UNAVAILABLE');
    expect(calls).toHaveLength(2);
    // More sessions touched than the store keeps: 'ev' (no call running) is evicted, its index read again from the database.
    const before = t.app.toolexec.sessions.find('ev');
    for (let i = 0; i <= MAX_SESSIONS_IN_MEMORY; i++) t.app.toolexec.sessions.get(`other-${i}`);
    expect(t.app.toolexec.sessions.get('ev')).not.toBe(before);
    const again = await send('x1');
    expect(again.statusCode).toBe(503);
    expect(again.json().error.code).toBe('TOOLEXEC_ERR_STORAGE_UNAVAILABLE');
    expect(calls).toHaveLength(2);
    // x2 pushed out of the recent ids (kept as a hash, which sends the lookup to the database, where its row is not yet).
    const index = t.app.toolexec.sessions.get('ev').toolUses;
    for (let i = 0; i < RECENT_TOOL_USES; i++) index.set(`filler-${i}`, `ex_filler_${i}`);
    expect(index.get('x2')).toBeUndefined();
    expect(index.mayBeOlder('x2')).toBe(true);
    expect((await send('x2')).json().error.code).toBe('TOOLEXEC_ERR_STORAGE_UNAVAILABLE');
    expect(calls).toHaveLength(2);
    // Once written, both are replayed from their rows.
    db.pragma('query_only = OFF');
    await until(async () => t!.app.toolexec.executions.findByToolUse('ev', 'x2') !== undefined, 'the held rows');
    for (const id of ['x1', 'x2']) expect((await send(id)).json().executions[0]).toMatchObject({ replayed: true, status: 'succeeded' });
    expect(calls).toHaveLength(2);
  });
});

describe('a thousand concurrent POST /execute', () => {
  it('admits what it can, answers the rest 503 with Retry-After, and stays healthy', async () => {
    // The admitted calls hold until every refusal is in (or 30 s), so that the
    // limit is reached however slowly a loaded machine sends the requests.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const held = setTimeout(release, 30_000);
    const gated = buildTool({
      name: 'Gated',
      description: 'Waits for the test to let it go',
      inputSchema: z.strictObject({ tag: z.string() }),
      maxResultSizeChars: 1000,
      isConcurrencySafe: () => false,
      isReadOnly: () => true,
      checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
      call: async () => {
        await gate;
        return { data: 'done' };
      },
    });
    t = await makeApp({ server: { maxInFlightCalls: 100 } }, { extraTools: [gated] });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    let answered = 0;
    const statuses = await Promise.all(
      Array.from({ length: 1000 }, async (_, i) => {
        try {
          const res = await fetch(`${base}/execute`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ session_id: `c${i % 50}`, tool_uses: [use('Gated', { tag: String(i) }, `u${i}`)] }),
          });
          if (res.status !== 200 && ++answered === 900) release();
          const body = (await res.json()) as { error?: { code: string } };
          if (res.status === 503) {
            expect(body.error?.code).toBe('TOOLEXEC_ERR_OVERLOADED');
            expect(res.headers.get('retry-after')).toBeTruthy();
          }
          return res.status;
        } catch {
          return 0;
        }
      }),
    );
    clearTimeout(held);
    const count = (s: number) => statuses.filter((x) => x === s).length;
    expect(count(0)).toBe(0);
    // Exactly the limit was admitted; everyone else was told to come back.
    expect(count(200)).toBe(100);
    expect(count(503)).toBe(900);
    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(t.app.toolexec.registry.size).toBe(0);
  });
});
