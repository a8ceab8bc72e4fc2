// Executions: the list from GET /executions (newest first, "load more" by
// cursor), kept live by the websocket's execution.started / .progress /
// .finished frames, with a progress bar, details (GET /executions/:id) and
// Cancel (POST /executions/:id/cancel) for calls still in flight.
import { api } from './api.js';
import { $, badge, formQuery, formatDuration, formatTime, h, isoTime, prettyJson, setError, show } from './dom.js';

const TERMINAL = new Set(['succeeded', 'failed', 'denied', 'cancelled']);
/** How often calls in flight are looked up again: the websocket carries no event between start and finish. */
const REFRESH_MS = 3000;
const REFRESH_MAX = 20;

export class ExecutionsPanel {
  constructor({ isActive }) {
    this.isActive = isActive;
    this.rows = new Map();
    this.list = $('executions-list');
    this.more = $('executions-more');
    this.error = $('executions-error');
    this.empty = $('executions-empty');
    this.form = $('executions-filter');
    this.filters = {};
    this.cursor = null;
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.filters = formQuery(this.form);
      this.load().catch(() => {});
    });
    $('executions-refresh').addEventListener('click', () => this.load().catch(() => {}));
    this.more.addEventListener('click', () => this.page(this.cursor).catch(() => {}));
    this.timer = setInterval(() => this.refreshLive(), REFRESH_MS);
  }

  async load() {
    this.rows.clear();
    this.list.replaceChildren();
    await this.page(undefined);
  }

  async page(cursor) {
    setError(this.error, '');
    this.more.disabled = true;
    try {
      // A status or tool filter is checked on a bounded window of rows per request: a page may come back
      // short, or empty, with a cursor. A few requests fill it; "load more" goes on from there.
      let got = 0;
      let next = cursor;
      for (let i = 0; i < 10; i++) {
        const body = await api('/executions', { query: { ...this.filters, limit: 50 - got, cursor: next } });
        for (const e of body.executions) this.upsert(e, { append: true });
        got += body.executions.length;
        next = body.next_cursor;
        if (!next || got >= 50) break;
      }
      this.cursor = next;
    } catch (e) {
      setError(this.error, `Could not load executions: ${e.message}`);
      throw e;
    } finally {
      this.more.disabled = false;
      show(this.more, Boolean(this.cursor));
      // Only the most recent calls were looked at if a cursor is left (a bounded window per request).
      this.empty.textContent = this.cursor ? 'No execution matches among the most recent ones; “Load more” looks further back.' : 'No execution matches.';
      show(this.empty, this.rows.size === 0);
    }
  }

  matches(e) {
    const f = this.filters;
    return (!f.session_id || f.session_id === e.session_id) && (!f.tool || f.tool === e.tool) && (!f.status || f.status === e.status);
  }

  /** Adds or updates a row; new live rows go on top, pages of older ones at the bottom. */
  upsert(data, { append = false, live = false } = {}) {
    let row = this.rows.get(data.id);
    if (!row) {
      if (live && !this.matches(data)) return undefined;
      row = new ExecutionRow(data);
      this.rows.set(data.id, row);
      if (append) this.list.append(row.el);
      else this.list.prepend(row.el);
      show(this.empty, false);
    } else {
      // A frame's arrival time stands in for a start time only on a new row.
      const { created_at: _ignored, ...patch } = data;
      row.update(live ? patch : data);
    }
    if (live) row.touched = Date.now();
    return row;
  }

  onStarted(frame) {
    const e = frame.execution;
    this.upsert({ ...e, created_at: Date.now() }, { live: true });
  }

  onProgress(frame) {
    const p = frame.progress;
    const row = this.upsert({ id: p.execution_id, session_id: p.session_id, tool: p.tool, status: 'running', created_at: Date.now() }, { live: true });
    row?.progress(p);
  }

  onFinished(frame) {
    const e = frame.execution;
    const row = this.upsert({ ...e, finished_at: Date.now() }, { live: true });
    row?.finished();
  }

  /** A call waiting for an answer says so; an allowed one runs next. */
  onPermission(request) {
    const row = this.rows.get(request.execution_id);
    if (!row || TERMINAL.has(row.data.status)) return;
    if (request.status === 'pending') row.update({ status: 'awaiting_permission' });
    else if (request.status === 'allowed') row.update({ status: 'running' });
    row.touched = Date.now();
  }

  async refreshLive() {
    if (!this.isActive()) return;
    const now = Date.now();
    const stale = [...this.rows.values()].filter((r) => !TERMINAL.has(r.data.status) && now - r.touched >= REFRESH_MS).slice(0, REFRESH_MAX);
    for (const row of stale) {
      row.touched = now;
      try {
        const { execution } = await api(`/executions/${encodeURIComponent(row.data.id)}`);
        row.update(execution);
      } catch {
        /* the next round tries again */
      }
    }
  }
}

