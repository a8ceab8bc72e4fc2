// The console's entry point: sign-in (or none, when the service has no
// tokens), the section tabs, the websocket, and the wiring of the panels.
import { api, auth, Live, whenUnauthorized } from './api.js';
import { AuditPanel } from './audit.js';
import { $, setError, show } from './dom.js';
import { ExecutionsPanel } from './executions.js';
import { RequestsPanel } from './requests.js';
import { StatusPanel } from './status.js';

const VIEWS = ['requests', 'executions', 'audit', 'status'];
/** Wide screens show the requests beside the other sections (console.css uses the same width). */
const wide = matchMedia('(min-width: 1000px)');
const TITLE = document.title;
const CONNECTION_TEXT = { live: 'Live', connecting: 'Connecting…', offline: 'Offline' };

const live = new Live();
let view = 'requests';
let panels = null;

function effectiveView() {
  return wide.matches && view === 'requests' ? 'executions' : view;
}

const signedIn = () => !$('app').hidden;

function isVisible(name) {
  return signedIn() && (effectiveView() === name || (name === 'requests' && wide.matches));
}

function select(name) {
  if (!VIEWS.includes(name)) return;
  view = name;
  const shown = effectiveView();
  $('app').dataset.view = shown;
  for (const tab of document.querySelectorAll('.tab')) tab.setAttribute('aria-pressed', String(tab.dataset.view === shown));
  if (!panels) return;
  if (shown === 'audit' && !panels.audit.loaded) panels.audit.load().catch(() => {});
  if (shown === 'status') panels.status.load();
}

function banner(message) {
  setError($('banner'), message);
}

function setCount(n) {
  for (const b of [$('pending-count'), $('requests-count')]) {
    b.textContent = String(n);
    show(b, n > 0);
    b.setAttribute('aria-label', `${n} waiting`);
  }
  document.title = n > 0 ? `(${n}) ${TITLE}` : TITLE;
}

function showLogin(message) {
  show($('app'), false);
  show($('login'), true);
  show($('connection'), false);
  show($('sign-out'), false);
  show($('who'), false);
  setError($('login-error'), message);
  $('token').focus();
}

function startConsole() {
  show($('login'), false);
  show($('app'), true);
  show($('connection'), true);
  show($('sign-out'), Boolean(auth.token));
  if (!panels) {
    panels = {
      requests: new RequestsPanel({ onCountChange: setCount }),
      executions: new ExecutionsPanel({ isActive: signedIn }),
      audit: new AuditPanel(),
      status: new StatusPanel({ isVisible: () => isVisible('status') }),
    };
    wireLive(panels);
  }
  select(view);
  panels.requests.load().catch((e) => banner(`Could not load permission requests: ${e.message}`));
  panels.executions.load().catch(() => {});
  live.start();
}

function wireLive(p) {
  const on = (type, fn) => live.addEventListener(type, (e) => fn(e.detail));
  on('state', (state) => {
    const el = $('connection');
    el.dataset.state = state;
    el.textContent = CONNECTION_TEXT[state] ?? state;
  });
  on('ready', (principal) => {
    banner('');
    const who = $('who');
    who.textContent = principal.name === 'anonymous' ? 'Open access' : principal.name;
    who.title = `Scopes: ${principal.scopes.join(', ')}`;
    show(who, true);
    // What this token may do decides which controls are offered (the service checks again).
    const can = (scope) => principal.scopes.includes(scope) || principal.scopes.includes('admin');
    document.body.dataset.canApprove = String(can('approve'));
    document.body.dataset.canExecute = String(can('execute'));
    // What happened while the connection was down.
    p.requests.load().catch(() => {});
    p.executions.load().catch(() => {});
  });
  on('permission.request', (f) => {
    p.requests.add(f.request, true);
    p.executions.onPermission(f.request);
  });
  on('permission.resolved', (f) => {
    p.requests.resolved(f.request);
    p.executions.onPermission(f.request);
  });
  on('execution.started', (f) => p.executions.onStarted(f));
  on('execution.progress', (f) => p.executions.onProgress(f));
  on('execution.finished', (f) => p.executions.onFinished(f));
  on('error', (f) => {
    if (f.request_id) return; // answered over HTTP; the card shows its own errors
    banner(`The live connection reported: ${f.message}`);
  });
}

/** Whether the service lets this token (or no token) read; decides between the login form and the console. */
async function probe() {
  try {
    await api('/permissions/requests', { quiet401: true });
    return { ok: true };
  } catch (e) {
    return { ok: false, error: e };
  }
}

async function boot() {
  const saved = auth.token;
  const r = await probe();
  if (r.ok) return startConsole();
  const e = r.error;
  if (e.status === 401) {
    if (saved) auth.clear();
    return showLogin(saved ? 'The saved token was refused. Sign in again.' : null);
  }
  if (e.status === 403 && saved) {
    auth.clear();
    return showLogin(e.message);
  }
  banner(`${e.message}. Retrying…`);
  setTimeout(boot, 3000);
}

$('login-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  const token = $('token').value.trim();
  if (!token) return setError($('login-error'), 'Enter a token.');
  const button = e.submitter ?? e.target.querySelector('button[type=submit]');
  button.disabled = true;
  auth.set(token);
  const r = await probe();
  button.disabled = false;
  if (r.ok) {
    $('token').value = '';
    setError($('login-error'), '');
    return startConsole();
  }
  auth.clear();
  const err = r.error;
  setError(
    $('login-error'),
    err.status === 401 ? 'This token is not valid.' : err.status === 403 ? `This token cannot be used here: ${err.message}` : err.message,
  );
});

$('sign-out').addEventListener('click', () => {
  auth.clear();
  live.stop();
  // A fresh page drops every piece of state the last token could see.
  location.reload();
});

whenUnauthorized(() => {
  live.stop();
  auth.clear();
  showLogin('The service refused the token. Sign in again.');
});

for (const tab of document.querySelectorAll('.tab')) tab.addEventListener('click', () => select(tab.dataset.view));
wide.addEventListener('change', () => select(view));

boot();
