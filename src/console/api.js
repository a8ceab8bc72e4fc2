// The console's two channels to the service: JSON over HTTP with the bearer
// token, and the websocket (/ws?token=…) for live events. The token is kept in
// sessionStorage: it lives as long as the tab and is never written to a cookie.

const TOKEN_KEY = 'toolexec.console.token';

export const auth = {
  get token() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) ?? '';
    } catch {
      return '';
    }
  },
  set(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
  },
  clear() {
    sessionStorage.removeItem(TOKEN_KEY);
  },
};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Listeners told when the service refuses the token (401): the console signs out. */
const onUnauthorized = new Set();
export function whenUnauthorized(fn) {
  onUnauthorized.add(fn);
}

/**
 * Calls the API. `query` values that are empty are left out; `body` is sent
 * as JSON. Resolves with the parsed body; rejects with an ApiError carrying
 * the service's error code (or NETWORK when it cannot be reached).
 */
export async function api(path, { method = 'GET', query, body, quiet401 = false } = {}) {
  const headers = { accept: 'application/json' };
  const token = auth.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let url = path;
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The service cannot be reached');
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = new ApiError(res.status, data?.error?.code ?? `HTTP_${res.status}`, data?.error?.message ?? `${res.status} ${res.statusText}`);
    if (res.status === 401 && !quiet401) for (const fn of onUnauthorized) fn(err);
    throw err;
  }
  return data;
}

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10_000;

/**
 * The websocket, subscribed to every session. Reconnects with a growing
 * delay; each time it is subscribed again it dispatches `ready`, so that the
 * panels reload what they may have missed. Server frames are dispatched as
 * events named by their type (`permission.request`, `execution.finished`…).
 * `state` events carry 'connecting' | 'live' | 'offline'.
 */
export class Live extends EventTarget {
  constructor() {
    super();
    this.socket = null;
    this.state = 'offline';
    this.stopped = true;
    this.retryMs = RETRY_MIN_MS;
    this.timer = null;
    this.principal = null;
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.socket?.close(1000, 'signed out');
    this.socket = null;
    this.setState('offline');
  }

  setState(state) {
    if (state === this.state) return;
    this.state = state;
    this.dispatchEvent(new CustomEvent('state', { detail: state }));
  }

  connect() {
    if (this.stopped) return;
    this.setState('connecting');
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const token = auth.token;
    const url = `${scheme}//${location.host}/ws${token ? `?token=${encodeURIComponent(token)}` : ''}`;
    let socket;
    try {
      socket = new WebSocket(url);
    } catch {
      this.retry();
      return;
    }
    this.socket = socket;
    socket.addEventListener('message', (e) => this.onMessage(e));
    socket.addEventListener('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.setState('offline');
      this.retry();
    });
  }

  retry() {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
  }

  onMessage(e) {
    let frame;
    try {
      frame = JSON.parse(e.data);
    } catch {
      return;
    }
    if (!frame || typeof frame.type !== 'string') return;
    if (frame.type === 'hello') {
      this.principal = { name: frame.principal, scopes: frame.scopes ?? [] };
      this.send({ type: 'subscribe', session_id: '*' });
    } else if (frame.type === 'ack' && frame.ref === 'subscribe') {
      this.retryMs = RETRY_MIN_MS;
      this.setState('live');
      this.dispatchEvent(new CustomEvent('ready', { detail: this.principal }));
    }
    this.dispatchEvent(new CustomEvent(frame.type, { detail: frame }));
  }

  send(frame) {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(frame));
  }
}
