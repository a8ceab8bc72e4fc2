/**
 * A hook handler's `if` condition (permission-rule syntax) for a call, the
 * way a permission rule of that tool matches it (Claude Code's per-tool
 * preparePermissionMatcher):
 *
 *   - the rule's tool must be the call's tool, as in Claude Code's
 *     prepareIfConditionMatcher: unlike an Edit permission rule, `Edit(…)`
 *     does not cover Write, nor `Read(…)` Grep and Glob; `mcp__srv` and
 *     `mcp__srv__*` name every tool of that server, as whole-tool rules do;
 *   - a rule without content (`Read`, `Read(*)`) matches every call of it;
 *   - Bash: any subcommand matches (bash-rules.ts bashIfMatches);
 *   - Read, Edit, Write, NotebookEdit: the file's path (resolved from the
 *     session's cwd, as the tools resolve it) against the gitignore specifier
 *     (`Read(./.env)`, `Edit(*.ts)`, `Write(src/**)`), anchored exactly as
 *     the configured Read and Edit rules are (path-rules.ts: `./p` and bare
 *     patterns at the workspace root); Glob and Grep: the directory they search;
 *   - WebFetch: `domain:` specifiers against the URL's host (web/domain-rules.ts);
 *   - any other tool (MCP tools included) has no content to match: a rule
 *     with content matches none of its calls, as such a permission rule does.
 *
 * A path is matched in every spelling (as given and where it really leads),
 * as deny rules are: a hook guarding some files runs for a symlink to one.
 * Input the matcher cannot read (no path, an unparseable URL or command)
 * runs the hook rather than skipping it.
 */
import type { IfMatcher } from '../hooks/runner.js';
import type { ToolInput } from '../tool/types.js';
import type { Workspace } from '../workspace.js';
import { firstMatchingRule, hostsOfUrl } from '../web/domain-rules.js';
import { bashIfMatches } from './bash-rules.js';
import { compilePathRule, type PathMatcher } from './path-rules.js';
import { mcpServerOfRule } from './rule-index.js';
import { parseRule } from './rule-parser.js';
import type { PermissionRule } from './types.js';

/** The input field holding the path a path tool's rules are matched against. */
const PATH_FIELDS: Readonly<Record<string, string>> = {
  Read: 'file_path',
  Edit: 'file_path',
  Write: 'file_path',
  NotebookEdit: 'notebook_path',
  Glob: 'path',
  Grep: 'path',
};

/** Compiled path specifiers kept; bounded. */
const MAX_CACHED = 1000;

/** Whether a rule's tool name covers the call's tool. */
export function ifToolMatches(ruleTool: string, toolName: string): boolean {
  if (ruleTool === toolName) return true;
  const rule = mcpServerOfRule(ruleTool);
  if (!rule || rule.tool !== undefined) return false;
  const call = mcpServerOfRule(toolName);
  return call !== undefined && call.server === rule.server;
}

export function ruleIfMatcher(workspace: Pick<Workspace, 'root' | 'home' | 'caseInsensitive' | 'resolve' | 'canonical'>): IfMatcher {
  const paths = new Map<string, PathMatcher>();
  // The base the service's permission rules are compiled with (services.ts), so that `if` and a rule agree.
  const base = { root: workspace.root, cwd: workspace.root, home: workspace.home, caseInsensitive: workspace.caseInsensitive };
  const pathMatcher = (spec: string): PathMatcher => {
    let m = paths.get(spec);
    if (!m) {
      m = compilePathRule(spec, base);
      if (paths.size >= MAX_CACHED) paths.delete(paths.keys().next().value as string);
      paths.set(spec, m);
    }
    return m;
  };

  return (rule: string, toolName: string, input: ToolInput, cwd: string = workspace.root): boolean => {
    const p = parseRule(rule);
    if ('error' in p) return true;
    if (!ifToolMatches(p.toolName, toolName)) return false;
    if (p.content === undefined) return true;
    if (toolName === 'Bash') {
      return typeof input.command === 'string' ? bashIfMatches(p.content, input.command) : true;
    }
    const field = PATH_FIELDS[toolName];
    if (field !== undefined) {
      const given = input[field];
      // Glob and Grep without a path search the working directory.
      const file = typeof given === 'string' && given.length > 0 ? given : toolName === 'Glob' || toolName === 'Grep' ? cwd : undefined;
      if (file === undefined) return true;
      let spellings: string[];
      try {
        const abs = workspace.resolve(file, cwd);
        const canonical = workspace.canonical(file, cwd);
        spellings = abs === canonical ? [abs] : [canonical, abs];
      } catch {
        return true;
      }
      const m = pathMatcher(p.content);
      return spellings.some((s) => m(s));
    }
    if (toolName === 'WebFetch') {
      if (typeof input.url !== 'string') return true;
      let url: URL;
      try {
        url = new URL(input.url);
      } catch {
        return true;
      }
      const asRule: PermissionRule = { id: 'if', source: 'config', behavior: 'allow', toolName, content: p.content, raw: rule };
      return firstMatchingRule([asRule], hostsOfUrl(url)) !== undefined;
    }
    return false;
  };
}
