/**
 * `toolexec audit`: the permission decisions of a running service (GET
 * /audit), filtered, oldest first; `--follow` keeps printing new ones.
 *
 * Following polls GET /audit rather than subscribing over /ws: a websocket
 * subscriber holding the approve scope counts as an approver present for the
 * sessions it watches, which turns a headless `ask` (denied at once) into a
 * wait for an answer. A passive tail must not change decisions.
 */
import { REMOTE_HELP, REMOTE_OPTIONS, choice, flag, intOption, parse, str } from './args.js';
import { ServiceError, request, requireTarget, type ServiceTarget } from './client.js';
import { usageError, warn, type CliIO, type CommandResult } from './io.js';
import { REASON_TYPES } from '../permissions/types.js';
import { cursorPosition } from '../http/cursor.js';
import type { auditEntry } from '../http/routes/audit.js';

export const AUDIT_HELP = `usage: toolexec audit [options]

Prints a running service's permission decisions, oldest first: time,
decision, reason, tool, session, tool_use id, and who decided.

  --session ID             only this session's decisions
  --tool NAME              only this tool's
  --behavior B             allow, deny or ask
  --reason R               rule, mode, hook, classifier, user, timeout, headless,
                           safety, working_dir, tool or cancelled
  --since TIME             from TIME: ISO 8601, epoch milliseconds, or an age
                           such as 30s, 15m, 2h, 7d
  --until TIME             up to TIME (same forms)
  --limit N                the last N decisions (default 50; with --follow, 10)
  -f, --follow             keep printing new decisions as they are made (Ctrl-C stops)
  --interval MS            how often --follow asks (default 1000)
  --json                   one JSON object per line, as GET /audit returns entries
${REMOTE_HELP}
`;

const OPTIONS = {
  ...REMOTE_OPTIONS,
  session: { type: 'string' },
  tool: { type: 'string' },
  behavior: { type: 'string' },
  reason: { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
  limit: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  interval: { type: 'string' },
  json: { type: 'boolean' },
} as const;

const BEHAVIORS = ['allow', 'deny', 'ask'] as const;
const REASONS = REASON_TYPES;
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** One page of the audit log is a quick query: longer means the request was lost (and is asked again). */
const pageTimeout = (intervalMs: number): number => Math.max(5000, intervalMs * 5);
/** The service's largest page. */
const MAX_PAGE = 1000;

/** An entry as GET /audit sends it. */
export type AuditEntry = ReturnType<typeof auditEntry>;

interface AuditPage {
  entries: AuditEntry[];
  next_cursor: string | null;
}

/** An absolute time for the service: epoch ms and ISO dates pass through, ages become epoch ms. */
export function parseWhen(option: string, text: string, now = Date.now()): string {
  const age = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(text.trim());
  if (age) return String(Math.round(now - Number(age[1]) * UNITS[age[2]!]!));
  if (/^\d{1,16}$/.test(text) || !Number.isNaN(Date.parse(text))) return text;
  throw usageError('audit', `--${option}: expected an ISO 8601 date, epoch milliseconds, or an age like 15m, got "${text}"`);
}

export function formatEntry(e: AuditEntry): string {
  const reason = e.reason.detail ? `${e.reason.type}: ${e.reason.detail}` : e.reason.type;
  const parts = [new Date(e.ts).toISOString(), e.behavior.padEnd(5), e.tool, `(${reason})`, `session=${e.session_id}`, `tool_use=${e.tool_use_id}`];
  if (e.actor) parts.push(`by=${e.actor}`);
  return parts.join('  ');
}

const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });

/** The id a cursor of GET /audit continues below (Infinity for one this version cannot read: paging goes on). */
function cursorBelow(cursor: string): number {
  return cursorPosition(cursor, 'audit') ?? Number.POSITIVE_INFINITY;
}

