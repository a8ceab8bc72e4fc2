/**
 * The user layer: an `ask` becomes a permission request, stored in SQLite,
 * bound to the execution and the digest of its exact input, answered once
 * (over the websocket or POST /permissions/requests/:id), and expiring after
 * `permissions.askTimeoutMs` (denied, audited as `timeout`). With no approver
 * subscribed to the session, `permissions.headless` decides: `deny` at once
 * (audited as `headless`) or `wait` for one until the timeout.
 */
import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ToolexecError } from '../errors.js';
import { maskValue } from '../observability/logging.js';
import { formatIssues } from '../pipeline/input-errors.js';
import type { Db } from '../storage/db.js';
import type { AnyTool, ToolInput } from '../tool/types.js';
import type { Workspace } from '../workspace.js';
import type { ApprovalOutcome, ApprovalRequest, Approvals } from './approvals.js';
import { compileBashRule } from '../bash/rule-match.js';
import { compilePathRule, escapeGlob } from './path-rules.js';
import { escapeRuleContent, parseRule } from './rule-parser.js';
import type { RuleStore } from './rule-store.js';
import type { Behavior } from './types.js';

export type RequestStatus = 'pending' | 'allowed' | 'denied' | 'expired' | 'cancelled' | 'headless';

export interface PermissionRequestView {
  id: string;
  session_id: string;
  execution_id: string;
  tool_use_id: string;
  tool: string;
  input: unknown;
  input_digest: string;
  summary: string;
  reason: { type: string; detail: string };
  message: string | null;
  suggested_rule: string;
  status: RequestStatus;
  created_at: number;
  expires_at: number;
  resolved_at: number | null;
  resolved_by: string | null;
  answer_message: string | null;
  remember: string | null;
}

export const PermissionAnswer = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  message: z.string().max(10_000).optional(),
  remember: z.enum(['session', 'always']).optional(),
  /** The rule to remember; defaults to the request's suggested rule. */
  rule: z.string().min(1).max(10_000).optional(),
  updated_input: z.record(z.string(), z.unknown()).optional(),
});
export type PermissionAnswer = z.infer<typeof PermissionAnswer>;

export type BrokerEvent =
  | { type: 'permission.request'; request: PermissionRequestView }
  | { type: 'permission.resolved'; request: PermissionRequestView };

interface Pending {
  /** Its place among the pending requests (they are kept in this order): the listing's cursor. */
  seq: number;
  view: PermissionRequestView;
  finish: (outcome: ApprovalOutcome, status: RequestStatus, actor: string | null, answer?: PermissionAnswer) => void;
  /** Why an approver's updated_input is not a valid input of the tool, or undefined when it is. */
  invalidInput: (input: Record<string, unknown>) => string | undefined;
  /** The rule that covers exactly this input of the request's tool (suggestRule). */
  suggest: (input: Record<string, unknown>) => string;
}

interface Row {
  id: string;
  session_id: string;
  execution_id: string;
  tool_use_id: string;
  tool: string;
  input: string;
  input_digest: string;
  summary: string;
  suggested_rule: string;
  reason_type: string;
  reason_detail: string | null;
  message: string | null;
  status: RequestStatus;
  created_at: number;
  expires_at: number;
  resolved_at: number | null;
  resolved_by: string | null;
  answer_message: string | null;
  remember: string | null;
}

/**
 * A rule that would cover this call next time: exact command, exact path, host, or the tool. Empty when no
 * rule covers exactly this command or path (the approver may still name one to remember, in `rule`).
 */
