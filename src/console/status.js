// Status: GET /stats rendered generically (whatever shape it has: a map of
// records becomes a table, other objects a definition list), and the MCP
// servers from GET /mcp/servers. A service without /stats says so.
import { api } from './api.js';
import { $, badge, formatNumber, formatTime, h } from './dom.js';

const AUTO_REFRESH_MS = 15_000;

export class StatusPanel {
  constructor({ isVisible }) {
    this.stats = $('stats');
    this.mcp = $('mcp');
    this.isVisible = isVisible;
    $('status-refresh').addEventListener('click', () => this.load());
    this.timer = setInterval(() => {
      if (this.isVisible()) this.load();
    }, AUTO_REFRESH_MS);
  }

  async load() {
    await Promise.all([this.loadStats(), this.loadMcp()]);
  }

  async loadStats() {
    try {
      const body = await api('/stats');
      this.stats.replaceChildren(renderStats(body));
    } catch (e) {
      this.stats.replaceChildren(
        e.status === 404
          ? h('p', { class: 'empty', 'data-stats-unavailable': true, text: 'Statistics are not available on this service.' })
          : h('p', { class: 'error', role: 'alert', text: `Could not load statistics: ${e.message}` }),
      );
    }
  }

  async loadMcp() {
    try {
      const { servers } = await api('/mcp/servers');
      this.mcp.replaceChildren(servers.length === 0 ? h('p', { class: 'empty', text: 'No MCP server is configured.' }) : mcpTable(servers));
    } catch (e) {
      this.mcp.replaceChildren(h('p', { class: 'error', role: 'alert', text: `Could not load MCP servers: ${e.message}` }));
    }
  }
}

const MCP_COLUMNS = ['Server', 'Type', 'State', 'Tools', 'Connection', 'Problems'];

function mcpTable(servers) {
  const rows = servers.map((s) => {
    const since = s.state === 'connected' && s.connected_at ? `since ${isoText(s.connected_at)}` : s.next_retry_at ? `retry at ${isoText(s.next_retry_at)}` : '—';
    const problems = [s.last_error, ...(s.problems ?? []).map((p) => p.message), ...(s.unusable_tools ?? []).map((u) => `${u.name}: ${u.error}`)].filter(Boolean);
    const cells = [
      h('strong', { text: s.name }),
      s.type,
      badge(s.state),
      formatNumber(s.tools),
      since,
      problems.length ? h('span', { class: 'mcp-error', text: problems.join(' · ') }) : '—',
    ];
    return h('tr', { dataset: { server: s.name, state: s.state } }, cells.map((c, i) => h('td', { dataset: { label: MCP_COLUMNS[i] } }, c)));
  });
  return h(
    'table',
    { class: 'table stack mcp-table' },
    h('thead', {}, h('tr', {}, MCP_COLUMNS.map((c) => h('th', { scope: 'col', text: c })))),
    h('tbody', {}, rows),
  );
}

function isoText(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : formatTime(t);
}

const isRecord = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const isTable = (v) => isRecord(v) && Object.keys(v).length > 0 && Object.values(v).every(isRecord);
const label = (k) => k.replace(/_/g, ' ');
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Leaf values of a record, nested keys joined with dots: {a: {b: 1}} → [['a.b', 1]]; empty records have none. */
function flatten(v, prefix = '', out = []) {
  for (const [k, x] of Object.entries(v)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (isRecord(x)) flatten(x, key, out);
    else out.push([key, x]);
  }
  return out;
}

function scalar(v) {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'object' && x !== null ? JSON.stringify(x) : String(x))).join(', ');
  return JSON.stringify(v);
}

function leaf(v) {
  if (typeof v === 'string' && ISO_TIME.test(v)) return h('time', { datetime: v, title: v, text: formatTime(Date.parse(v)) });
  return h('span', { text: scalar(v) });
}

/**
 * The statistics body, whatever its shape: its plain values in a definition
 * list, then each record of records (tools by name, decisions by reason) as a
 * table of its own: one row per key, one column per leaf.
 */
function renderStats(body) {
  if (!isRecord(body)) return leaf(body);
  const plain = Object.entries(body).filter(([, v]) => !isTable(v));
  const tables = Object.entries(body).filter(([, v]) => isTable(v));
  return h(
    'div',
    {},
    plain.length > 0 ? h('dl', { class: 'stats-list' }, plain.map(([k, v]) => [h('dt', { text: label(k) }), h('dd', { dataset: { key: k } }, renderValue(v, 1))])) : null,
    tables.map(([k, v]) => h('section', { class: 'stats-block', dataset: { key: k } }, h('h4', { text: label(k) }), recordTable(Object.entries(v)))),
  );
}

/** Nested values; depth is bounded so that a strange body cannot blow up the page. */
function renderValue(v, depth) {
  if (!isRecord(v) || depth > 4) return leaf(v);
  const entries = Object.entries(v);
  if (entries.length === 0) return h('span', { class: 'muted', text: 'none yet' });
  if (isTable(v)) return recordTable(entries);
  return h('dl', { class: 'meta' }, entries.map(([k, x]) => [h('dt', { text: label(k) }), h('dd', { dataset: { key: k } }, renderValue(x, depth + 1))]));
}

function recordTable(entries) {
  const columns = [];
  const rows = entries.map(([k, x]) => {
    const leaves = new Map(flatten(x));
    for (const c of leaves.keys()) if (!columns.includes(c)) columns.push(c);
    return [k, leaves];
  });
  // "duration_ms.p50" is headed "p50" under a small "duration ms".
  const head = (c) => {
    const dot = c.lastIndexOf('.');
    return h('th', { scope: 'col', class: 'num' }, dot > 0 ? h('span', { class: 'col-group', text: label(c.slice(0, dot)) }) : null, label(c.slice(dot + 1)));
  };
  return h(
    'div',
    { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': 'Scrollable table' },
    h(
      'table',
      { class: 'table stats-table' },
      h('thead', {}, h('tr', {}, h('td', {}), columns.map(head))),
      h(
        'tbody',
        {},
        rows.map(([k, leaves]) =>
          h('tr', { dataset: { key: k } }, h('th', { scope: 'row', text: k }), columns.map((c) => h('td', { class: 'num', text: leaves.has(c) ? scalar(leaves.get(c)) : '' }))),
        ),
      ),
    ),
  );
}