class ExecutionRow {
  constructor(data) {
    this.data = {};
    this.touched = 0;
    this.statusEl = h('span');
    this.tool = h('strong', { class: 'ex-tool' });
    this.session = h('span', { class: 'mono ex-session' });
    this.time = h('time', { class: 'muted ex-time' });
    this.duration = h('span', { class: 'muted ex-duration' });
    this.decision = h('span', { class: 'ex-decision' });
    this.bar = h('progress', { max: 1 });
    this.progressText = h('span', { class: 'progress-text' });
    this.progressBox = h('div', { class: 'progress', hidden: true }, this.bar, this.progressText);
    this.message = h('p', { class: 'error', role: 'alert', hidden: true });
    this.cancel = h('button', { type: 'button', class: 'btn btn-deny btn-small btn-cancel', text: 'Cancel' });
    this.detailsButton = h('button', { type: 'button', class: 'btn btn-quiet btn-small', 'aria-expanded': 'false', text: 'Details' });
    this.detail = h('div', { class: 'ex-detail', hidden: true });
    this.cancel.addEventListener('click', () => this.requestCancel());
    this.detailsButton.addEventListener('click', () => this.toggleDetails());
    this.el = h(
      'li',
      { class: 'row execution' },
      h('div', { class: 'row-main' }, this.statusEl, this.tool, this.session, this.time, this.duration),
      h('div', { class: 'row-sub' }, this.decision),
      this.progressBox,
      h('div', { class: 'row-actions' }, this.cancel, this.detailsButton),
      this.message,
      this.detail,
    );
    this.update(data);
  }

  update(patch) {
    const d = Object.assign(this.data, Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)));
    this.el.dataset.executionId = d.id;
    this.el.dataset.status = d.status;
    this.statusEl.replaceWith((this.statusEl = badge(d.status)));
    this.tool.textContent = d.tool ?? '';
    this.session.textContent = d.session_id ?? '';
    this.time.textContent = formatTime(d.created_at);
    const iso = isoTime(d.created_at);
    if (iso) this.time.setAttribute('datetime', iso);
    this.duration.textContent = formatDuration(d.duration_ms);
    const dec = d.decision;
    this.decision.replaceChildren(
      ...(dec ? [badge(dec.behavior, 'decision'), ` ${dec.reason?.type ?? ''}${dec.reason?.detail ? `: ${dec.reason.detail}` : ''}`] : []),
      d.error_class ? h('span', { class: 'muted', text: ` · ${d.error_class}` }) : '',
    );
    const done = TERMINAL.has(d.status);
    show(this.cancel, !done);
    if (done) show(this.progressBox, false);
  }

  progress(p) {
    show(this.progressBox, true);
    if (typeof p.progress === 'number' && typeof p.total === 'number' && p.total > 0) {
      this.bar.max = p.total;
      this.bar.value = Math.min(p.progress, p.total);
    } else {
      this.bar.removeAttribute('value');
    }
    const counts = typeof p.progress === 'number' ? (typeof p.total === 'number' ? `${p.progress} / ${p.total}` : String(p.progress)) : '';
    this.progressText.textContent = [p.message, counts].filter(Boolean).join(' · ');
    this.bar.setAttribute('aria-label', `Progress of ${this.data.tool ?? 'the call'}`);
  }

  finished() {
    this.cancel.disabled = false;
    this.cancel.textContent = 'Cancel';
    if (this.detailOpen) this.loadDetails().catch(() => {});
  }

  async requestCancel() {
    this.cancel.disabled = true;
    this.cancel.textContent = 'Cancelling…';
    setError(this.message, '');
    try {
      await api(`/executions/${encodeURIComponent(this.data.id)}/cancel`, { method: 'POST', body: {} });
    } catch (e) {
      setError(this.message, e.message);
      this.cancel.disabled = false;
      this.cancel.textContent = 'Cancel';
    }
  }

  async toggleDetails() {
    this.detailOpen = !this.detailOpen;
    this.detailsButton.setAttribute('aria-expanded', String(this.detailOpen));
    show(this.detail, this.detailOpen);
    if (this.detailOpen) await this.loadDetails().catch((e) => this.detail.replaceChildren(h('p', { class: 'error', text: e.message })));
  }

  async loadDetails() {
    const { execution: x } = await api(`/executions/${encodeURIComponent(this.data.id)}`);
    const timings = Object.entries(x.timings ?? {}).map(([k, v]) => `${k} ${formatDuration(v)}`).join(' · ');
    // Each step of the chain: "layer → outcome: detail" ({layer, outcome, detail}); anything else as JSON.
    const chain = (x.decision?.chain ?? [])
      .map((c) => (c && typeof c.layer === 'string' ? `${c.layer} → ${c.outcome}${c.detail ? `: ${c.detail}` : ''}` : prettyJson(c)))
      .join('\n');
    const item = (label, value) => (value ? [h('dt', { text: label }), h('dd', {}, value)] : []);
    const pre = (text) => h('pre', { class: 'json', tabindex: 0 }, h('code', { text }));
    this.detail.replaceChildren(
      h('dl', { class: 'meta' },
        item('Execution', h('span', { class: 'mono', text: x.id })),
        item('Tool use', h('span', { class: 'mono', text: x.tool_use_id })),
        item('Actor', x.actor),
        item('Decided by', x.decision?.actor),
        item('Timings', timings),
        item('Result', x.result_id ? h('span', { class: 'mono', text: x.result_id }) : null),
        item('Input', pre(prettyJson(x.input))),
        item('Decision chain', chain ? pre(chain) : null),
        item('Hook messages', x.hook_messages?.length ? pre(prettyJson(x.hook_messages)) : null),
        item('Result preview', x.preview ? pre(x.preview) : null),
      ),
    );
  }
}