export function suggestRule(tool: AnyTool, input: ToolInput, workspace: Workspace, cwd: string): string {
  if (tool.name === 'Bash' && typeof input.command === 'string') return exactBashRule(input.command);
  if (tool.name === 'WebFetch' && typeof input.url === 'string') {
    try {
      return `WebFetch(domain:${new URL(input.url).hostname.toLowerCase()})`;
    } catch {
      return 'WebFetch';
    }
  }
  let p: string | undefined;
  try {
    p = tool.getPath(input);
  } catch {
    p = undefined;
  }
  if (p !== undefined && !p.startsWith('result://')) {
    const kind = tool.name === 'Read' || tool.name === 'Glob' || tool.name === 'Grep' ? 'Read' : 'Edit';
    // Where the call really leads (the path allow rules are matched on, filesystem.ts), not its spelling:
    // `link/a.txt` through a symlinked directory was remembered as written, and matched later only through
    // the rule's prefix resolved when it was compiled, which gives up on an escaped character (`link/@x`,
    // `link/a (1).txt` never matched) and follows the link as it is then (swapped since, to another file).
    return exactPathRule(kind, workspace.canonical(p, cwd));
  }
  return tool.name;
}

/**
 * A Read or Edit rule for one path (`//abs` anchors at the file system root). Rule contents are globs
 * (path-rules.ts), so what they give a meaning to is escaped: a remembered `src/[id].ts` matched `src/i.ts`
 * and not itself, and `notes*.md` every notes file. Empty if the rule would not match the path itself.
 */
function exactPathRule(kind: 'Read' | 'Edit', abs: string): string {
  const rule = `${kind}(/${escapeRuleContent(escapeGlob(abs))})`;
  const parsed = parseRule(rule);
  if ('error' in parsed || parsed.content === undefined) return '';
  const matches = compilePathRule(parsed.content, { root: '/', cwd: '/', home: '/', caseInsensitive: false }, true);
  return matches(abs) ? rule : '';
}

/**
 * A Bash rule for exactly this command. An unescaped `*` in a rule is a wildcard and a trailing `:*` makes
 * a prefix rule, so `rm -f *.log` remembered as written allowed `rm -f notes.txt x.log`, and `rm -f
 * cache:*` every `rm -f cache …`; each `*` is escaped, and each backslash (a rule's `\\` is one), so that
 * `rm -f \*.tmp` is named too. Empty if the rule would not match the command itself.
 */
function exactBashRule(command: string): string {
  const content = command.replace(/[\\*]/g, '\\$&');
  const compiled = compileBashRule(content, 'allow');
  if (compiled.kind !== 'exact' || !compiled.test(command.trim())) return '';
  return `Bash(${escapeRuleContent(content)})`;
}

function idOf(): string {
  return `preq_${randomBytes(12).toString('base64url')}`;
}

export interface BrokerOptions {
  headless: 'deny' | 'wait';
  askTimeoutMs: number;
  workspace: Workspace;
  log: Logger;
  /** Session id of the request → its current working directory (for path suggestions). */
  cwdOf: (sessionId: string) => string;
  /**
   * Masks the service's secrets (pipeline/mask.ts) in what a request shows and
   * stores: its input, summary, reason and message. The call runs its input as sent.
   */
  mask?: ((text: string) => string) | undefined;
}

const SHUTTING_DOWN = 'the service is shutting down';

/** How many resolved requests GET /permissions/requests shows besides the pending ones. */
export const RECENT_REQUESTS = 50;

export class ApprovalBroker implements Approvals {
  private readonly pending = new Map<string, Pending>();
  /** Pending request ids per session, oldest first: a subscriber's backlog without a walk over every pending request. */
  private readonly pendingBySession = new Map<string, Set<string>>();
  private readonly listeners = new Set<(e: BrokerEvent) => void>();
  private hasApprover: (sessionId: string) => boolean = () => false;
  private nextSeq = 1;
  /** Set by cancelAll (shutdown): later requests are denied at once, never left on a timer. */
  private closed = false;
  private readonly insert: Statement;
  private readonly update: Statement;
  private readonly byId: Statement<[string]>;
  private readonly recent: Statement<[number]>;

