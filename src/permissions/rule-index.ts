/**
 * Rules parsed once and indexed by behaviour and tool name, so the per-call
 * path only looks things up. Whole-tool rules (`Write`, `mcp__srv`,
 * `mcp__srv__*`, `mcp__srv__tool`) are matched here; content rules
 * (`Bash(npm test:*)`, `Read(./.env)`) are handed to the tool's own
 * permission check through PermissionQuery.
 */
import type { AnyTool } from '../tool/types.js';
import type { Behavior, PermissionRule, RuleSource } from './types.js';
import { parseRule } from './rule-parser.js';
import { compileDirFilter, compilePathRule, fixedPrefix, isLiteralAbsolute, type PathBase, type PathMatcher } from './path-rules.js';
import { DeniedFileMemory } from './denied-memory.js';
import { DeniedLinkWalk } from './hard-links.js';

/** Tools whose rules are path rules, by kind: Edit rules also cover Write and NotebookEdit. */
export const PATH_RULE_TOOLS = { read: ['Read'], edit: ['Edit', 'Write', 'NotebookEdit'] } as const;
export type PathKind = keyof typeof PATH_RULE_TOOLS;

const EMPTY: readonly PermissionRule[] = Object.freeze([]);

export interface RuleInput {
  raw: string;
  behavior: Behavior;
  source: RuleSource;
  id?: string;
  root?: string;
  sessionId?: string;
  createdAt?: number;
  createdBy?: string;
}

export interface RuleError {
  raw: string;
  source: RuleSource;
  error: string;
}

export function compileRules(inputs: readonly RuleInput[]): { rules: PermissionRule[]; errors: RuleError[] } {
  const rules: PermissionRule[] = [];
  const errors: RuleError[] = [];
  inputs.forEach((r, i) => {
    const p = parseRule(r.raw);
    if ('error' in p) {
      errors.push({ raw: r.raw, source: r.source, error: p.error });
      return;
    }
    rules.push({
      id: r.id ?? `cfg:${r.behavior}:${i}`,
      source: r.source,
      behavior: r.behavior,
      toolName: p.toolName,
      content: p.content,
      raw: r.raw,
      root: r.root,
      sessionId: r.sessionId,
      createdAt: r.createdAt,
      createdBy: r.createdBy,
    });
  });
  return { rules, errors };
}

/** The MCP server part of an `mcp__srv…` rule, or undefined. */
export function mcpServerOfRule(toolName: string): { server: string; tool: string | undefined } | undefined {
  if (!toolName.startsWith('mcp__')) return undefined;
  const rest = toolName.slice(5);
  const sep = rest.indexOf('__');
  if (sep === -1) return { server: rest, tool: undefined };
  const tool = rest.slice(sep + 2);
  return { server: rest.slice(0, sep), tool: tool === '*' || tool === '' ? undefined : tool };
}

export class RuleIndex {
  /** Whole-tool rules by behaviour, keyed by tool name (or `mcp__srv` for server-wide rules). */
  private readonly whole: Record<Behavior, Map<string, PermissionRule>>;
  /** Content rules by behaviour and tool name. */
  private readonly content: Record<Behavior, Map<string, PermissionRule[]>>;
  readonly rules: readonly PermissionRule[];
  private readonly pathMatchers = new Map<PermissionRule, PathMatcher>();
  private readonly linkWalks = new Map<PathKind, DeniedLinkWalk>();
  private readonly pathPrefixes = new Map<PermissionRule, string>();
  private readonly dirFilters = new Map<PermissionRule, PathMatcher>();

  /**
   * @param deniedFiles the denied files met by identity (denied-memory.ts): the service's one memory, shared
   * by every index; an index made alone (tests, tools) has its own.
   */
  constructor(
    rules: readonly PermissionRule[],
    private readonly base: PathBase | undefined = undefined,
    private readonly deniedFiles: DeniedFileMemory = new DeniedFileMemory(),
  ) {
    this.rules = rules;
    this.whole = { allow: new Map(), deny: new Map(), ask: new Map() };
    this.content = { allow: new Map(), deny: new Map(), ask: new Map() };
    for (const r of rules) {
      if (r.content === undefined) {
        const mcp = mcpServerOfRule(r.toolName);
        const key = mcp && mcp.tool === undefined ? `mcp__${mcp.server}` : r.toolName;
        if (!this.whole[r.behavior].has(key)) this.whole[r.behavior].set(key, r);
      } else {
        const list = this.content[r.behavior].get(r.toolName);
        if (list) list.push(r);
        else this.content[r.behavior].set(r.toolName, [r]);
      }
    }
  }

  /** The first whole-tool rule of this behaviour that covers the tool. */
  wholeTool(tool: AnyTool, behavior: Behavior): PermissionRule | undefined {
    const m = this.whole[behavior];
    if (m.size === 0) return undefined;
    const hit = m.get(tool.name);
    if (hit) return hit;
    for (const a of tool.aliases) {
      const h = m.get(a);
      if (h) return h;
    }
    if (tool.name.startsWith('mcp__')) {
      const parsed = mcpServerOfRule(tool.name);
      if (parsed) return m.get(`mcp__${parsed.server}`);
    }
    return undefined;
  }

