/**
 * The tool pool (contract §2), in three stages:
 *   1. the built-in tools, minus those switched off by feature flags;
 *   2. runtime filters: blanket deny rules, disabled tools (and, per view, the
 *      plan and dontAsk modes);
 *   3. the MCP tools of connected servers, merged after the built-ins.
 * Built-ins come first, sorted by name, then MCP tools sorted by name. On a
 * clash the built-in wins; MCP tools that normalise to one name are all left
 * out and reported, never merged silently.
 *
 * A blanket-denied tool leaves the catalog but stays resolvable, so that a
 * model calling it anyway gets an audited rule denial rather than "no such
 * tool".
 */
import type { PermissionMode } from '../config/schema.js';
import type { RuleIndex } from '../permissions/rule-index.js';
import type { AnyTool } from '../tool/types.js';
import { MAX_TOOL_NAME_LENGTH, normalizeNameForMCP } from './mcp-names.js';

export interface PoolProblem {
  kind: 'mcp_name_clash' | 'shadows_builtin' | 'name_too_long' | 'duplicate_builtin';
  message: string;
  tools: string[];
  servers: string[];
}

export interface PoolInput {
  builtins: readonly AnyTool[];
  features: Readonly<Record<string, boolean>>;
  rules: RuleIndex;
  mcpTools: readonly AnyTool[];
}

export const TOOL_SEARCH_NAME = 'ToolSearch';

const byName = (a: AnyTool, b: AnyTool): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function safeEnabled(t: AnyTool): boolean {
  try {
    return t.isEnabled();
  } catch {
    return false;
  }
}

export class ToolPool {
  /** Every resolvable tool: built-ins then MCP tools, each part sorted. */
  readonly all: readonly AnyTool[];
  /** The catalog's tools before mode views: without blanket-denied ones. */
  readonly visible: readonly AnyTool[];
  readonly problems: readonly PoolProblem[];
  private readonly exact = new Map<string, AnyTool>();
  private readonly alias = new Map<string, AnyTool>();
  private readonly views = new Map<string, readonly AnyTool[]>();

  constructor(private readonly input: PoolInput) {
    const problems: PoolProblem[] = [];
    // Stage 1 and 2.
    const builtins = input.builtins
      .filter((t) => input.features[t.name] !== false)
      .filter(safeEnabled)
      .slice()
      .sort(byName);
    const seen = new Set<string>();
    const kept: AnyTool[] = [];
    for (const t of builtins) {
      if (seen.has(t.name)) {
        problems.push({ kind: 'duplicate_builtin', message: `two built-in tools are named ${t.name}`, tools: [t.name], servers: [] });
        continue;
      }
      seen.add(t.name);
      kept.push(t);
    }
    // Stage 3.
    const groups = new Map<string, AnyTool[]>();
    for (const t of input.mcpTools) {
      if (!safeEnabled(t)) continue;
      const list = groups.get(t.name);
      if (list) list.push(t);
      else groups.set(t.name, [t]);
    }
    const mcp: AnyTool[] = [];
    for (const [name, list] of groups) {
      const servers = list.map((t) => t.mcpInfo?.serverName ?? '?');
      if (list.length > 1) {
        problems.push({
          kind: 'mcp_name_clash',
          message: `${list.length} MCP tools normalise to ${name} (${list.map((t) => `${t.mcpInfo?.serverName}/${t.mcpInfo?.toolName}`).join(', ')}); none of them is served`,
          tools: [name],
          servers,
        });
        continue;
      }
      if (seen.has(name)) {
        problems.push({ kind: 'shadows_builtin', message: `MCP tool ${name} has the name of a built-in tool; the built-in wins`, tools: [name], servers });
        continue;
      }
      if (name.length > MAX_TOOL_NAME_LENGTH) {
        problems.push({
          kind: 'name_too_long',
          message: `MCP tool name ${name} is longer than ${MAX_TOOL_NAME_LENGTH} characters; it is not served`,
          tools: [name],
          servers,
        });
        continue;
      }
      mcp.push(list[0]!);
    }
    mcp.sort(byName);
    this.all = [...kept, ...mcp];
    this.visible = this.all.filter((t) => !input.rules.isBlanketDenied(t));
    this.problems = problems;
    for (const t of this.all) {
      this.exact.set(t.name, t);
      for (const a of t.aliases) if (!this.alias.has(a)) this.alias.set(a, t);
    }
  }

  /** Step 1: exact name, then aliases, then the MCP namespace (names as the server spelt them). */
  lookup(name: string): AnyTool | undefined {
    const hit = this.exact.get(name) ?? this.alias.get(name);
    if (hit) return hit;
    if (name.startsWith('mcp__')) {
      const rest = name.slice(5);
      const i = rest.indexOf('__');
      if (i > 0) {
        const norm = `mcp__${normalizeNameForMCP(rest.slice(0, i))}__${normalizeNameForMCP(rest.slice(i + 2))}`;
        return this.exact.get(norm);
      }
    }
    return undefined;
  }

  /** The mode-aware view: plan sees what can be read-only; dontAsk also what an allow rule covers. */
  view(mode: PermissionMode): readonly AnyTool[] {
    const key = mode === 'plan' || mode === 'dontAsk' ? mode : 'all';
    const hit = this.views.get(key);
    if (hit) return hit;
    let list: readonly AnyTool[] = this.visible;
    if (key === 'plan') list = list.filter((t) => t.mayBeReadOnly);
    else if (key === 'dontAsk')
      list = list.filter(
        (t) =>
          t.mayBeReadOnly ||
          this.input.rules.wholeTool(t, 'allow') !== undefined ||
          this.input.rules.contentRules(t.name, 'allow').length > 0,
      );
    // ToolSearch is listed only when something in the view is deferred.
    if (!list.some(isDeferred)) list = list.filter((t) => t.name !== TOOL_SEARCH_NAME);
    this.views.set(key, list);
    return list;
  }
}

/** Deferred: MCP tools unless alwaysLoad, and tools that say shouldDefer; never ToolSearch. */
export function isDeferred(t: AnyTool): boolean {
  if (t.name === TOOL_SEARCH_NAME) return false;
  if (t.alwaysLoad) return false;
  if (t.mcpInfo) return true;
  return t.shouldDefer;
}