  constructor(
    db: Db,
    private readonly rules: RuleStore,
    private readonly opts: BrokerOptions,
  ) {
    this.insert = db.prepare(
      `INSERT INTO permission_requests (id, session_id, execution_id, tool_use_id, tool, input, input_digest, summary, suggested_rule, reason_type, reason_detail, message, status, created_at, expires_at, resolved_at, resolved_by)
       VALUES (@id, @session_id, @execution_id, @tool_use_id, @tool, @input, @input_digest, @summary, @suggested_rule, @reason_type, @reason_detail, @message, @status, @created_at, @expires_at, @resolved_at, @resolved_by)`,
    );
    this.update = db.prepare(
      `UPDATE permission_requests SET status = @status, resolved_at = @resolved_at, resolved_by = @resolved_by, answer_message = @answer_message, remember = @remember WHERE id = @id`,
    );
    this.byId = db.prepare('SELECT * FROM permission_requests WHERE id = ?');
    this.recent = db.prepare(`SELECT * FROM permission_requests WHERE status != 'pending' ORDER BY created_at DESC LIMIT ?`);
    // Requests a previous process left open can never be answered: their calls were cancelled.
    db.prepare(`UPDATE permission_requests SET status = 'expired', resolved_at = ? WHERE status = 'pending'`).run(Date.now());
  }

  /** Tells the broker whether an approver is listening for a session (the websocket hub). */
  setPresence(fn: (sessionId: string) => boolean): void {
    this.hasApprover = fn;
  }

  on(listener: (e: BrokerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: BrokerEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (err) {
        this.opts.log.warn({ err }, 'permission event listener failed');
      }
    }
  }

