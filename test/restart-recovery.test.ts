/**
 * Start-up after a crash: executions a previous process left unfinished (its
 * rows committed as queued or running, never finished) are closed as
 * cancelled with a message saying why, the service starts, and a repeated
 * tool_use id is answered from the closed row instead of running again.
 */
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, execute, makeApp, sleepTool, textOf, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

// Ids as the service issues them: `ex_` + the row number in base 36 (11 digits) + a tag of 8.
const RUNNING = 'ex_00000000001deadbeef';
const QUEUED = 'ex_00000000002deadbeef';

describe('restart after a crash', () => {
  it('closes the calls left unfinished as cancelled, starts, and replays them by tool_use id', async () => {
    t = await makeApp();
    const dbPath = t.dbPath;
    const workspace = t.workspace;
    await t.close();
    t = undefined;
    // What a killed process leaves: rows written as started, never finished.
    const db = new Database(dbPath);
    const insert = db.prepare(
      `INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, input, created_at) VALUES (?, ?, 's-crash', ?, 'Bash', ?, 'd', '{"command":"sleep 60"}', ?)`,
    );
    insert.run(1, RUNNING, 'tu-running', 'running', Date.now() - 1000);
    insert.run(2, QUEUED, 'tu-queued', 'queued', Date.now() - 1000);
    db.close();

    t = await makeApp({ workspace: { root: workspace }, storage: { path: dbPath } });
    for (const id of [RUNNING, QUEUED]) {
      const res = await t.app.inject({ method: 'GET', url: `/executions/${id}` });
      expect(res.statusCode).toBe(200);
      expect(res.json().execution).toMatchObject({ id, status: 'cancelled', error_class: 'cancelled' });
    }
    const again = await execute(t.app, { session_id: 's-crash', tool_uses: [use('Bash', { command: 'sleep 60' }, 'tu-running')] });
    expect(again.status).toBe(200);
    expect(again.body.executions[0]).toMatchObject({ id: RUNNING, status: 'cancelled', replayed: true });
    expect(textOf(again.body.tool_results[0]!.content)).toContain('toolexec restarted before it finished');
    expect(again.body.tool_results[0]!.is_error).toBe(true);
  });

  it('a running call\'s decision is on its row before it finishes (listed, and kept as the audit says after a crash)', async () => {
    t = await makeApp({ permissions: { allow: ['UnsafeSleep'] } }, { extraTools: [sleepTool({ safe: false })] });
    const started = await execute(t.app, { session_id: 's-dec', wait: false, tool_uses: [use('UnsafeSleep', { ms: 60_000, tag: 'long' }, 'tu-long')] });
    expect(started.status).toBe(202);
    const id = started.body.executions[0]!.id as string;
    const decision = { behavior: 'allow', reason: { type: 'rule', detail: 'UnsafeSleep' } };
    // GET /executions lists the decision while the call runs, as GET /executions/:id shows it.
    let listed: unknown;
    for (let i = 0; i < 100; i++) {
      const list = await t.app.inject({ method: 'GET', url: '/executions?session_id=s-dec' });
      listed = list.json().executions[0];
      if ((listed as { decision?: unknown } | undefined)?.decision) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(listed).toMatchObject({ id, status: 'running', decision });
    // What a crash now would leave on disk: the row, committed as started, with its decision.
    let onDisk: { decision: string | null; finished_at: number | null } | undefined;
    for (let i = 0; i < 100; i++) {
      const db = new Database(t.dbPath, { readonly: true });
      onDisk = db.prepare('SELECT decision, finished_at FROM executions WHERE id = ?').get(id) as typeof onDisk;
      db.close();
      if (onDisk?.decision) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(onDisk?.finished_at).toBeNull();
    expect(JSON.parse(onDisk!.decision!)).toMatchObject(decision);
    await t.app.inject({ method: 'POST', url: `/executions/${id}/cancel` });
  });

  it('a call interrupted by a crash keeps its decision after the restart, consistent with its audit row', async () => {
    t = await makeApp();
    const { dbPath, workspace } = t;
    await t.close();
    t = undefined;
    const db = new Database(dbPath);
    const decision = JSON.stringify({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash' }, chain: [], actor: null });
    db.prepare(
      `INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, decision, input_digest, input, created_at) VALUES (1, ?, 's-kill', 'tu-kill', 'Bash', 'running', ?, 'd', '{"command":"sleep 60"}', ?)`,
    ).run(RUNNING, decision, Date.now() - 1000);
    db.close();
    t = await makeApp({ workspace: { root: workspace }, storage: { path: dbPath } });
    const one = await t.app.inject({ method: 'GET', url: `/executions/${RUNNING}` });
    expect(one.json().execution).toMatchObject({ status: 'cancelled', decision: { behavior: 'allow', reason: { type: 'rule', detail: 'Bash' } } });
    const list = await t.app.inject({ method: 'GET', url: '/executions?session_id=s-kill' });
    expect(list.json().executions[0]).toMatchObject({ id: RUNNING, status: 'cancelled', decision: { behavior: 'allow' } });
    const again = await execute(t.app, { session_id: 's-kill', tool_uses: [use('Bash', { command: 'sleep 60' }, 'tu-kill')] });
    expect(again.body.executions[0]).toMatchObject({ id: RUNNING, replayed: true, decision: { behavior: 'allow', reason: { type: 'rule', detail: 'Bash' } } });
  });

  it('a row whose stored result block is damaged (not a block\'s shape) is replayed and shown without it, not answered 500', async () => {
    t = await makeApp({}, { extraTools: [sleepTool({ safe: true })] });
    const dbPath = t.dbPath;
    const workspace = t.workspace;
    const ids: string[] = [];
    for (const tu of ['d1', 'd2', 'd3']) {
      const r = await execute(t.app, { session_id: 's-dmg', tool_uses: [use('SafeSleep', { ms: 0, tag: tu }, tu)] });
      ids.push(r.body.executions[0]!.id);
    }
    await t.close();
    t = undefined;
    const db = new Database(dbPath);
    const damage = db.prepare('UPDATE executions SET result_block = ? WHERE id = ?');
    damage.run('{"type":"tool_result","tool_use_id":"d1","content":5}', ids[0]);
    damage.run('null', ids[1]);
    damage.run('[{"type":"text"}]', ids[2]);
    db.close();

    t = await makeApp({ workspace: { root: workspace }, storage: { path: dbPath } }, { extraTools: [sleepTool({ safe: true })] });
    for (const [i, tu] of ['d1', 'd2', 'd3'].entries()) {
      const again = await execute(t.app, { session_id: 's-dmg', tool_uses: [use('SafeSleep', { ms: 0, tag: tu }, tu)] });
      expect(again.status).toBe(200);
      expect(again.body.executions[0]).toMatchObject({ id: ids[i], status: 'succeeded', replayed: true });
      expect(again.body.tool_results[0]).toMatchObject({ type: 'tool_result', tool_use_id: tu, content: '' });
      const shown = await t.app.inject({ method: 'GET', url: `/executions/${ids[i]}` });
      expect(shown.statusCode).toBe(200);
      expect(shown.json().execution).toMatchObject({ id: ids[i], preview: null });
    }
  });
});
