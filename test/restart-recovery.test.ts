/**
 * Start-up after a crash: executions a previous process left unfinished (its
 * rows committed as queued or running, never finished) are closed as
 * cancelled with a message saying why, the service starts, and a repeated
 * tool_use id is answered from the closed row instead of running again.
 */
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, execute, makeApp, textOf, use, type TestApp } from './helpers.js';

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
});
