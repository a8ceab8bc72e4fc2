// The audit log: GET /audit with the filter form's fields, newest first,
// "load more" by cursor. On narrow screens the table stacks (console.css),
// each cell labelled by its column.
import { api } from './api.js';
import { $, badge, formQuery, formatTime, h, isoTime, setError, show } from './dom.js';

const PAGE = 50;
const COLUMNS = ['Time', 'Session', 'Tool', 'Decision', 'Reason', 'Actor', 'Execution'];

export class AuditPanel {
  constructor() {
    this.form = $('audit-filter');
    this.rows = $('audit-rows');
    this.more = $('audit-more');
    this.error = $('audit-error');
    this.summary = $('audit-summary');
    this.filters = {};
    this.cursor = null;
    this.count = 0;
    this.loaded = false;
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.filters = formQuery(this.form);
      this.load().catch(() => {});
    });
    // "Clear" resets the fields first, then shows everything.
    this.form.addEventListener('reset', () => {
      setTimeout(() => {
        this.filters = {};
        this.load().catch(() => {});
      });
    });
    $('audit-refresh').addEventListener('click', () => this.load().catch(() => {}));
    this.more.addEventListener('click', () => this.page(this.cursor).catch(() => {}));
  }

  async load() {
    this.loaded = true;
    this.count = 0;
    this.cursor = null;
    this.rows.replaceChildren();
    await this.page(undefined);
  }

  async page(cursor) {
    setError(this.error, '');
    this.more.disabled = true;
    this.summary.textContent = 'Loading…';
    try {
      // A filter no index serves is checked on a bounded window of rows per request: a page may come back
      // short, or empty, with a cursor. A few requests fill it; "load more" goes on from there.
      let got = 0;
      let next = cursor;
      for (let i = 0; i < 10; i++) {
        const body = await api('/audit', { query: { ...this.filters, limit: PAGE - got, cursor: next } });
        this.rows.append(...body.entries.map(row));
        got += body.entries.length;
        next = body.next_cursor;
        if (!next || got >= PAGE) break;
      }
      this.count += got;
      this.cursor = next;
    } catch (e) {
      setError(this.error, `Could not load the audit log: ${e.message}`);
      throw e;
    } finally {
      this.more.disabled = false;
      show(this.more, Boolean(this.cursor));
      const filtered = Object.keys(this.filters).length > 0;
      this.summary.textContent =
        this.count === 0
          ? this.cursor
            ? // Only the most recent part of the log was looked at (a bounded window per request).
              'No decision matches among the most recent ones; “Load more” looks further back.'
            : filtered
              ? 'No decision matches these filters.'
              : 'No decision recorded yet.'
          : `${this.count} ${this.count === 1 ? 'entry' : 'entries'}${this.cursor ? ', more available' : ''}${filtered ? ' (filtered)' : ''}`;
    }
  }
}

function row(a) {
  const reason = h('span', {}, h('span', { class: 'reason-type', text: a.reason?.type ?? '' }), a.reason?.detail ? h('span', { class: 'muted', text: ` ${a.reason.detail}` }) : null);
  const cells = [
    h('time', { datetime: isoTime(a.ts), text: formatTime(a.ts) }),
    h('span', { class: 'mono', text: a.session_id }),
    h('strong', { text: a.tool }),
    badge(a.behavior, 'decision'),
    reason,
    a.actor ?? '—',
    h('span', { class: 'mono', title: a.tool_use_id, text: a.execution_id }),
  ];
  return h(
    'tr',
    { dataset: { auditId: a.id, behavior: a.behavior, tool: a.tool } },
    cells.map((c, i) => h('td', { dataset: { label: COLUMNS[i] } }, c)),
  );
}
