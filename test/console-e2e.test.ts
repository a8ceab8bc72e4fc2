/**
 * The web console in a real headless Chromium against a real listening
 * service: sign in with a token, approve and deny real permission requests
 * while an agent's POST /execute waits, remember an answer, filter the audit
 * log, watch a call's progress and cancel it, read statistics and MCP server
 * states, on a desktop and a phone screen. Screenshots go to
 * test-artifacts/console/.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { cleanupTmp, makeApp, probeTool, textOf, use, type ExecuteResponse, type TestApp } from './helpers.js';
import { DESKTOP, launchChromium, openPage, PHONE, screenshot, signIn, tickerTool, UI_TIMEOUT_MS, waitLive, type ConsolePage, type RunningBrowser } from './helpers-browser.js';
import { fixtureStdio, makeMcpApp, waitConnected, waitFor } from './helpers-mcp.js';

const AGENT = 'agent-token-0123456789abcdef';
const ALICE = 'alice-token-0123456789abcdef';
const WATCHER = 'watcher-token-0123456789abcdef';
const tokens = [
  { name: 'agent', token: AGENT, scopes: ['execute' as const] },
  { name: 'alice', token: ALICE, scopes: ['read' as const, 'approve' as const, 'execute' as const] },
  { name: 'watcher', token: WATCHER, scopes: ['read' as const] },
];

let chromium: RunningBrowser;
let t: TestApp | undefined;
let pages: ConsolePage[] = [];

beforeAll(async () => {
  chromium = await launchChromium();
});
afterEach(async () => {
  for (const p of pages) await p.context.close().catch(() => undefined);
  pages = [];
  await t?.close();
  t = undefined;
});
afterAll(async () => {
  await chromium?.close();
  cleanupTmp();
});

async function start(...args: Parameters<typeof makeApp>): Promise<string> {
  t = await makeApp(...args);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
}

async function open(device: typeof DESKTOP | typeof PHONE): Promise<ConsolePage> {
  const p = await openPage(chromium.browser, device);
  pages.push(p);
  return p;
}

/** The agent's call: POST /execute with wait, observed from outside. */
function agentCall(base: string, session: string, tool: string, input: unknown, id: string) {
  const state = { settled: false };
  const response = fetch(`${base}/execute`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT}` },
    body: JSON.stringify({ session_id: session, tool_uses: [use(tool, input, id)], wait: true }),
  })
    .then(async (r) => ({ status: r.status, body: (await r.json()) as ExecuteResponse }))
    .finally(() => {
      state.settled = true;
    });
  // A test that fails early closes the service under a waiting call: that rejection is not the failure to report.
  response.catch(() => undefined);
  return { response, state };
}

async function getJson<T>(base: string, path: string, token?: string): Promise<T> {
  const r = await fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  expect(r.status).toBe(200);
  return (await r.json()) as T;
}

const requestCard = (page: Page, text: string) => page.locator('#requests-list > li', { hasText: text });
const countOf = (page: Page, selector: string) => page.locator(selector).count();

// Page-side expressions are passed as source text (this project compiles
// without the DOM library), and never to waitForFunction: its polling evaluates
// strings with eval, which the console's own CSP rightly refuses.

/** Waits until the page has exactly n elements matching the selector. */
async function waitCount(page: Page, selector: string, n: number): Promise<void> {
  await waitFor(async () => (await page.locator(selector).count()) === n, `${n} × ${selector}`, UI_TIMEOUT_MS);
}

/** Whether the page scrolls sideways: a phone layout must not. */
const overflowsX = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');

/** Whether every section tab lies wholly inside the viewport. */
const tabsFit = (page: Page) =>
  page.evaluate<boolean>('Array.from(document.querySelectorAll(".tab")).filter((t) => t.offsetParent !== null).every((t) => { const r = t.getBoundingClientRect(); return r.left >= 0 && r.right <= document.documentElement.clientWidth; })');

const storedToken = (page: Page) => page.evaluate<string | null>("sessionStorage.getItem('toolexec.console.token')");

/** The text of each cell of each row of a table body. */
const tableText = (page: Page, selector: string) =>
  page.evaluate<string[][]>(`Array.from(document.querySelectorAll(${JSON.stringify(`${selector} tr`)})).map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent.trim()))`);

function clean(p: ConsolePage): void {
  expect(p.errors).toEqual([]);
  expect(p.cspViolations).toEqual([]);
}

describe('the web console page', () => {
  it('is served with a policy that allows only its own origin, from files with no inline script, style or handler', async () => {
    const base = await start({ server: { tokens } });
    const host = base.slice('http://'.length);
    const res = await fetch(`${base}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['style-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'", `ws://${host}`, `wss://${host}`]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i);
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(html).not.toMatch(/\sstyle\s*=|<style/i);

    // A hostile Host header cannot write into the policy.
    const spoofed = await t!.app.inject({ method: 'GET', url: '/console', headers: { host: "evil; script-src 'unsafe-inline'" } });
    expect(spoofed.headers['content-security-policy']).not.toContain('unsafe-inline');

    for (const [file, type] of [['app.js', /javascript/], ['console.css', /text\/css/], ['favicon.svg', /image\/svg\+xml/]] as const) {
      const a = await fetch(`${base}/console/assets/${file}`);
      expect(a.status).toBe(200);
      expect(a.headers.get('content-type')).toMatch(type);
      const again = await fetch(`${base}/console/assets/${file}`, { headers: { 'if-none-match': a.headers.get('etag')! } });
      expect(again.status).toBe(304);
    }
    for (const bad of ['index.html', 'nope.js', '..%2Fapp.ts', '%2e%2e%2f%2e%2e%2fservices.ts']) {
      const r = await fetch(`${base}/console/assets/${bad}`);
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('TOOLEXEC_ERR_ROUTE_NOT_FOUND');
    }

    // The browser enforces it: the console connects (fetch and websocket to itself) while an injected inline script is refused.
    const p = await open(DESKTOP);
    await signIn(p.page, base, ALICE);
    await p.page.evaluate(`{ const s = document.createElement('script'); s.textContent = 'window.__inlineRan = true'; document.body.append(s); }`);
    await waitFor(() => p.cspViolations.length > 0, 'the CSP violation report', 5000);
    expect(await p.page.evaluate<boolean>('window.__inlineRan === true')).toBe(false);
    expect(p.errors).toEqual([]);
  });
});

