/**
 * `toolexec audit --follow` with a filter no index serves, in process
 * against a real listening service: a tail whose filter matches nothing new
 * while the log grows looks at each new row once, not at everything since
 * its last match on every poll.
 */
import net from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { auditCommand } from '../src/cli/audit.js';
import type { CliIO } from '../src/cli/io.js';
import { cleanupTmp, makeApp, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (cond()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('toolexec audit --follow --tool', () => {
  it('a filter that matches nothing new: each poll looks at the rows added since the last poll, not all those since the last match', async () => {
    t = await makeApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${(t.app.server.address() as net.AddressInfo).port}`;
    const db = t.app.toolexec.db;
    const insert = (n: number): void => {
      db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})
        INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
          SELECT ${Date.now()}, 's', 'tu' || i, 'ex' || i, 'Read', 'allow', 'rule', 'd', 'agent', 'x' FROM n;`);
    };
    insert(10);
    const requests: string[] = [];
    t.app.server.on('request', (req: { url?: string }) => requests.push(req.url ?? ''));
    const filtered = (from: number) => requests.slice(from).filter((u) => u.startsWith('/audit?') && u.includes('tool=Rare'));
    const polls = (from: number) => filtered(from).filter((u) => !u.includes('cursor='));

    const ac = new AbortController();
    let out = '';
    const io: CliIO = {
      stdout: { write: (s: string) => ((out += s), true) } as never,
      stderr: { write: () => true } as never,
      env: {},
      cwd: process.cwd(),
      signal: ac.signal,
    };
    const done = auditCommand(['--follow', '--interval', '50', '--tool', 'Rare', '--json', '--url', url], io);
    try {
      await until(() => polls(0).length >= 3, 'a few polls');
      // 100,000 rows that do not match: five windows of 20,000 for the poll that comes next.
      insert(100_000);
      const mark = requests.length;
      await until(() => polls(mark).length >= 8, 'eight polls after the rows came');
      // Each poll: its first request (no cursor) and the windows below it (with one).
      const byPoll: string[][] = [];
      for (const u of filtered(mark)) {
        if (!u.includes('cursor=')) byPoll.push([]);
        byPoll[byPoll.length - 1]!.push(u);
      }
      // The first poll after the insert looks at the new rows (as many windows as they fill); from the
      // third on, nothing is left to look at below the top window: one request each.
      expect(byPoll.slice(2, 7).map((p) => p.length)).toEqual([1, 1, 1, 1, 1]);
      expect(out).toBe('');
      // What matches later is still printed, once.
      db.exec(`INSERT INTO audit (ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
        VALUES (${Date.now()}, 's', 'rare', 'exrare', 'Rare', 'deny', 'rule', 'd', 'agent', 'x')`);
      await until(() => out.includes('"tool_use_id":"rare"'), 'the matching row');
      await until(() => polls(mark).length >= 12, 'more polls');
      expect(out.trimEnd().split('\n').map((l) => (JSON.parse(l) as { tool: string }).tool)).toEqual(['Rare']);
    } finally {
      ac.abort();
      expect(await done).toBe(0);
    }
  }, 120_000);
});