  contentRules(toolName: string, behavior: Behavior): readonly PermissionRule[] {
    return this.content[behavior].get(toolName) ?? EMPTY;
  }

  /**
   * The first path rule of this kind and behaviour matching any of the
   * spellings of a path (canonical and as given).
   */
  pathRule(kind: PathKind, behavior: Behavior, paths: readonly string[]): PermissionRule | undefined {
    if (!this.base) return undefined;
    for (const tool of PATH_RULE_TOOLS[kind]) {
      const list = this.content[behavior].get(tool);
      if (!list) continue;
      for (const r of list) {
        const m = this.matcher(r, this.base);
        for (const p of paths) if (m(p)) return r;
      }
    }
    return undefined;
  }

  private matcher(r: PermissionRule, base: PathBase): PathMatcher {
    let m = this.pathMatchers.get(r);
    if (!m) {
      // A remembered allow rule for one file names where the approved call really led (approval-broker.ts
      // suggestRule), and covers that path only: never through a symlink put in it since, to another file.
      const asWritten = r.behavior === 'allow' && (r.source === 'session' || r.source === 'always') && isLiteralAbsolute(r.content!);
      m = compilePathRule(r.content!, r.root ? { ...base, root: r.root } : base, asWritten);
      this.pathMatchers.set(r, m);
    }
    return m;
  }

  private prefix(r: PermissionRule, base: PathBase): string {
    let prefix = this.pathPrefixes.get(r);
    if (prefix === undefined) {
      prefix = fixedPrefix(r.content!, r.root ? { ...base, root: r.root } : base).prefix;
      this.pathPrefixes.set(r, prefix);
    }
    return prefix;
  }

  private dirFilter(r: PermissionRule, base: PathBase): PathMatcher {
    let f = this.dirFilters.get(r);
    if (!f) {
      f = compileDirFilter(r.content!, r.root ? { ...base, root: r.root } : base);
      this.dirFilters.set(r, f);
    }
    return f;
  }

  /**
   * The path rules of this kind and behaviour, each with its fixed (wildcard-free) prefix, its matcher,
   * and whether something it covers may lie at or below a directory (for walks).
   */
  pathRuleList(kind: PathKind, behavior: Behavior): { rule: PermissionRule; prefix: string; matches: PathMatcher; enters: PathMatcher }[] {
    const base = this.base;
    if (!base) return [];
    return PATH_RULE_TOOLS[kind].flatMap((tool) =>
      (this.content[behavior].get(tool) ?? []).map((rule) => ({ rule, prefix: this.prefix(rule, base), matches: this.matcher(rule, base), enters: this.dirFilter(rule, base) })),
    );
  }

  /**
   * The first path rule of this kind and behaviour that may match something at
   * or below one of these directories: its fixed (wildcard-free) prefix lies
   * at or below the directory, or the directory lies below the prefix where
   * the rest of the pattern may still match (path-rules.ts compileDirFilter) (`/.env.*` matches nothing below
   * `src`; a bare `.env` or `./.env`, at any depth, may). For a reader that reads whole trees (`grep -r`, `rg`).
   */
  pathRuleBelow(kind: PathKind, behavior: Behavior, dirs: readonly string[]): PermissionRule | undefined {
    const base = this.base;
    if (!base) return undefined;
    for (const tool of PATH_RULE_TOOLS[kind]) {
      const list = this.content[behavior].get(tool);
      if (!list) continue;
      for (const r of list) {
        const reaches = this.dirFilter(r, base);
        for (const d of dirs) if (reaches(d)) return r;
      }
    }
    return undefined;
  }

  /**
   * The walk for the denied files with several links (hard-links.ts), kept with the index so that a
   * directory unchanged since the last check is not listed again.
   */
  linkWalk(kind: PathKind): DeniedLinkWalk {
    let w = this.linkWalks.get(kind);
    if (!w) {
      w = new DeniedLinkWalk(this.pathRuleList(kind, 'deny'), this.deniedFiles);
      this.linkWalks.set(kind, w);
    }
    return w;
  }

  /** Whether any path rule of this kind and behaviour exists (a fast path for Glob and Grep). */
  hasPathRules(kind: PathKind, behavior: Behavior): boolean {
    return PATH_RULE_TOOLS[kind].some((t) => this.content[behavior].has(t));
  }

  /** Whether a whole-tool rule of this behaviour names this tool name. */
  wholeToolByName(name: string, behavior: Behavior): PermissionRule | undefined {
    return this.whole[behavior].get(name);
  }

  /** A blanket deny (no content) for this tool: the tool leaves the pool. */
  isBlanketDenied(tool: AnyTool): boolean {
    return this.wholeTool(tool, 'deny') !== undefined;
  }
}