describe('approving from the console', () => {
  it('allows one waiting call and denies another; the agent gets each answer; the audit filter shows both', { timeout: 90_000 }, async () => {
    const calls: Array<{ value: string }> = [];
    const base = await start(
      { server: { tokens }, permissions: { askTimeoutMs: 120_000 } },
      { extraTools: [probeTool({ calls: calls as unknown[] }), probeTool({ name: 'Lookup', permission: 'allow' })] },
    );
    // A decision the audit filter must leave out: another tool, allowed by its own check.
    expect((await agentCall(base, 's-build', 'Lookup', { value: 'x' }, 'call-lookup').response).body.executions[0]!.status).toBe('succeeded');
    const p = await open(DESKTOP);
    const { page } = p;

    await page.goto(`${base}/console`);
    await page.getByLabel('Access token').waitFor();
    await screenshot(page, 'desktop-01-login');
    await page.getByLabel('Access token').fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#login-error', { hasText: 'This token is not valid.' }).waitFor();
    // A valid token without the read scope cannot run the console.
    await page.getByLabel('Access token').fill(AGENT);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#login-error', { hasText: 'This token cannot be used here' }).waitFor();
    expect(await storedToken(page)).toBeNull();
    await page.getByLabel('Access token').fill(ALICE);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await waitLive(page);
    await page.locator('#who', { hasText: 'alice' }).waitFor();
    expect(await storedToken(page)).toBe(ALICE);

    // Two agents' calls ask at the same time; the console (an approver on "*") is asked.
    const alpha = agentCall(base, 's-build', 'Probe', { value: 'alpha' }, 'call-alpha');
    const beta = agentCall(base, 's-review', 'Probe', { value: 'beta', count: 2 }, 'call-beta');
    await requestCard(page, '"alpha"').waitFor();
    await requestCard(page, '"beta"').waitFor();
    await page.locator('#requests-count', { hasText: '2' }).waitFor();

    const { requests } = await getJson<{ requests: Array<{ id: string; status: string; summary: string; input: { value: string }; reason: { type: string; detail: string } }> }>(base, '/permissions/requests', ALICE);
    const pendingAlpha = requests.find((r) => r.status === 'pending' && r.input.value === 'alpha')!;
    const card = requestCard(page, '"alpha"');
    expect(await card.locator('.request-tool').textContent()).toBe('Probe');
    expect(await card.locator('.request-summary').textContent()).toBe(pendingAlpha.summary);
    expect(await card.locator('pre').textContent()).toBe(JSON.stringify({ value: 'alpha' }, null, 2));
    expect(await card.locator('.request-reason').textContent()).toBe(pendingAlpha.reason.detail ? `${pendingAlpha.reason.type}: ${pendingAlpha.reason.detail}` : pendingAlpha.reason.type);
    expect(await card.locator('.countdown').textContent()).toMatch(/^expires in (2:00|1:[0-5]\d)$/);
    expect(await card.textContent()).toContain('s-build');
    expect(await requestCard(page, '"beta"').locator('pre').textContent()).toBe(JSON.stringify({ value: 'beta', count: 2 }, null, 2));
    // Nothing has answered them: both agents are still waiting.
    expect([alpha.state.settled, beta.state.settled]).toEqual([false, false]);
    expect(calls).toEqual([]);
    await screenshot(page, 'desktop-02-two-pending-requests');

    await card.getByRole('button', { name: 'Allow' }).click();
    const a = await alpha.response;
    expect(a.status).toBe(200);
    expect(a.body.executions[0]).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'user', detail: 'alice' } } });
    expect(textOf(a.body.tool_results[0]!.content)).toBe('value=alpha');
    expect(beta.state.settled).toBe(false);

    const betaCard = requestCard(page, '"beta"');
    await betaCard.getByLabel('Message (optional)').fill('not in review sessions');
    await betaCard.getByRole('button', { name: 'Deny' }).click();
    const b = await beta.response;
    expect(b.body.executions[0]).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'user', detail: 'alice' } } });
    expect(b.body.tool_results[0]!.is_error).toBe(true);
    expect(textOf(b.body.tool_results[0]!.content)).toContain('not in review sessions');
    expect(calls.map((c) => c.value)).toEqual(['alpha']);

    // The cards leave; the answers are listed; the executions show both outcomes, live.
    await waitCount(page, '#requests-list > li', 0);
    await page.locator('#requests-empty').waitFor();
    expect(await page.locator('#requests-count').isHidden()).toBe(true);
    await page.locator('#requests-recent summary').click();
    await page.locator('#recent-list li', { hasText: 'allowed' }).filter({ hasText: 'by alice' }).waitFor();
    await page.locator('#recent-list li', { hasText: 'denied' }).filter({ hasText: 'by alice' }).waitFor();
    const ids = { alpha: a.body.executions[0]!.id, beta: b.body.executions[0]!.id };
    await page.locator(`li.execution[data-execution-id="${ids.alpha}"][data-status="succeeded"]`).waitFor();
    await page.locator(`li.execution[data-execution-id="${ids.beta}"][data-status="denied"]`).waitFor();
    await screenshot(page, 'desktop-03-answered');

    // The audit log, filtered by tool and reason: both answers, by alice; then only the denial.
    await waitFor(async () => (await getJson<{ entries: unknown[] }>(base, '/audit?tool=Probe&reason=user', ALICE)).entries.length === 2, 'the audit rows to commit', 5000);
    await page.getByRole('button', { name: 'Audit' }).click();
    const audit = page.locator('#panel-audit');
    await audit.getByLabel('Tool', { exact: true }).fill('Probe');
    await audit.getByLabel('Reason', { exact: true }).selectOption('user');
    await page.locator('#audit-filter').getByRole('button', { name: 'Apply' }).click();
    await page.locator('#audit-summary', { hasText: '2 entries (filtered)' }).waitFor();
    const rows = await tableText(page, '#audit-rows');
    expect(rows.map((r) => [r[1], r[2], r[3], r[4], r[5], r[6]])).toEqual([
      ['s-review', 'Probe', 'deny', 'user alice', 'alice', ids.beta],
      ['s-build', 'Probe', 'allow', 'user alice', 'alice', ids.alpha],
    ]);
    await screenshot(page, 'desktop-04-audit-filtered');
    await audit.getByLabel('Decision', { exact: true }).selectOption('deny');
    await page.locator('#audit-filter').getByRole('button', { name: 'Apply' }).click();
    await page.locator('#audit-summary', { hasText: '1 entry (filtered)' }).waitFor();
    expect(await page.locator('#audit-rows tr').getAttribute('data-behavior')).toBe('deny');
    await audit.getByRole('button', { name: 'Clear' }).click();
    await page.locator('#audit-summary', { hasText: /^3 entries$/ }).waitFor();
    expect(await page.locator('#audit-rows tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-tool')))).toEqual(['Probe', 'Probe', 'Lookup']);
    clean(p);
  });

  it('remembers an answer for the session: the next identical ask is answered by the rule', async () => {
    const base = await start({ server: { tokens }, permissions: { askTimeoutMs: 120_000 } }, { extraTools: [probeTool({})] });
    const p = await open(DESKTOP);
    await signIn(p.page, base, ALICE);
    const first = agentCall(base, 's-mem', 'Probe', { value: 'one' }, 'm1');
    const card = requestCard(p.page, '"one"');
    await card.getByLabel('Remember').selectOption('session');
    expect(await card.locator('.hint code').textContent()).toBe('Probe');
    await card.getByRole('button', { name: 'Allow' }).click();
    expect((await first.response).body.executions[0]!.status).toBe('succeeded');
    await p.page.locator('#recent-list li', { hasText: 'remembered (session)' }).waitFor({ state: 'attached' });

    const second = await agentCall(base, 's-mem', 'Probe', { value: 'two' }, 'm2').response;
    expect(second.body.executions[0]).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'rule' } } });
    const { rules } = await getJson<{ rules: Array<{ rule: string; source: string; session_id: string | null; created_by: string | null }> }>(base, '/permissions/rules?session_id=s-mem', ALICE);
    expect(rules).toContainEqual(expect.objectContaining({ rule: 'Probe', source: 'session', session_id: 's-mem', created_by: 'alice' }));
    // Another session is still asked.
    const other = agentCall(base, 's-other', 'Probe', { value: 'three' }, 'm3');
    await requestCard(p.page, '"three"').getByRole('button', { name: 'Deny' }).click();
    expect((await other.response).body.executions[0]!.status).toBe('denied');
    clean(p);
  });

  it('a backlog answered elsewhere while the console still loads its pages: no card is left for an answered request', { timeout: 90_000 }, async () => {
    const base = await start(
      { server: { tokens, maxInFlightCalls: 5000 }, permissions: { headless: 'wait', askTimeoutMs: 120_000 } },
      { extraTools: [probeTool({ name: 'Asker', readOnly: true })] },
    );
    // 1,100 waiting requests: two pages of GET /permissions/requests.
    for (let s = 0; s < 110; s++) {
      // Ten per session: a batch runs ten calls at a time.
      const uses = Array.from({ length: 10 }, (_, i) => use('Asker', { value: `b-${s}-${i}` }, `b-${s}-${i}`));
      const r = await fetch(`${base}/execute`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT}` },
        body: JSON.stringify({ session_id: `s-b${s}`, tool_uses: uses, wait: false }),
      });
      expect(r.status).toBe(202);
    }
    await waitFor(async () => t!.app.toolexec.broker.pendingCount === 1100, 'every request to wait', 30_000);
    const first = t!.app.toolexec.broker.pendingIds('*').slice(0, 60);
    const p = await open(DESKTOP);
    // The second page is held until the test lets it go.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let held = 0;
    await p.page.route(
      (u) => u.pathname === '/permissions/requests' && u.searchParams.has('cursor'),
      async (route) => {
        held += 1;
        await gate;
        await route.continue();
      },
    );
    await signIn(p.page, base, ALICE);
    await waitFor(async () => held > 0, 'the second page to be asked for', UI_TIMEOUT_MS);
    // Meanwhile a script answers 60 of the oldest (all on the first page, already read).
    for (const id of first) {
      const r = await fetch(`${base}/permissions/requests/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ALICE}` },
        body: JSON.stringify({ decision: 'allow' }),
      });
      expect(r.status).toBe(200);
    }
    // The websocket showed the waiting ones and took the answered ones away.
    await waitCount(p.page, '#requests-list > li', 1040);
    const second = p.page.waitForResponse((r) => new URL(r.url()).pathname === '/permissions/requests' && new URL(r.url()).searchParams.has('cursor'));
    release();
    await (await second).finished();
    // A few of the page's own turns for it to take in the last page (no further request marks the end of a load).
    await p.page.evaluate('new Promise((r) => setTimeout(r, 300))');
    // Once every page is read: the answered ones stay away.
    expect(await countOf(p.page, '#requests-list > li')).toBe(1040);
    const shown = await p.page.locator('#requests-list > li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-request-id')));
    expect(shown.filter((id) => first.includes(id!))).toEqual([]);
    clean(p);
  });

  it('shows requests to a read-only token without offering answers; an answer given elsewhere removes the card', async () => {
    const base = await start({ server: { tokens }, permissions: { headless: 'wait', askTimeoutMs: 120_000 } }, { extraTools: [probeTool({})] });
    const p = await open(DESKTOP);
    await signIn(p.page, base, WATCHER);
    const call = agentCall(base, 's-ro', 'Probe', { value: 'watched' }, 'ro1');
    const card = requestCard(p.page, '"watched"');
    await card.locator('.answer-note').waitFor();
    expect(await card.getByRole('button', { name: 'Allow' }).count()).toBe(0);
    expect(await card.getByRole('button', { name: 'Deny' }).count()).toBe(0);

    const { requests } = await getJson<{ requests: Array<{ id: string; status: string }> }>(base, '/permissions/requests', WATCHER);
    const pending = requests.filter((r) => r.status === 'pending');
    expect(pending).toHaveLength(1);
    const answered = await fetch(`${base}/permissions/requests/${pending[0]!.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ALICE}` },
      body: JSON.stringify({ decision: 'allow' }),
    });
    expect(answered.status).toBe(200);
    await waitCount(p.page, '#requests-list > li', 0);
    expect((await call.response).body.executions[0]!.status).toBe('succeeded');
    clean(p);
  });

  it('works on a phone screen: sign in, allow a call, read the audit, nothing scrolls sideways', { timeout: 90_000 }, async () => {
    const base = await start({ server: { tokens }, permissions: { askTimeoutMs: 120_000 } }, { extraTools: [probeTool({})] });
    const p = await open(PHONE);
    const { page } = p;
    await page.goto(`${base}/console`);
    await page.getByLabel('Access token').waitFor();
    expect(await overflowsX(page)).toBe(false);
    await screenshot(page, 'phone-01-login');
    await page.getByLabel('Access token').fill(ALICE);
    await page.getByRole('button', { name: 'Sign in' }).tap();
    await waitLive(page);

    const call = agentCall(base, 's-phone', 'Probe', { value: 'from the phone', count: 12 }, 'ph1');
    const card = requestCard(page, 'from the phone');
    await card.waitFor();
    expect(await page.locator('#pending-count').textContent()).toBe('1');
    expect(await overflowsX(page)).toBe(false);
    expect(await tabsFit(page)).toBe(true);
    // The answer buttons are large enough to tap.
    const box = await card.getByRole('button', { name: 'Allow' }).boundingBox();
    expect(box!.height).toBeGreaterThanOrEqual(44);
    await screenshot(page, 'phone-02-pending-request');
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshot(page, 'phone-02-pending-request-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    expect(call.state.settled).toBe(false);
    await card.getByRole('button', { name: 'Allow' }).tap();
    const r = await call.response;
    expect(r.body.executions[0]).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'user', detail: 'alice' } } });

    await page.getByRole('button', { name: 'Executions' }).tap();
    await page.locator(`li.execution[data-execution-id="${r.body.executions[0]!.id}"][data-status="succeeded"]`).waitFor();
    expect(await overflowsX(page)).toBe(false);
    await screenshot(page, 'phone-03-executions');

    await waitFor(async () => (await getJson<{ entries: unknown[] }>(base, '/audit?session_id=s-phone', ALICE)).entries.length === 1, 'the audit row to commit', 5000);
    await page.getByRole('button', { name: 'Audit' }).tap();
    await page.locator('#panel-audit').getByLabel('Session', { exact: true }).fill('s-phone');
    await page.locator('#audit-filter').getByRole('button', { name: 'Apply' }).tap();
    await page.locator('#audit-summary', { hasText: '1 entry (filtered)' }).waitFor();
    expect(await page.locator('#audit-rows tr td[data-label="Decision"]').textContent()).toBe('allow');
    expect(await overflowsX(page)).toBe(false);
    await screenshot(page, 'phone-04-audit');

    // Signing out forgets the token.
    await page.getByRole('button', { name: 'Sign out' }).tap();
    await page.getByLabel('Access token').waitFor();
    expect(await storedToken(page)).toBeNull();
    clean(p);
  });
});

describe('paging in the console', () => {
  it('loads older executions and audit entries with "Load more"', { timeout: 90_000 }, async () => {
    const base = await start({}, { extraTools: [probeTool({ name: 'Lookup', permission: 'allow' })] });
    const batch = Array.from({ length: 56 }, (_, i) => use('Lookup', { value: `n${i}` }, `lk-${i}`));
    const res = await fetch(`${base}/execute`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session_id: 's-many', tool_uses: batch, wait: true }) });
    expect(((await res.json()) as ExecuteResponse).executions.every((e) => e.status === 'succeeded')).toBe(true);
    await waitFor(async () => (await getJson<{ entries: unknown[] }>(base, '/audit?limit=100')).entries.length === 56, 'the audit rows to commit', 5000);

    const p = await open(DESKTOP);
    const { page } = p;
    await page.goto(`${base}/console`);
    await waitLive(page);
    await waitCount(page, '#executions-list > li', 50);
    await page.locator('#executions-more').click();
    await waitCount(page, '#executions-list > li', 56);
    expect(await page.locator('#executions-more').isHidden()).toBe(true);
    const ids = await page.locator('#executions-list > li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-execution-id')));
    expect(new Set(ids).size).toBe(56);

    await page.getByRole('button', { name: 'Audit' }).click();
    await page.locator('#audit-summary', { hasText: '50 entries, more available' }).waitFor();
    await page.locator('#audit-more').click();
    await page.locator('#audit-summary', { hasText: /^56 entries$/ }).waitFor();
    expect(await countOf(page, '#audit-rows tr')).toBe(56);
    expect(await page.locator('#audit-more').isHidden()).toBe(true);
    clean(p);
  });

  it('a filter that matches only old rows: executions and audit say to look further back instead of "no match", and "Load more" finds them', { timeout: 90_000 }, async () => {
    const base = await start();
    // 250,000 decisions; only the oldest is a Rare one. A page looks at 20,000 rows per request, ten requests
    // at a time: the first "page" of the filtered list is empty, with more to look at.
    t!.app.toolexec.db.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250000)
      INSERT INTO audit (id, ts, session_id, tool_use_id, execution_id, tool, behavior, reason_type, reason_detail, actor, input_digest)
        SELECT i, ${Date.now() - 300_000_000} + i * 1000, 's-old', 'tu' || i, 'ex' || i, CASE WHEN i = 1 THEN 'Rare' ELSE 'Read' END,
               'allow', 'rule', 'd', 'agent', 'x' FROM n;
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250000)
      INSERT INTO executions (seq, id, session_id, tool_use_id, tool, status, input_digest, created_at, finished_at, duration_ms)
        SELECT i, 'ex_old' || i, 's-old', 'tu' || i, CASE WHEN i = 1 THEN 'Rare' ELSE 'Read' END, 'succeeded', 'x',
               ${Date.now() - 300_000_000} + i * 1000, ${Date.now() - 300_000_000} + i * 1000 + 1, 1 FROM n;`);
    const p = await open(DESKTOP);
    const { page } = p;
    await page.goto(`${base}/console`);
    await waitLive(page);
    await waitCount(page, '#executions-list > li', 50);
    await page.locator('#panel-executions').getByLabel('Tool', { exact: true }).fill('Rare');
    await page.locator('#executions-filter').getByRole('button', { name: 'Apply' }).click();
    await waitCount(page, '#executions-list > li', 0);
    await page.locator('#executions-more').waitFor();
    expect(await page.locator('#executions-empty').textContent()).toMatch(/further back/);
    await page.locator('#executions-more').click();
    await waitCount(page, '#executions-list > li', 1);
    expect(await page.locator('#executions-list > li').getAttribute('data-execution-id')).toBe('ex_old1');
    expect(await page.locator('#executions-more').isHidden()).toBe(true);

    await page.getByRole('button', { name: 'Audit' }).click();
    await page.locator('#audit-summary', { hasText: '50 entries, more available' }).waitFor();
    await page.locator('#panel-audit').getByLabel('Tool', { exact: true }).fill('Rare');
    await page.locator('#audit-filter').getByRole('button', { name: 'Apply' }).click();
    await page.locator('#audit-summary', { hasText: /further back/ }).waitFor();
    expect(await countOf(page, '#audit-rows tr')).toBe(0);
    expect(await page.locator('#audit-more').isVisible()).toBe(true);
    await page.locator('#audit-more').click();
    await page.locator('#audit-summary', { hasText: /^1 entry \(filtered\)$/ }).waitFor();
    expect(await tableText(page, '#audit-rows')).toEqual([[expect.any(String), 's-old', 'Rare', 'allow', 'rule d', 'agent', 'ex1']]);
    expect(await page.locator('#audit-more').isHidden()).toBe(true);
    clean(p);
  });
});

