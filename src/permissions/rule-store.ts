/**
 * The rules a session is judged by: the configured ones (read-only), the
 * remembered "always" ones, and that session's remembered ones. Remembered
 * rules live in SQLite; each session's compiled RuleIndex is cached and
 * rebuilt only when its rules change. A remembered allow never beats a
 * configured deny or ask: the engine checks deny and ask rules first, whatever
 * their source.
 */
import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import { ToolexecError } from '../errors.js';
import type { Db } from '../storage/db.js';
import type { PathBase } from './path-rules.js';
import { isDangerousAllowRule } from './dangerous-rules.js';
import { DeniedFileMemory } from './denied-memory.js';
import { compileRules, RuleIndex, type RuleInput } from './rule-index.js';
import { parseRule } from './rule-parser.js';
import type { Behavior, PermissionRule } from './types.js';

/** Cache key of the index without session rules (not a valid session id: ids are non-empty). */
const GLOBAL = '';

interface RuleRow {
  id: string;
  source: 'session' | 'always';
  session_id: string | null;
  behavior: Behavior;
  rule: string;
  created_at: number;
  created_by: string | null;
}

export interface RememberInput {
  behavior: Behavior;
  rule: string;
  scope: 'session' | 'always';
  sessionId?: string | undefined;
  createdBy?: string | undefined;
}

export class RuleStore {
  private readonly configured: readonly PermissionRule[];
  private readonly configuredInputs: readonly RuleInput[];
  private always: RuleInput[];
  private readonly bySession = new Map<string, RuleInput[]>();
  private readonly cache = new Map<string, RuleIndex>();
  /** The same, for sessions in auto mode. */
  private readonly autoCache = new Map<string, RuleIndex>();
  private readonly insert: Statement;
  private readonly del: Statement<[string]>;
  private readonly getOne: Statement<[string]>;
  /** Called when the configured-plus-always rules change (the pool's blanket-deny filter follows). */
  onGlobalChange: () => void = () => {};

  constructor(
    private readonly db: Db,
    configured: readonly RuleInput[],
    private readonly base: PathBase,
    /** The denied files met by identity, shared by every index built here (denied-memory.ts). */
    private readonly deniedFiles: DeniedFileMemory = new DeniedFileMemory(),
  ) {
    this.configuredInputs = configured;
    this.configured = compileRules(configured).rules;
    this.insert = db.prepare(
      'INSERT INTO rules (id, source, session_id, behavior, rule, created_at, created_by) VALUES (@id, @source, @sessionId, @behavior, @rule, @createdAt, @createdBy)',
    );
    this.del = db.prepare('DELETE FROM rules WHERE id = ?');
    this.getOne = db.prepare('SELECT * FROM rules WHERE id = ?');
    const rows = db.prepare('SELECT * FROM rules ORDER BY created_at, id').all() as RuleRow[];
    this.always = [];
    for (const r of rows) {
      const input = toInput(r);
      if (r.source === 'always') this.always.push(input);
      else if (r.session_id) {
        const list = this.bySession.get(r.session_id) ?? [];
        list.push(input);
        this.bySession.set(r.session_id, list);
      }
    }
  }

  private build(sessionId: string | undefined, auto: boolean): RuleIndex {
    const session = sessionId === undefined ? [] : (this.bySession.get(sessionId) ?? []);
    const rules = compileRules([...this.configuredInputs, ...this.always, ...session]).rules;
    // Auto mode sets aside the allow rules that would run code past the classifier (dangerous-rules.ts).
    return new RuleIndex(auto ? rules.filter((r) => !isDangerousAllowRule(r)) : rules, this.base, this.deniedFiles);
  }

  /** The configured and "always" rules, for sessions without rules of their own (cached). */
  get global(): RuleIndex {
    return this.cached(GLOBAL, undefined, false);
  }

  /** The index a session's calls are judged by (cached); in auto mode without the rules it sets aside. */
  forSession(sessionId: string, auto = false): RuleIndex {
    const own = this.bySession.has(sessionId);
    return this.cached(own ? sessionId : GLOBAL, own ? sessionId : undefined, auto);
  }

  private cached(key: string, sessionId: string | undefined, auto: boolean): RuleIndex {
    const cache = auto ? this.autoCache : this.cache;
    const hit = cache.get(key);
    if (hit) return hit;
    const idx = this.build(sessionId, auto);
    cache.set(key, idx);
    return idx;
  }

  /** Every rule with its source: configured first, then remembered. */
  list(sessionId?: string): PermissionRule[] {
    const remembered = compileRules([
      ...this.always,
      ...(sessionId === undefined ? [...this.bySession.values()].flat() : (this.bySession.get(sessionId) ?? [])),
    ]).rules;
    return [...this.configured, ...remembered];
  }

  remember(r: RememberInput): PermissionRule {
    const parsed = parseRule(r.rule);
    if ('error' in parsed) throw new ToolexecError('TOOLEXEC_ERR_RULE_INVALID', `The rule ${JSON.stringify(r.rule)} is not valid: ${parsed.error}`);
    if (r.scope === 'session' && !r.sessionId) {
      throw new ToolexecError('TOOLEXEC_ERR_RULE_INVALID', 'A session rule needs a session_id');
    }
    const row: RuleRow = {
      id: `rule_${randomBytes(9).toString('base64url')}`,
      source: r.scope,
      session_id: r.scope === 'session' ? (r.sessionId ?? null) : null,
      behavior: r.behavior,
      rule: r.rule,
      created_at: Date.now(),
      created_by: r.createdBy ?? null,
    };
    this.insert.run({
      id: row.id,
      source: row.source,
      sessionId: row.session_id,
      behavior: row.behavior,
      rule: row.rule,
      createdAt: row.created_at,
      createdBy: row.created_by,
    });
    const input = toInput(row);
    if (row.source === 'always') {
      this.always.push(input);
      this.cache.clear();
      this.autoCache.clear();
      this.onGlobalChange();
    } else {
      const list = this.bySession.get(row.session_id!) ?? [];
      list.push(input);
      this.bySession.set(row.session_id!, list);
      this.cache.delete(row.session_id!);
      this.autoCache.delete(row.session_id!);
    }
    return compileRules([input]).rules[0]!;
  }

  /** Revokes a remembered rule; configured rules are read-only. */
  revoke(id: string): void {
    if (this.configured.some((r) => r.id === id)) {
      throw new ToolexecError('TOOLEXEC_ERR_RULE_READ_ONLY', `Rule ${id} comes from the configuration; change the configuration to remove it`);
    }
    const row = this.getOne.get(id) as RuleRow | undefined;
    if (!row) throw new ToolexecError('TOOLEXEC_ERR_RULE_NOT_FOUND', `No rule ${id}`);
    this.del.run(id);
    if (row.source === 'always') {
      this.always = this.always.filter((r) => r.id !== id);
      this.cache.clear();
      this.autoCache.clear();
      this.onGlobalChange();
    } else if (row.session_id) {
      const list = (this.bySession.get(row.session_id) ?? []).filter((r) => r.id !== id);
      if (list.length === 0) this.bySession.delete(row.session_id);
      else this.bySession.set(row.session_id, list);
      this.cache.delete(row.session_id);
      this.autoCache.delete(row.session_id);
    }
  }
}

function toInput(r: RuleRow): RuleInput {
  return {
    raw: r.rule,
    behavior: r.behavior,
    source: r.source,
    id: r.id,
    sessionId: r.session_id ?? undefined,
    createdAt: r.created_at,
    createdBy: r.created_by ?? undefined,
  };
}
