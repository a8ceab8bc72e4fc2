// Pending permission requests: one card each, with the tool, its summary and
// input, the reason it asks, the time left, and Allow / Deny with "remember".
// Fed by GET /permissions/requests and the websocket's permission.request /
// permission.resolved frames; answered with POST /permissions/requests/:id.
import { api } from './api.js';
import { $, announce, formatCountdown, formatTime, h, isoTime, prettyJson, setError, show } from './dom.js';

const RECENT_MAX = 20;

export class RequestsPanel {
  constructor({ onCountChange }) {
    this.pending = new Map();
    this.cards = new Map();
    this.recent = [];
    this.onCountChange = onCountChange;
    this.list = $('requests-list');
    this.recentList = $('recent-list');
    this.empty = $('requests-empty');
    this.timer = setInterval(() => this.tick(), 1000);
    /** For each load under way: the requests answered since it began (its pages may still list them as pending). */
    this.loading = new Set();
  }

  /** Loads pending and recent requests; later frames keep them current. */
  async load() {
    // Every page of the pending requests (the first carries the recent ones too). A request answered while
    // the pages are read is left out: a page read before the answer still lists it as pending.
    const answered = new Set();
    this.loading.add(answered);
    const requests = [];
    try {
      let cursor = null;
      do {
        const page = await api(`/permissions/requests?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        requests.push(...page.requests);
        cursor = page.next_cursor;
      } while (cursor);
    } finally {
      this.loading.delete(answered);
    }
    const pendingIds = new Set();
    for (const r of requests) {
      if (r.status === 'pending' && answered.has(r.id)) continue;
      if (r.status === 'pending') {
        pendingIds.add(r.id);
        this.add(r, false);
      } else {
        this.rememberResolved(r);
      }
    }
    // A request that was pending before a reconnect and is no longer: answered elsewhere.
    for (const id of [...this.pending.keys()]) if (!pendingIds.has(id)) this.remove(id);
    this.renderRecent();
  }

  add(request, fromFrame) {
    if (this.pending.has(request.id) || this.recent.some((r) => r.id === request.id)) return;
    this.pending.set(request.id, request);
    const card = this.card(request);
    this.cards.set(request.id, card);
    // Oldest first: the one that expires soonest is on top. Only the new card
    // moves, so that a half-typed message in another card keeps its focus.
    let next = null;
    for (const r of this.pending.values()) {
      if (r.id !== request.id && r.created_at > request.created_at && (!next || r.created_at < next.created_at)) next = r;
    }
    this.list.insertBefore(card, next ? (this.cards.get(next.id) ?? null) : null);
    this.changed();
    if (fromFrame) announce(`Permission requested: ${request.tool}. ${request.summary}`);
  }

  resolved(request) {
    for (const answered of this.loading) answered.add(request.id);
    this.remove(request.id);
    this.rememberResolved(request);
    this.renderRecent();
  }

  remove(id) {
    if (!this.pending.delete(id)) return;
    this.cards.get(id)?.remove();
    this.cards.delete(id);
    this.changed();
  }

  rememberResolved(request) {
    const i = this.recent.findIndex((r) => r.id === request.id);
    if (i >= 0) this.recent.splice(i, 1);
    this.recent.unshift(request);
    this.recent.sort((a, b) => (b.resolved_at ?? b.created_at) - (a.resolved_at ?? a.created_at));
    this.recent.length = Math.min(this.recent.length, RECENT_MAX);
  }

  changed() {
    show(this.empty, this.pending.size === 0);
    this.onCountChange(this.pending.size);
  }

  renderRecent() {
    this.recentList.replaceChildren(
      ...this.recent.map((r) =>
        h(
          'li',
          { class: 'recent-item', dataset: { requestId: r.id } },
          h('span', { class: `badge-status is-${r.status}`, text: r.status }),
          ' ',
          h('strong', { text: r.tool }),
          ' ',
          h('span', { class: 'summary-inline', text: r.summary }),
          h('span', { class: 'muted' }, r.resolved_by ? ` by ${r.resolved_by}` : '', r.remember ? ` · remembered (${r.remember})` : '', ` · ${formatTime(r.resolved_at ?? r.created_at)}`),
        ),
      ),
    );
    show($('requests-recent'), this.recent.length > 0);
  }

  card(r) {
    const id = r.id;
    const rememberId = `remember-${id}`;
    const messageId = `message-${id}`;
    const titleId = `title-${id}`;
    const error = h('p', { class: 'error', role: 'alert', hidden: true });
    const remember = h(
      'select',
      { id: rememberId, name: 'remember' },
      h('option', { value: '', text: 'Only this call' }),
      h('option', { value: 'session', text: 'For this session' }),
      h('option', { value: 'always', text: 'Always' }),
    );
    const message = h('input', { id: messageId, name: 'message', type: 'text', maxlength: 10000, autocomplete: 'off', placeholder: 'Told to the agent with the answer' });
    const allow = h('button', { type: 'button', class: 'btn btn-allow', text: 'Allow' });
    const deny = h('button', { type: 'button', class: 'btn btn-deny', text: 'Deny' });
    const answer = async (decision) => {
      allow.disabled = deny.disabled = true;
      setError(error, '');
      const body = { decision };
      if (remember.value) body.remember = remember.value;
      if (message.value.trim()) body.message = message.value.trim();
      try {
        const { request } = await api(`/permissions/requests/${encodeURIComponent(id)}`, { method: 'POST', body });
        this.resolved(request);
        announce(`${decision === 'allow' ? 'Allowed' : 'Denied'}: ${r.tool}`);
      } catch (e) {
        if (e.code === 'TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED' || e.code === 'TOOLEXEC_ERR_PERMISSION_REQUEST_NOT_FOUND') {
          setError(error, `${e.message}.`);
          setTimeout(() => this.remove(id), 4000);
          return;
        }
        setError(error, e.message);
        allow.disabled = deny.disabled = false;
      }
    };
    allow.addEventListener('click', () => answer('allow'));
    deny.addEventListener('click', () => answer('deny'));

    const reason = r.reason?.detail ? `${r.reason.type}: ${r.reason.detail}` : (r.reason?.type ?? '');
    return h(
      'li',
      { class: 'card request', dataset: { requestId: id, tool: r.tool } },
      h('article', { 'aria-labelledby': titleId },
        h('header', { class: 'request-head' },
          h('h3', { id: titleId, class: 'request-tool', text: r.tool }),
          h('time', { class: 'countdown', datetime: isoTime(r.expires_at), dataset: { expires: r.expires_at } }, countdownText(r.expires_at)),
        ),
        h('p', { class: 'request-summary', text: r.summary }),
        r.message ? h('p', { class: 'request-message', text: r.message }) : null,
        h('dl', { class: 'meta' },
          h('dt', { text: 'Reason' }), h('dd', { class: 'request-reason', text: reason }),
          h('dt', { text: 'Session' }), h('dd', { class: 'mono', text: r.session_id }),
          h('dt', { text: 'Asked' }), h('dd', {}, h('time', { datetime: isoTime(r.created_at), text: formatTime(r.created_at) })),
        ),
        h('details', { class: 'request-input', open: true },
          h('summary', { text: 'Input' }),
          h('pre', { class: 'json', tabindex: 0 }, h('code', { text: prettyJson(r.input) })),
        ),
        h('div', { class: 'answer' },
          h('div', { class: 'field' },
            h('label', { for: rememberId, text: 'Remember' }),
            remember,
            r.suggested_rule
              ? h('span', { class: 'hint' }, 'as the rule ', h('code', { text: r.suggested_rule }))
              : h('span', { class: 'hint', text: 'no rule covers exactly this call: answer without remembering' }),
          ),
          h('div', { class: 'field' }, h('label', { for: messageId, text: 'Message (optional)' }), message),
          h('div', { class: 'actions' }, allow, deny),
          error,
        ),
        h('p', { class: 'answer-note muted', text: 'This token cannot answer permission requests (it lacks the approve scope).' }),
      ),
    );
  }

  tick() {
    const now = Date.now();
    for (const el of this.list.querySelectorAll('[data-expires]')) {
      const left = Number(el.dataset.expires) - now;
      el.textContent = countdownText(Number(el.dataset.expires), now);
      el.classList.toggle('is-urgent', left < 30_000);
    }
  }
}

function countdownText(expiresAt, now = Date.now()) {
  const left = expiresAt - now;
  return left > 0 ? `expires in ${formatCountdown(left)}` : 'expired';
}