/** Newest first, paging by cursor, until `count` entries or `stopAtId` (exclusive) is reached. */
async function fetchNewest(
  target: ServiceTarget,
  timeoutMs: number,
  filters: Record<string, string | undefined>,
  count: number,
  stopAtId: number,
  signal: AbortSignal | undefined,
): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let cursor: string | undefined;
  while (out.length < count) {
    const limit = String(Math.min(MAX_PAGE, count - out.length));
    const { body } = await request<AuditPage>(target, '/audit', { query: { ...filters, limit, cursor }, signal, timeoutMs });
    for (const e of body.entries) {
      if (e.id <= stopAtId) return out;
      out.push(e);
    }
    // A page may hold fewer entries than asked, even none (the service looks at a bounded window of
    // rows per page for filters no index serves): go on while there is a cursor, down to stopAtId.
    if (!body.next_cursor) break;
    if (cursorBelow(body.next_cursor) <= stopAtId + 1) break;
    cursor = body.next_cursor;
  }
  return out;
}

export async function auditCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, help } = parse('audit', args, OPTIONS, 0);
  if (help) {
    io.stdout.write(AUDIT_HELP);
    return 0;
  }
  const follow = flag(values, 'follow');
  const behavior = str(values, 'behavior') === undefined ? undefined : choice('audit', values, 'behavior', BEHAVIORS, 'allow');
  const reason = str(values, 'reason') === undefined ? undefined : choice('audit', values, 'reason', REASONS, 'rule');
  const since = str(values, 'since');
  const until = str(values, 'until');
  const filters = {
    session_id: str(values, 'session'),
    tool: str(values, 'tool'),
    behavior,
    reason,
    since: since === undefined ? undefined : parseWhen('since', since),
    until: until === undefined ? undefined : parseWhen('until', until),
  };
  const limit = intOption('audit', values, 'limit', follow ? 10 : 50, follow ? 0 : 1);
  const interval = intOption('audit', values, 'interval', 1000, 50, 3_600_000);
  const json = flag(values, 'json');
  const target = requireTarget('audit', values, io);
  const print = (entries: AuditEntry[]): void => {
    for (const e of entries) io.stdout.write(`${json ? JSON.stringify(e) : formatEntry(e)}\n`);
  };

  // The newest id of the whole log, read before the filtered page: anything
  // newer than both is new, whatever the filters.
  const newestId = async (): Promise<number> => {
    const { body } = await request<AuditPage>(target, '/audit', { query: { limit: '1' }, signal: io.signal, timeoutMs: pageTimeout(interval) });
    return body.entries[0]?.id ?? 0;
  };
  const filtered = Object.values(filters).some((v) => v !== undefined);
  let lastId = 0;
  if (follow) lastId = await newestId();
  const first = limit > 0 ? await fetchNewest(target, pageTimeout(interval), filters, limit, 0, io.signal) : [];
  print(first.reverse());
  if (!follow) return 0;
  lastId = Math.max(lastId, ...first.map((e) => e.id));

  let lost = false;
  while (!io.signal?.aborted) {
    await sleep(interval, io.signal);
    if (io.signal?.aborted) break;
    try {
      // With a filter, the newest id of the whole log first: the fetch below looks at every row up to it,
      // matching or not, and the next poll need not look at them again (a page filtered on a column no
      // index serves looks at a bounded window of rows: a tail whose filter matched nothing for a while
      // walked every row since its last match, window by window, on every poll).
      const top = filtered ? await newestId() : 0;
      const fresh = await fetchNewest(target, pageTimeout(interval), filters, Number.MAX_SAFE_INTEGER, lastId, io.signal);
      if (lost) {
        warn(io, `the service at ${target.url.origin} answers again`);
        lost = false;
      }
      if (fresh.length > 0) {
        print(fresh.reverse());
        lastId = fresh[fresh.length - 1]!.id;
      }
      lastId = Math.max(lastId, top);
    } catch (e) {
      if (io.signal?.aborted) break;
      if (!(e instanceof ServiceError) || !e.transient) throw e;
      // A restart of the service should not end a tail: say so once and keep asking.
      if (!lost) warn(io, `${e.message}; still trying every ${interval} ms`);
      lost = true;
    }
  }
  return 0;
}
