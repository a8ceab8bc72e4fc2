/**
 * `toolexec approve`: the permission prompts of a running service from a
 * terminal. Without an id it lists the requests waiting for a person (GET
 * /permissions/requests); with one it answers it (POST
 * /permissions/requests/:id): allow, or deny with --deny. The console and
 * the websocket do the same; this is for an operator on a shell (over SSH, in
 * a pod) with the approve scope.
 */
import { REMOTE_HELP, REMOTE_OPTIONS, flag, parse, str } from './args.js';
import { request, requireTarget } from './client.js';
import { usageError, type CliIO, type CommandResult } from './io.js';
import type { PermissionRequestView } from '../permissions/approval-broker.js';

export const APPROVE_HELP = `usage: toolexec approve [options] [REQUEST_ID]

Without REQUEST_ID, lists the permission requests waiting for a person: id,
the call, its session, why it asks, and when it expires. With one, answers
it: allow, or deny with --deny. A call waits for a person while someone is
subscribed to its session (websocket, console) or, with nobody subscribed,
under permissions.headless: "wait"; otherwise it is denied at once.

  toolexec approve --url http://127.0.0.1:8787
  toolexec approve --url http://127.0.0.1:8787 preq_0oM1Vtz9rAJQ31Mw
  toolexec approve --url http://127.0.0.1:8787 --deny --message "not on main" preq_0oM1Vtz9rAJQ31Mw

  --deny                   deny instead of allow
  --message TEXT           why (with --deny, the model reads it)
  --remember SCOPE         session or always: keep the answer as a rule (the request's
                           suggested rule) for the session, or for every session
  --session ID             list only this session's requests
  --json                   print the service's answer as JSON
${REMOTE_HELP}
`;

const OPTIONS = {
  ...REMOTE_OPTIONS,
  deny: { type: 'boolean' },
  message: { type: 'string' },
  remember: { type: 'string' },
  session: { type: 'string' },
  json: { type: 'boolean' },
} as const;

function expiresIn(at: number | null, now: number): string {
  if (at === null) return 'no expiry';
  const s = Math.max(0, Math.round((at - now) / 1000));
  return s >= 120 ? `expires in ${Math.round(s / 60)} min` : `expires in ${s} s`;
}

export async function approveCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, positionals, help } = parse('approve', args, OPTIONS, 1);
  if (help) {
    io.stdout.write(APPROVE_HELP);
    return 0;
  }
  const remember = str(values, 'remember');
  if (remember !== undefined && remember !== 'session' && remember !== 'always') {
    throw usageError('approve', `--remember: expected session or always, got "${remember}"`);
  }
  const [id] = positionals;
  const target = requireTarget('approve', values, io);
  if (id === undefined) {
    if (flag(values, 'deny') || str(values, 'message') !== undefined || remember !== undefined) {
      throw usageError('approve', 'name the request to answer (its id, from "toolexec approve" without one)');
    }
    const { body } = await request<{ requests: PermissionRequestView[] }>(target, '/permissions/requests', { signal: io.signal });
    const session = str(values, 'session');
    const pending = body.requests.filter((r) => r.status === 'pending' && (session === undefined || r.session_id === session));
    if (flag(values, 'json')) {
      io.stdout.write(`${JSON.stringify({ requests: pending }, null, 2)}\n`);
      return 0;
    }
    if (pending.length === 0) {
      io.stderr.write('toolexec: no permission request is waiting\n');
      return 0;
    }
    const now = Date.now();
    for (const r of pending) {
      const why = r.reason ? ` (${r.reason.type}${r.reason.detail ? `: ${r.reason.detail}` : ''})` : '';
      io.stdout.write(`${r.id}  ${r.summary}  session=${r.session_id}${why}  ${expiresIn(r.expires_at, now)}\n`);
    }
    return 0;
  }
  if (str(values, 'session') !== undefined) throw usageError('approve', '--session filters the list; a request is named by its id alone');
  const decision = flag(values, 'deny') ? 'deny' : 'allow';
  const message = str(values, 'message');
  const { body } = await request<{ request: PermissionRequestView }>(target, `/permissions/requests/${encodeURIComponent(id)}`, {
    method: 'POST',
    body: { decision, ...(message !== undefined ? { message } : {}), ...(remember !== undefined ? { remember } : {}) },
    signal: io.signal,
  });
  if (flag(values, 'json')) io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else io.stdout.write(`${body.request.id}: ${body.request.summary} ${body.request.status}${remember ? ` (remembered for ${remember === 'always' ? 'every session' : 'the session'})` : ''}\n`);
  return 0;
}
