// Small DOM and formatting helpers. Every value from the service reaches the
// page as text (textContent, attributes), never as HTML.

/**
 * Creates an element: h('button', {class: 'btn', type: 'button', onclick: fn}, 'Allow').
 * `on*` properties become event listeners; `text` sets textContent; false,
 * null and undefined attributes are left out.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export const $ = (id) => document.getElementById(id);

export function show(el, visible) {
  el.hidden = !visible;
}

export function setError(el, message) {
  el.textContent = message ?? '';
  el.hidden = !message;
}

const pad = (n) => String(n).padStart(2, '0');

/** "14:03:07" today, "2025-03-01 14:03:07" on another day. */
export function formatTime(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '—';
  const d = new Date(ms);
  const now = new Date();
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  if (d.toDateString() === now.toDateString()) return time;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

/** ISO timestamp for a <time datetime>. */
export function isoTime(ms) {
  return typeof ms === 'number' && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return formatCountdown(ms);
}

/** "4:59", "1:02:03". */
export function formatCountdown(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = total % 60;
  return hours > 0 ? `${hours}:${pad(minutes)}:${pad(seconds)}` : `${minutes}:${pad(seconds)}`;
}

export function formatNumber(n) {
  if (typeof n !== 'number' || !Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  return n.toLocaleString('en-US', { maximumFractionDigits: 3 });
}

export function prettyJson(value) {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A status or decision as a coloured label; the class names the value. */
export function badge(value, kind = 'status') {
  const v = String(value ?? 'unknown');
  return h('span', { class: `badge-${kind} is-${v.replace(/[^a-z_]/gi, '')}`, text: v.replace(/_/g, ' ') });
}

/** Turns a form into a query object, leaving empty fields out. */
export function formQuery(form) {
  const q = {};
  for (const [k, v] of new FormData(form)) {
    const s = String(v).trim();
    if (s) q[k] = s;
  }
  return q;
}

let announcer;
/** Says something to screen readers once. */
export function announce(text) {
  announcer ??= $('announcer');
  if (!announcer) return;
  announcer.textContent = '';
  // A fresh text node is read even when the text repeats.
  requestAnimationFrame(() => {
    announcer.textContent = text;
  });
}
