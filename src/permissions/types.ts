/**
 * Permission vocabulary shared by the engine, the tools and the audit log.
 */
import type { PermissionMode } from '../config/schema.js';
import type { HardLinkCheck } from './hard-links.js';

export type Behavior = 'allow' | 'deny' | 'ask';

/**
 * Where a decision came from; the audit log's `reason.type`. `cancelled` is
 * the audit's only: the call was cancelled before a decision was made (a
 * shutdown, its client gone, cancelled by id).
 */
export const REASON_TYPES = ['rule', 'mode', 'hook', 'classifier', 'user', 'timeout', 'headless', 'safety', 'working_dir', 'tool', 'cancelled'] as const;
export type ReasonType = (typeof REASON_TYPES)[number];

export interface Reason {
  type: ReasonType;
  detail: string;
}

/** One layer's say in a decision, for POST /permissions/check and the execution record. */
export interface ChainStep {
  layer: 'rules' | 'tool' | 'mode' | 'hooks' | 'classifier' | 'user';
  outcome: Behavior | 'passthrough' | 'skip';
  detail: string;
}

export interface Decision {
  behavior: Behavior;
  reason: Reason;
  /** Text the model receives when the call does not run. */
  message: string | undefined;
  chain: ChainStep[];
  /** Who decided, when a person or a token did (audit `actor`). */
  actor?: string | undefined;
  /** Input replaced by an approver. */
  updatedInput?: Record<string, unknown> | undefined;
  /**
   * A PermissionRequest hook denied with `interrupt: true`: Claude Code aborts
   * the turn, so the calls of the batch that have not finished are cancelled.
   */
  interrupt?: boolean;
}

export type RuleSource =
  | 'config'
  | 'userSettings'
  | 'projectSettings'
  | 'localSettings'
  | 'policySettings'
  | 'cliArg'
  | 'session'
  | 'always';

export interface PermissionRule {
  /** Stable id: `cfg:<n>` for configured rules, a generated id for remembered ones. */
  id: string;
  source: RuleSource;
  behavior: Behavior;
  toolName: string;
  /** The specifier inside the parentheses, unescaped; undefined = the whole tool. */
  content: string | undefined;
  /** The rule as written. */
  raw: string;
  /** For rules anchored to a settings file (`/p`), that file's project root. */
  root?: string | undefined;
  /** Session the rule belongs to (source "session"). */
  sessionId?: string | undefined;
  createdAt?: number | undefined;
  createdBy?: string | undefined;
}

/** What a tool may ask of the rules (path rules, Read-deny hiding in Glob and Grep, Bash rules). */
export interface PermissionQuery {
  readonly mode: PermissionMode;
  /** Content rules for a tool name and a behaviour. */
  contentRules(toolName: string, behavior: Behavior): readonly PermissionRule[];
  /** The first Read (kind read) or Edit/Write/NotebookEdit (kind edit) rule matching a path. */
  pathRule(kind: 'read' | 'edit', behavior: Behavior, paths: readonly string[]): PermissionRule | undefined;
  /** The first such rule that may match something at or below one of these directories. */
  pathRuleBelow(kind: 'read' | 'edit', behavior: Behavior, dirs: readonly string[]): PermissionRule | undefined;
  /**
   * Whether a Read deny rule (or a whole-tool Read deny) covers this absolute path, or it is one of
   * toolexec's own files. `canonical`: where it really leads, when the caller knows it already (a
   * directory listing's plain entry), which spares resolving it again.
   */
  isReadDenied(absPath: string, canonical?: string): boolean;
  /**
   * A check of real paths against the deny rules of this kind by identity
   * (permissions/hard-links.ts): the denied file a path is a hard link to, or
   * `unknown` when that could not be settled; undefined when it is none. One
   * checker per decision or search: the denied files are looked for once.
   */
  hardLinkChecker(kind: 'read' | 'edit'): HardLinkCheck;
}