  request(req: ApprovalRequest): Promise<ApprovalOutcome> {
    if (this.closed) return Promise.resolve({ behavior: 'deny', reason: 'user', message: SHUTTING_DOWN });
    const now = Date.now();
    const present = this.hasApprover(req.sessionId);
    const headless = !present && this.opts.headless === 'deny';
    const mask = this.opts.mask ?? ((text: string) => text);
    const suggested = suggestRule(req.tool, req.input, this.opts.workspace, this.opts.cwdOf(req.sessionId));
    const view: PermissionRequestView = {
      id: idOf(),
      session_id: req.sessionId,
      execution_id: req.executionId,
      tool_use_id: req.toolUseId,
      tool: req.tool.name,
      input: maskValue(req.input, mask),
      input_digest: req.inputDigest,
      summary: mask(req.summary),
      reason: maskValue(req.decision.reason, mask),
      message: req.decision.message === undefined ? null : mask(req.decision.message),
      // A rule naming a secret is suggested to nobody (remembered, it would be listed and stored): none, as
      // for a call no rule names exactly; the approver may still name one.
      suggested_rule: mask(suggested) === suggested ? suggested : '',
      status: headless ? 'headless' : 'pending',
      created_at: now,
      expires_at: now + this.opts.askTimeoutMs,
      resolved_at: headless ? now : null,
      resolved_by: null,
      answer_message: null,
      remember: null,
    };
    const { answer_message: _a, remember: _r, reason: _reason, ...columns } = view;
    this.insert.run({
      ...columns,
      input: JSON.stringify(view.input) ?? 'null',
      reason_type: view.reason.type,
      reason_detail: view.reason.detail,
    });
    if (headless) return Promise.resolve({ behavior: 'deny', reason: 'headless', requestId: view.id });

    return new Promise<ApprovalOutcome>((resolve) => {
      let done = false;
      const timer = setTimeout(() => {
        finish({ behavior: 'deny', reason: 'timeout', requestId: view.id }, 'expired', null);
      }, this.opts.askTimeoutMs);
      timer.unref();
      const onAbort = (): void => {
        finish({ behavior: 'deny', reason: 'user', message: 'cancelled', requestId: view.id }, 'cancelled', null);
      };
      const finish = (outcome: ApprovalOutcome, status: RequestStatus, actor: string | null, answer?: PermissionAnswer): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        req.signal.removeEventListener('abort', onAbort);
        this.pending.delete(view.id);
        const ids = this.pendingBySession.get(view.session_id);
        ids?.delete(view.id);
        if (ids?.size === 0) this.pendingBySession.delete(view.session_id);
        view.status = status;
        view.resolved_at = Date.now();
        view.resolved_by = actor;
        view.answer_message = answer?.message ?? null;
        view.remember = answer?.remember ?? null;
        // The call learns its answer first: a database that does not take the
        // update (full, read-only) must neither leave it waiting nor throw from
        // a timer. The request's row then keeps its pending status; the
        // decision itself is audited by the call.
        resolve(outcome);
        this.emit({ type: 'permission.resolved', request: view });
        try {
          this.update.run({
            id: view.id,
            status,
            resolved_at: view.resolved_at,
            resolved_by: actor,
            answer_message: view.answer_message,
            remember: view.remember,
          });
        } catch (e) {
          this.opts.log.error({ err: e, request_id: view.id }, 'could not record the answer of a permission request');
        }
      };
      const invalidInput = (input: Record<string, unknown>): string | undefined => {
        const r = req.tool.inputSchema.safeParse(input);
        return r.success ? undefined : formatIssues(req.tool.name, r.error.issues, input);
      };
      const suggest = (input: Record<string, unknown>): string => {
        const r = req.tool.inputSchema.safeParse(input);
        return r.success ? suggestRule(req.tool, r.data as ToolInput, this.opts.workspace, this.opts.cwdOf(req.sessionId)) : '';
      };
      this.pending.set(view.id, { seq: this.nextSeq++, view, finish, invalidInput, suggest });
      let ids = this.pendingBySession.get(view.session_id);
      if (ids === undefined) {
        ids = new Set();
        this.pendingBySession.set(view.session_id, ids);
      }
      ids.add(view.id);
      if (req.signal.aborted) {
        onAbort();
        return;
      }
      req.signal.addEventListener('abort', onAbort, { once: true });
      this.emit({ type: 'permission.request', request: view });
    });
  }

  /** Answers a pending request once; later answers get TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED. */
  respond(id: string, raw: unknown, actor: string): PermissionRequestView {
    const parsed = PermissionAnswer.safeParse(raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', i ? `${i.path.join('.') || 'answer'}: ${i.message}` : 'invalid answer');
    }
    const answer = parsed.data;
    const p = this.pending.get(id);
    if (!p) {
      const row = this.byId.get(id) as Row | undefined;
      if (!row) throw new ToolexecError('TOOLEXEC_ERR_PERMISSION_REQUEST_NOT_FOUND', `No permission request ${id}`);
      throw new ToolexecError('TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED', `Permission request ${id} is already ${row.status}`, { status: row.status });
    }
    // An edited input the tool cannot take is the approver's mistake, not the model's: it is refused
    // here, the request stays pending for a corrected answer, and the model never reads issues about
    // parameters it did not send.
    if (answer.decision === 'allow' && answer.updated_input !== undefined) {
      const why = p.invalidInput(answer.updated_input);
      if (why !== undefined) {
        throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', `updated_input: not a valid input of ${p.view.tool} (the request is still pending): ${why}`);
      }
    }
    if (answer.remember) {
      // The rule covers the call that runs: with an edited input, that one, not the model's. From the
      // model's input, an approver who cut `rm -rf build dist` to `rm -rf build` and said remember
      // allowed `rm -rf build dist` from then on. A denial covers the call the model asked for.
      const edited = answer.decision === 'allow' && answer.updated_input !== undefined;
      const suggested = edited ? p.suggest(answer.updated_input!) : p.view.suggested_rule;
      // No rule names exactly this call: nothing broader is remembered in its place.
      if (answer.rule === undefined && suggested === '') {
        throw new ToolexecError(
          'TOOLEXEC_ERR_REQUEST_INVALID',
          `remember: no rule covers exactly this ${p.view.tool} call (the request is still pending); answer without remember, or name the rule to remember in rule`,
        );
      }
      const behavior: Behavior = answer.decision;
      this.rules.remember({
        behavior,
        rule: answer.rule ?? suggested,
        scope: answer.remember,
        sessionId: p.view.session_id,
        createdBy: actor,
      });
    }
    const view = p.view;
    if (answer.decision === 'allow') {
      p.finish({ behavior: 'allow', reason: 'user', actor, updatedInput: answer.updated_input, message: answer.message, requestId: id }, 'allowed', actor, answer);
    } else {
      p.finish({ behavior: 'deny', reason: 'user', actor, message: answer.message, requestId: id }, 'denied', actor, answer);
    }
    return view;
  }

  get(id: string): PermissionRequestView | undefined {
    const p = this.pending.get(id);
    if (p) return p.view;
    const row = this.byId.get(id) as Row | undefined;
    return row ? rowToView(row) : undefined;
  }

  /** Pending requests, then the most recent resolved ones. */
  list(limit = RECENT_REQUESTS): { pending: PermissionRequestView[]; recent: PermissionRequestView[] } {
    const pending = [...this.pending.values()].map((p) => p.view);
    const recent = (this.recent.all(limit) as Row[]).map(rowToView);
    return { pending, recent };
  }

  /**
   * A page of the pending requests, oldest first: at most `limit` after the
   * one at `afterSeq`, of one session or of all; `next` is the position to
   * go on from, or undefined at the end. Requests keep their position while
   * others are answered or added.
   */
  pendingPage(opts: { sessionId?: string | undefined; afterSeq?: number | undefined; limit: number }): { requests: PermissionRequestView[]; next: number | undefined } {
    const after = opts.afterSeq ?? 0;
    const requests: PermissionRequestView[] = [];
    let last = 0;
    const ids = opts.sessionId === undefined ? this.pending.keys() : (this.pendingBySession.get(opts.sessionId) ?? new Set<string>()).values();
    for (const id of ids) {
      const p = this.pending.get(id);
      if (p === undefined || p.seq <= after) continue;
      if (requests.length === opts.limit) return { requests, next: last };
      requests.push(p.view);
      last = p.seq;
    }
    return { requests, next: undefined };
  }

  /** The most recent resolved requests. */
  recentRequests(limit = RECENT_REQUESTS): PermissionRequestView[] {
    return (this.recent.all(limit) as Row[]).map(rowToView);
  }

  /** Ids of the requests waiting for an answer in a session (`"*"`: in every session), oldest first. */
  pendingIds(sessionId: string): string[] {
    if (sessionId === '*') return [...this.pending.keys()];
    const ids = this.pendingBySession.get(sessionId);
    return ids === undefined ? [] : [...ids];
  }

  /** How many requests wait for an answer in one session (no wildcard: "*" may be a session's own id). */
  pendingCountIn(sessionId: string): number {
    return this.pendingBySession.get(sessionId)?.size ?? 0;
  }

  /** A request still waiting for an answer; undefined once it is resolved. */
  pendingView(id: string): PermissionRequestView | undefined {
    return this.pending.get(id)?.view;
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Denies every pending request, and every later one (shutdown). */
  cancelAll(): void {
    this.closed = true;
    for (const p of [...this.pending.values()]) {
      p.finish({ behavior: 'deny', reason: 'user', message: SHUTTING_DOWN, requestId: p.view.id }, 'cancelled', null);
    }
  }
}

function rowToView(r: Row): PermissionRequestView {
  let input: unknown = r.input;
  try {
    input = JSON.parse(r.input);
  } catch {
    /* keep the text */
  }
  return {
    id: r.id,
    session_id: r.session_id,
    execution_id: r.execution_id,
    tool_use_id: r.tool_use_id,
    tool: r.tool,
    input,
    input_digest: r.input_digest,
    summary: r.summary,
    reason: { type: r.reason_type, detail: r.reason_detail ?? '' },
    message: r.message,
    suggested_rule: r.suggested_rule,
    status: r.status,
    created_at: r.created_at,
    expires_at: r.expires_at,
    resolved_at: r.resolved_at,
    resolved_by: r.resolved_by,
    answer_message: r.answer_message,
    remember: r.remember,
  };
}
