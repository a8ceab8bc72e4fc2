/**
 * Cursors belong to one listing and its filters: GET /audit, GET /executions
 * and GET /permissions/requests count their positions differently (audit
 * ids, execution sequence numbers, places among pending requests), so a
 * cursor of one given to another, or with other filters, is a 400 with a
 * code, never a page from the wrong place; with its own listing and
 * filters it goes on where it stopped.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTmp, makeApp, probeTool, use } from './helpers.js';

afterAll(cleanupTmp);

// Response bodies are checked field by field below.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('pagination cursors', () => {
  it('a cursor of one listing, or with other filters, is a 400; with its own it pages on', async () => {
    const t = await makeApp(
      { server: { maxInFlightCalls: 5000 }, permissions: { allow: ['Allowed'], headless: 'wait', askTimeoutMs: 120_000 } },
      { extraTools: [probeTool({ name: 'Allowed', readOnly: true }), probeTool({ name: 'Asker', readOnly: true })] },
    );
    try {
      const { app } = t;
      const get = async (url: string): Promise<{ status: number; body: Json }> => {
        const r = await app.inject({ url });
        return { status: r.statusCode, body: r.json() };
      };
      // 30 allowed calls in two sessions (30 audit rows, 30 executions), then 10 that wait for a person.
      for (let i = 0; i < 30; i++) {
        const r = await app.inject({ method: 'POST', url: '/execute', payload: { session_id: `s${i % 2}`, tool_uses: [use('Allowed', { value: `v${i}` }, `a${i}`)] } });
        expect(r.statusCode).toBe(200);
      }
      const asks = Array.from({ length: 10 }, (_, i) => use('Asker', { value: `q${i}` }, `q${i}`));
      expect((await app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'w', tool_uses: asks, wait: false } })).statusCode).toBe(202);
      for (let i = 0; i < 500 && app.toolexec.broker.pendingCount < 10; i++) await sleep(10);
      expect(app.toolexec.broker.pendingCount).toBe(10);

      const audit = await get('/audit?limit=5&session_id=s0');
      const executions = await get('/executions?limit=5&session_id=s0');
      const requests = await get('/permissions/requests?limit=3');
      const cursors = { audit: audit.body.next_cursor, executions: executions.body.next_cursor, requests: requests.body.next_cursor };
      for (const c of Object.values(cursors)) expect(c).toEqual(expect.any(String));

      // Each with its own listing and filters: the next page, older rows (or later requests) only.
      const audit2 = await get(`/audit?limit=5&session_id=s0&cursor=${cursors.audit}`);
      expect(audit2.status).toBe(200);
      expect(audit2.body.entries).toHaveLength(5);
      expect(Math.max(...audit2.body.entries.map((e: Json) => e.id))).toBeLessThan(Math.min(...audit.body.entries.map((e: Json) => e.id)));
      // A page size of its own is fine.
      expect((await get(`/audit?limit=7&session_id=s0&cursor=${cursors.audit}`)).status).toBe(200);
      // The same filters given in another form (an ISO date for epoch milliseconds) are the same filters.
      const since = Date.now() - 3_600_000;
      const withSince = await get(`/audit?limit=5&since=${since}`);
      expect((await get(`/audit?limit=5&since=${new Date(since).toISOString()}&cursor=${withSince.body.next_cursor}`)).status).toBe(200);
      const ex2 = await get(`/executions?limit=5&session_id=s0&cursor=${cursors.executions}`);
      expect(ex2.status).toBe(200);
      expect(ex2.body.executions).toHaveLength(5);
      expect(ex2.body.executions.some((e: Json) => executions.body.executions.some((f: Json) => f.id === e.id))).toBe(false);
      const rq2 = await get(`/permissions/requests?limit=3&cursor=${cursors.requests}`);
      expect(rq2.status).toBe(200);
      expect(rq2.body.requests).toHaveLength(3);

      // Another listing's cursor, or other filters: 400 with a code, never a page.
      const wrong = [
        `/executions?limit=5&session_id=s0&cursor=${cursors.audit}`,
        `/permissions/requests?limit=3&cursor=${cursors.audit}`,
        `/audit?limit=5&session_id=s0&cursor=${cursors.executions}`,
        `/permissions/requests?limit=3&cursor=${cursors.executions}`,
        `/audit?limit=5&cursor=${cursors.requests}`,
        `/executions?limit=5&cursor=${cursors.requests}`,
        `/audit?limit=5&session_id=s1&cursor=${cursors.audit}`,
        `/audit?limit=5&cursor=${cursors.audit}`,
        `/audit?limit=5&session_id=s0&behavior=deny&cursor=${cursors.audit}`,
        `/executions?limit=5&session_id=s1&cursor=${cursors.executions}`,
        `/executions?limit=5&session_id=s0&status=succeeded&cursor=${cursors.executions}`,
        `/permissions/requests?limit=3&session_id=w&cursor=${cursors.requests}`,
      ];
      for (const url of wrong) {
        const r = await get(url);
        expect(r.status, url).toBe(400);
        expect(r.body.error.code, url).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
        expect(r.body.error.message, url).toMatch(/^cursor: /);
      }
      // A bare position (what cursors were) is not taken for one either.
      const bare = Buffer.from('c1:20').toString('base64url');
      for (const url of [`/audit?cursor=${bare}`, `/executions?cursor=${bare}`, `/permissions/requests?cursor=${bare}`]) expect((await get(url)).status, url).toBe(400);
    } finally {
      await t.close();
    }
  });

  it('a parameter a listing does not take is a 400 that names the ones it takes, not the whole history unfiltered', async () => {
    const t = await makeApp({ permissions: { allow: ['Allowed'] } }, { extraTools: [probeTool({ name: 'Allowed', readOnly: true })] });
    try {
      const { app } = t;
      for (let i = 0; i < 3; i++) {
        expect((await app.inject({ method: 'POST', url: '/execute', payload: { session_id: `s${i}`, tool_uses: [use('Allowed', { value: 'v' }, `a${i}`)] } })).statusCode).toBe(200);
      }
      const since = Date.now() + 60_000;
      // /audit takes since: nothing is that recent.
      const audit = await app.inject({ url: `/audit?since=${since}` });
      expect(audit.statusCode).toBe(200);
      expect(audit.json().entries).toEqual([]);
      // /executions does not: it answered every execution, as if they were the recent ones.
      for (const [url, named] of [
        [`/executions?since=${since}`, 'since'],
        ['/executions?sesion_id=s0', 'sesion_id'],
        ['/audit?session=s0', 'session'],
        ['/permissions/requests?status=pending', 'status'],
      ] as const) {
        const r = await app.inject({ url });
        expect(r.statusCode, url).toBe(400);
        expect(r.json().error.code, url).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
        expect(r.json().error.message, url).toContain(named);
        expect(r.json().error.message, url).toMatch(/this listing takes session_id/);
      }
      expect((await app.inject({ url: '/executions?session_id=s0&limit=5' })).json().executions).toHaveLength(1);
    } finally {
      await t.close();
    }
  });
});