describe('live executions in the console', () => {
  it('shows a running call’s progress on desktop and phone, and cancels it', { timeout: 90_000 }, async () => {
    const base = await start({ server: { tokens } }, { extraTools: [tickerTool()] });
    const desk = await open(DESKTOP);
    const phone = await open(PHONE);
    await signIn(desk.page, base, ALICE);
    await signIn(phone.page, base, ALICE);
    await phone.page.getByRole('button', { name: 'Executions' }).tap();

    const res = await fetch(`${base}/execute`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT}` },
      body: JSON.stringify({ session_id: 's-index', tool_uses: [use('Ticker', { label: 'indexing' }, 'tick-1')], wait: false }),
    });
    expect(res.status).toBe(202);
    const id = ((await res.json()) as ExecuteResponse).executions[0]!.id;

    for (const { page } of [desk, phone]) {
      const row = page.locator(`li.execution[data-execution-id="${id}"]`);
      await row.locator('.progress-text', { hasText: 'indexing: step' }).waitFor();
      // The bar counts steps out of the tool's total (a <progress> starts at 0 of 1).
      const bar = row.locator('progress');
      const reading = async () => (await bar.evaluate((el) => [Reflect.get(el, 'max'), Reflect.get(el, 'value')])) as [number, number];
      await waitFor(async () => {
        const [max, value] = await reading();
        return max === 1000 && value > 0;
      }, 'the progress bar to fill', UI_TIMEOUT_MS);
      expect(await row.getAttribute('data-status')).toBe('running');
      expect(await row.getByRole('button', { name: 'Cancel' }).isVisible()).toBe(true);
    }
    await screenshot(desk.page, 'desktop-05-execution-progress');
    await screenshot(phone.page, 'phone-05-execution-progress');
    expect(await overflowsX(phone.page)).toBe(false);

    await phone.page.locator(`li.execution[data-execution-id="${id}"]`).getByRole('button', { name: 'Cancel' }).tap();
    for (const { page } of [desk, phone]) await page.locator(`li.execution[data-execution-id="${id}"][data-status="cancelled"]`).waitFor();
    const { execution } = await getJson<{ execution: { status: string; error_class: string } }>(base, `/executions/${id}`, ALICE);
    expect(execution).toMatchObject({ status: 'cancelled', error_class: 'cancelled' });
    expect(await desk.page.locator(`li.execution[data-execution-id="${id}"]`).getByRole('button', { name: 'Cancel' }).isHidden()).toBe(true);

    // Details come from GET /executions/:id.
    const row = desk.page.locator(`li.execution[data-execution-id="${id}"]`);
    await row.getByRole('button', { name: 'Details' }).click();
    await row.locator('.ex-detail pre', { hasText: '"label": "indexing"' }).waitFor();
    await screenshot(desk.page, 'desktop-06-execution-cancelled-details');
    clean(desk);
    clean(phone);
  });
});

describe('status in the console', () => {
  it('needs no sign-in without tokens, and shows the statistics and MCP servers the API reports', { timeout: 90_000 }, async () => {
    t = await makeMcpApp({ permissions: { allow: ['Probe'] }, mcpServers: { fx: fixtureStdio('--tools=echo') } }, { extraTools: [probeTool({})] });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`;
    await waitConnected(t.app, ['fx']);
    const run = await agentCall(base, 's-stats', 'Probe', { value: 'counted' }, 'st1').response;
    expect(run.body.executions[0]!.status).toBe('succeeded');

    const desk = await open(DESKTOP);
    const { page } = desk;
    await page.goto(`${base}/console`);
    await waitLive(page);
    expect(await page.locator('#login').isHidden()).toBe(true);
    expect(await page.locator('#who').textContent()).toBe('Open access');
    expect(await page.getByRole('button', { name: 'Sign out' }).isHidden()).toBe(true);

    await page.getByRole('button', { name: 'Status' }).click();
    const { servers } = await getJson<{ servers: Array<{ name: string; state: string; tools: number }> }>(base, '/mcp/servers');
    const fx = page.locator('#mcp tr[data-server="fx"]');
    await fx.waitFor();
    expect(await fx.getAttribute('data-state')).toBe('connected');
    expect(await fx.locator('td[data-label="Tools"]').textContent()).toBe(String(servers.find((s) => s.name === 'fx')!.tools));

    const stats = await fetch(`${base}/stats`);
    if (stats.status === 200) {
      // Rendered from whatever the body holds: every tool the API counts has a row.
      const body = (await stats.json()) as { tools?: Record<string, unknown> };
      for (const tool of Object.keys(body.tools ?? {})) await page.locator(`#stats tr[data-key="${tool}"]`).waitFor();
      expect(Object.keys(body.tools ?? {})).toContain('Probe');
    } else {
      expect(stats.status).toBe(404);
      await page.locator('#stats [data-stats-unavailable]').waitFor();
    }
    await screenshot(page, 'desktop-07-status');

    const phone = await open(PHONE);
    await phone.page.goto(`${base}/console`);
    await waitLive(phone.page);
    await phone.page.getByRole('button', { name: 'Status' }).tap();
    await phone.page.locator('#mcp tr[data-server="fx"]').waitFor();
    expect(await overflowsX(phone.page)).toBe(false);
    await screenshot(phone.page, 'phone-06-status');

    // A service without /stats: the console says so and the rest still works.
    await page.route('**/stats', (route) =>
      route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ error: { code: 'TOOLEXEC_ERR_ROUTE_NOT_FOUND', message: 'No route GET /stats' } }) }),
    );
    await page.locator('#status-refresh').click();
    await page.locator('#stats [data-stats-unavailable]', { hasText: 'Statistics are not available on this service.' }).waitFor();
    expect(await countOf(page, '#mcp tr[data-server="fx"]')).toBe(1);
    clean(desk);
    clean(phone);
  });
});
