/**
 * Loading the configuration: toolexec's own JSON file, plus optionally a
 * Claude Code settings file (permissions, hooks) and an `.mcp.json`, each in
 * its own shape, merged in that order. A bad configuration is reported in one
 * line naming the field and what was expected; unknown fields are warned
 * about, never silently used.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import type { RuleInput } from '../permissions/rule-index.js';
import { parseRule } from '../permissions/rule-parser.js';
import { runnableProblems } from './preflight.js';
import { Config, configProblems, HOOK_EVENTS, HookHandler, HookMatcherGroup, McpServerConfig, UNRUN_HOOK_TYPES } from './schema.js';
import { realpathLoose } from '../workspace.js';
import { isPlainObject } from '../util/object.js';

export class ConfigError extends Error {
  /** What was warned about before the error: an unknown field is often the cause (`"prot": 8787`). */
  warnings: readonly string[] = [];

  constructor(
    message: string,
    readonly file: string | undefined,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface LoadOptions {
  configPath?: string | undefined;
  /**
   * Claude Code settings files, applied in order (a later file's defaultMode
   * wins, but never over managed settings'). Beside a `.claude/settings.json`,
   * its `settings.local.json` is loaded after it, as Claude Code does, unless
   * it is named itself.
   */
  claudeSettingsPath?: string | readonly string[] | undefined;
  mcpConfigPath?: string | undefined;
  /** Command-line overrides, applied last. */
  overrides?: {
    workspace?: string | undefined;
    host?: string | undefined;
    port?: number | undefined;
    dataDir?: string | undefined;
  };
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface Loaded {
  config: Config;
  /** Rules from the Claude Code settings file, with their source and root. */
  rules: RuleInput[];
  warnings: string[];
  files: string[];
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(`${file}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, file);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`${file}: is not valid JSON (${jsonErrorText(text, (e as Error).message)})`, file);
  }
}

/**
 * V8's JSON.parse error without the text it quotes: its "Unexpected token"
 * message shows the characters before the fault (`..."3456789"},]"`), which in
 * a configuration file are often the end of a token or key, printed to stderr
 * and collected with the logs. The position is said instead, as a line and
 * column, found by parsing ever longer prefixes: a prefix ends in that error
 * only once it holds the faulty character.
 */
function jsonErrorText(text: string, message: string): string {
  let m = message.replace(/\s*\n\s*/g, ' ');
  const quoted = /, (?:\.\.\.)?".*" is not valid JSON$/s;
  if (quoted.test(m)) {
    m = m.replace(quoted, '');
    const unexpected = (n: number): boolean => {
      try {
        JSON.parse(text.slice(0, n));
        return false;
      } catch (e) {
        return (e as Error).message.startsWith('Unexpected token');
      }
    };
    let lo = 1;
    let hi = text.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (unexpected(mid)) hi = mid;
      else lo = mid + 1;
    }
    if (unexpected(lo)) m += ` in JSON at position ${lo - 1}`;
  }
  return m.replace(/ at position (\d+)$/, (whole, pos: string) => {
    const before = text.slice(0, Number(pos));
    const line = before.split('\n').length;
    return `${whole} (line ${line}, column ${Number(pos) - before.lastIndexOf('\n')})`;
  });
}

function issuePath(p: readonly PropertyKey[]): string {
  return p.map((k) => (typeof k === 'number' ? `[${k}]` : String(k))).join('.').replace(/\.\[/g, '[');
}

/**
 * What was expected, in words: zod's "Invalid input: expected string,
 * received undefined" becomes "expected string, but it is missing".
 */
function expectation(message: string): string {
  return message
    .replace(/^(Invalid input|Invalid option|Too big|Too small|Invalid string|Invalid URL|Invalid):\s*/, '')
    .replace(/^Invalid discriminator value\.\s*Expected/, 'expected')
    .replace(/,? received undefined$/, ', but it is missing');
}

type Issue = z.ZodError['issues'][number];

/** One issue as "field.path: expected …"; a union names what each accepted shape wanted. */
function describeOne(i: Issue, prefix: readonly PropertyKey[]): string {
  const at = [...prefix, ...i.path];
  if (i.code === 'invalid_union' && i.errors.length > 0) {
    const shapes = i.errors
      .map((branch) => branch[0])
      .filter((b): b is Issue => b !== undefined)
      .map((b) => `${b.path.length > 0 ? `${issuePath(b.path)}: ` : ''}${expectation(b.message)}`);
    const where = at.length > 0 ? issuePath(at) : '(root)';
    return `${where}: matches none of the accepted shapes (${shapes.join('; or ')})`;
  }
  const where = at.length > 0 ? issuePath(at) : '(root)';
  return `${where}: ${i.code === 'invalid_format' && (i as { format?: string }).format === 'url' ? 'expected a URL' : expectation(i.message)}`;
}

/** The value at a path of the input, when there is one. */
function valueAt(input: unknown, at: readonly PropertyKey[]): { value: unknown } | undefined {
  let v = input;
  for (const k of at) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return { value: v };
}

/**
 * The first issue of a zod error as "field.path: expected …". Given the
 * input, a value outside a list says what it was (`got "acceptEdit"`):
 * a typo is found by reading the line, not by searching the file.
 */
export function describeIssue(e: z.ZodError, input?: unknown): string {
  const i = e.issues[0];
  if (!i) return 'invalid';
  const text = describeOne(i, []);
  // A discriminated union's unknown `type` is an invalid_union with no branch to report.
  const listed = i.code === 'invalid_value' || (i.code === 'invalid_union' && i.errors.length === 0);
  const given = listed && input !== undefined ? valueAt(input, i.path) : undefined;
  return given === undefined ? text : `${text}, got ${JSON.stringify(given.value)?.slice(0, 100)}`;
}

/** Keys present in the input that the schema does not know, as dotted paths. */
export function unknownKeys(input: unknown, schema: z.ZodType = Config, prefix = ''): string[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return [];
  let s: z.ZodType = schema;
  // Unwrap defaults/optionals/prefaults to reach an object schema.
  for (let i = 0; i < 5; i++) {
    const def = (s as unknown as { def?: { type?: string; innerType?: z.ZodType } }).def;
    if (def?.innerType && (def.type === 'default' || def.type === 'optional' || def.type === 'prefault')) s = def.innerType;
    else break;
  }
  const shape = (s as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
    const child = shape[k];
    if (!child) out.push(prefix + k);
    else if (k !== 'hooks' && k !== 'mcpServers' && k !== 'features') out.push(...unknownKeys(v, child, `${prefix}${k}.`));
  }
  return out;
}

/** The branch of a union of object schemas an entry is meant for (by its `type`, else the first). */
function branchFor(union: z.ZodType, entry: unknown): z.ZodType {
  const options = (union as unknown as { options?: z.ZodType[] }).options ?? [union];
  const type = entry !== null && typeof entry === 'object' ? (entry as { type?: unknown }).type : undefined;
  for (const o of options) {
    const t = (o as unknown as { shape?: { type?: z.ZodType } }).shape?.type;
    if (t !== undefined && type !== undefined && t.safeParse(type).success) return o;
  }
  return options[0]!;
}

/** Unknown keys inside the parts unknownKeys leaves alone: MCP server entries and hook groups and handlers. */
export function unknownNestedKeys(input: unknown): string[] {
  if (input === null || typeof input !== 'object') return [];
  const raw = input as { mcpServers?: unknown; hooks?: unknown };
  const out: string[] = [];
  if (raw.mcpServers !== null && typeof raw.mcpServers === 'object') {
    for (const [name, entry] of Object.entries(raw.mcpServers as Record<string, unknown>)) {
      out.push(...unknownKeys(entry, branchFor(McpServerConfig, entry), `mcpServers.${name}.`));
    }
  }
  if (raw.hooks !== null && typeof raw.hooks === 'object') {
    for (const [event, groups] of Object.entries(raw.hooks as Record<string, unknown>)) {
      if (!Array.isArray(groups)) continue;
      groups.forEach((g: unknown, i) => {
        out.push(...unknownKeys(g, HookMatcherGroup, `hooks.${event}[${i}].`));
        const handlers = g !== null && typeof g === 'object' ? (g as { hooks?: unknown }).hooks : undefined;
        if (Array.isArray(handlers)) handlers.forEach((h: unknown, j) => out.push(...unknownKeys(h, branchFor(HookHandler, h), `hooks.${event}[${i}].hooks[${j}].`)));
      });
    }
  }
  return out;
}

const ClaudeSettings = z.looseObject({
  permissions: z
    .looseObject({
      allow: z.array(z.string()).optional(),
      deny: z.array(z.string()).optional(),
      ask: z.array(z.string()).optional(),
      additionalDirectories: z.array(z.string()).optional(),
      defaultMode: z.string().optional(),
      disableBypassPermissionsMode: z.string().optional(),
    })
    .optional(),
  hooks: z.record(z.string(), z.unknown()).optional(),
  disableAllHooks: z.boolean().optional(),
  // Managed settings (policySettings) only: what the other files may still bring.
  allowManagedHooksOnly: z.boolean().optional(),
  allowManagedPermissionRulesOnly: z.boolean().optional(),
  // Read only to say what is not applied: never a reason to refuse a file Claude Code takes.
  env: z.unknown().optional(),
  sandbox: z.unknown().optional(),
  disabledMcpjsonServers: z.array(z.string()).optional(),
});

const McpJson = z.looseObject({ mcpServers: z.record(z.string(), z.unknown()) });

function resolveFrom(base: string, p: string | undefined): string | undefined {
  if (p === undefined || p === ':memory:') return p;
  return path.resolve(base, p);
}

/** The settings files to load, in order: each named one, a `.claude/settings.json` followed by its `settings.local.json` when there is one. */
function settingsFiles(named: string | readonly string[] | undefined, cwd: string): string[] {
  const given = (named === undefined ? [] : typeof named === 'string' ? [named] : named).map((f) => path.resolve(cwd, f));
  const out: string[] = [];
  for (const file of given) {
    if (!out.includes(file)) out.push(file);
    const local = path.join(path.dirname(file), 'settings.local.json');
    if (path.basename(file) === 'settings.json' && path.basename(path.dirname(file)) === '.claude' && !given.includes(local) && !out.includes(local) && fs.existsSync(local)) out.push(local);
  }
  return out;
}

/**
 * Whether a settings file is Claude Code's managed settings (policySettings):
 * `managed-settings.json`, or a drop-in of its `managed-settings.d/`.
 */
function isManagedSettings(file: string): boolean {
  return path.basename(file) === 'managed-settings.json' || (path.basename(path.dirname(file)) === 'managed-settings.d' && file.endsWith('.json'));
}

/** Claude Code's configuration directory (getClaudeConfigHomeDir): $CLAUDE_CONFIG_DIR, else ~/.claude. */
function claudeConfigDir(env: NodeJS.ProcessEnv, cwd: string): string {
  return realpathLoose(env.CLAUDE_CONFIG_DIR ? path.resolve(cwd, env.CLAUDE_CONFIG_DIR) : path.join(os.homedir(), '.claude'));
}

/** A rule whose content is a path anchored at its settings' root (`Read(/src/**)`; not `//abs`). */
function rootAnchored(raw: string): boolean {
  const p = parseRule(raw);
  return !('error' in p) && p.content !== undefined && p.content.startsWith('/') && !p.content.startsWith('//');
}

/** The project root of a Claude Code settings file: the parent of its `.claude/` folder. */
function settingsRoot(file: string): string {
  const dir = path.dirname(path.resolve(file));
  return path.basename(dir) === '.claude' ? path.dirname(dir) : dir;
}

/**
 * A project's `.claude/settings.json` loaded for another workspace: under
 * Claude Code its hooks find their scripts through CLAUDE_PROJECT_DIR, the
 * project; here that variable is the workspace, so they would miss them
 * (and fail without blocking anything), and `./` rules would be judged from
 * elsewhere. Said, with the fix; a user's `~/.claude/settings.json` is
 * meant for every workspace.
 */
function projectMismatch(files: readonly string[], workspace: string, userDir: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const ws = realpathLoose(workspace);
  const home = realpathLoose(os.homedir());
  for (const file of files) {
    if (path.basename(path.dirname(file)) !== '.claude' || realpathLoose(path.dirname(file)) === userDir) continue;
    const root = settingsRoot(file);
    const real = realpathLoose(root);
    if (real === ws || real === home || seen.has(root)) continue;
    seen.add(root);
    out.push(
      `${file}: these are the settings of the project ${root}, but the workspace is ${workspace}: their hooks get CLAUDE_PROJECT_DIR=${workspace} and their ./ rules are judged from there; to work on that project as Claude Code would, add --workspace ${root}`,
    );
  }
  return out;
}

/**
 * A project's `.mcp.json` beside the `.claude/` whose settings are loaded:
 * Claude Code reads it by itself, toolexec starts MCP servers only from
 * --mcp-config (each is a process it runs), so an operator who points it at
 * the project would find the servers' tools missing with no word why. Said,
 * with the option; not when --mcp-config names a file (a choice made), nor
 * for a user's `~/.claude/settings.json`, which is no project's.
 */
function unloadedMcpJson(files: readonly string[], mcpConfigPath: string | undefined, userDir: string): string[] {
  if (mcpConfigPath !== undefined) return [];
  const out: string[] = [];
  const seen = new Set<string>();
  const home = realpathLoose(os.homedir());
  for (const file of files) {
    if (path.basename(path.dirname(file)) !== '.claude' || realpathLoose(path.dirname(file)) === userDir) continue;
    const root = settingsRoot(file);
    const json = path.join(root, '.mcp.json');
    if (realpathLoose(root) === home || seen.has(json) || !fs.existsSync(json)) continue;
    seen.add(json);
    out.push(`${json}: the project's MCP servers are not started: Claude Code reads .mcp.json by itself, toolexec only when given it; add --mcp-config ${json}`);
  }
  return out;
}

/** Hooks a Claude Code settings file may hold that toolexec accepts and does not run: said, not silently dropped. */
function unrunHooks(hooks: Config['hooks']): string[] {
  const events: string[] = [];
  const types: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    if (groups.length === 0) continue;
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      events.push(event);
      continue;
    }
    for (const g of groups) for (const h of g.hooks) if (UNRUN_HOOK_TYPES.has(h.type) && !types.includes(`${h.type} (${event})`)) types.push(`${h.type} (${event})`);
  }
  const out: string[] = [];
  if (events.length > 0) {
    out.push(`hooks: ${events.join(', ')} ${events.length === 1 ? 'is an event' : 'are events'} toolexec never fires (it runs tool calls, not sessions or prompts); those hooks are not run`);
  }
  if (types.length > 0) out.push(`hooks: ${types.join(', ')} hooks need a model or an MCP client of their own; toolexec does not run them`);
  return out;
}

export function loadConfig(opts: LoadOptions = {}): Loaded {
  const warnings: string[] = [];
  try {
    return load(opts, warnings);
  } catch (e) {
    if (e instanceof ConfigError) e.warnings = warnings;
    throw e;
  }
}

function load(opts: LoadOptions, warnings: string[]): Loaded {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const files: string[] = [];
  const rules: RuleInput[] = [];
  const configPath = opts.configPath ?? env.TOOLEXEC_CONFIG;

  let raw: Record<string, unknown> = {};
  let base = cwd;
  if (configPath) {
    const file = path.resolve(cwd, configPath);
    const v = readJson(file);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new ConfigError(`${file}: (root): expected a JSON object`, file);
    raw = v as Record<string, unknown>;
    base = path.dirname(file);
    files.push(file);
    for (const k of [...unknownKeys(raw), ...unknownNestedKeys(raw)]) warnings.push(`${file}: unknown field "${k}" is ignored`);
  }

  const parsed = Config.safeParse(raw);
  if (!parsed.success) throw new ConfigError(`${configPath ? path.resolve(cwd, configPath) : 'configuration'}: ${describeIssue(parsed.error, raw)}`, configPath);
  const config = parsed.data;
  // Relative paths are relative to the file that wrote them.
  config.workspace.root = resolveFrom(base, config.workspace.root)!;
  config.workspace.additionalDirectories = config.workspace.additionalDirectories.map((d) => resolveFrom(base, d)!);
  config.storage.path = resolveFrom(base, config.storage.path)!;
  config.permissions.additionalDirectories = config.permissions.additionalDirectories.map((d) => resolveFrom(base, d)!);

  const disabledMcpjson = new Set<string>();
  const settings = settingsFiles(opts.claudeSettingsPath, cwd);
  // Hooks of the settings files, merged once every file is read: managed settings decide what the others may add.
  const settingsHooks: Array<{ file: string; managed: boolean; hooks: Config['hooks'] }> = [];
  const policy = { disableAllHooks: false, hooksOnly: false, rulesOnly: false };
  let otherDisablesHooks = false;
  let managedMode = false;
  const userDir = claudeConfigDir(env, cwd);
  for (const [n, file] of settings.entries()) {
    const json = readJson(file);
    const s = ClaudeSettings.safeParse(json);
    if (!s.success) throw new ConfigError(`${file}: ${describeIssue(s.error, json)}`, file);
    files.push(file);
    const managed = isManagedSettings(file);
    const user = !managed && path.basename(file) === 'settings.json' && realpathLoose(path.dirname(file)) === userDir;
    // The root of `/` rules (Claude Code's getSettingsRootPathForSource): the project for a project's files and
    // for managed settings (set once the workspace is known), the configuration directory itself for the user's.
    const root = managed ? '' : user ? path.dirname(file) : settingsRoot(file);
    const source = managed ? 'policySettings' : user ? 'userSettings' : path.basename(file) === 'settings.local.json' ? 'localSettings' : 'projectSettings';
    const p = s.data.permissions;
    for (const [behavior, list] of [
      ['deny', p?.deny],
      ['ask', p?.ask],
      ['allow', p?.allow],
    ] as const) {
      (list ?? []).forEach((r, i) => {
        const id = n === 0 ? `settings:${behavior}:${i}` : `settings${n}:${behavior}:${i}`;
        rules.push({ raw: r, behavior, source, root, id });
        // Earlier versions rooted the user's `/` rules at the home directory; a deny or ask rule keeps covering
        // it too, so that it never matches less than it did.
        if (user && behavior !== 'allow' && rootAnchored(r)) rules.push({ raw: r, behavior, source, root: settingsRoot(file), id: `${id}:home` });
      });
    }
    if (p?.additionalDirectories) {
      config.permissions.additionalDirectories.push(...p.additionalDirectories.map((d) => path.resolve(settingsRoot(file), d)));
    }
    if (p?.defaultMode && !(raw.permissions as Record<string, unknown> | undefined)?.defaultMode) {
      const m = Config.shape.permissions.safeParse({ defaultMode: p.defaultMode });
      // Managed settings come first in Claude Code's precedence: a later file does not change their mode.
      if (m.success) {
        if (managed || !managedMode) config.permissions.defaultMode = m.data.defaultMode;
        if (managed) managedMode = true;
      } else warnings.push(`${file}: permissions.defaultMode "${p.defaultMode}" is not a mode toolexec knows; ignored`);
    }
    if (s.data.hooks) {
      const h = Config.shape.hooks.safeParse(s.data.hooks);
      if (!h.success) throw new ConfigError(`${file}: hooks.${describeIssue(h.error, s.data.hooks)}`, file);
      settingsHooks.push({ file, managed, hooks: h.data });
    }
    if (s.data.disableAllHooks) {
      if (managed) policy.disableAllHooks = true;
      else otherDisablesHooks = true;
    }
    if (managed && s.data.allowManagedHooksOnly === true) policy.hooksOnly = true;
    if (managed && s.data.allowManagedPermissionRulesOnly === true) policy.rulesOnly = true;
    // What Claude Code applies to a session that toolexec does not: said, so that nobody relies on it.
    const envNames = isPlainObject(s.data.env) ? Object.keys(s.data.env) : [];
    if (envNames.length > 0) {
      warnings.push(
        `${file}: env (${envNames.join(', ')}) is not applied: Bash commands, hooks and MCP servers get the environment toolexec was started with; set the variables there`,
      );
    }
    if (isPlainObject(s.data.sandbox) && s.data.sandbox.enabled === true && config.bash.sandbox.mode === 'off') {
      warnings.push(`${file}: sandbox.enabled is Claude Code's switch and does not sandbox toolexec's Bash; set bash.sandbox.mode ("auto" or "bubblewrap") in toolexec's configuration`);
    }
    for (const name of s.data.disabledMcpjsonServers ?? []) disabledMcpjson.add(name);
    // A settings file that forbids bypass mode forbids it here too.
    if (p?.disableBypassPermissionsMode === 'disable') config.permissions.disableBypassPermissionsMode = 'disable';
  }

  // As Claude Code reads them (hooksConfigSnapshot.ts, permissionsLoader.ts): managed settings' disableAllHooks
  // stops every hook; their allowManagedHooksOnly keeps the other files' hooks from running, as another file's
  // disableAllHooks does, which cannot stop managed hooks; their allowManagedPermissionRulesOnly keeps only their
  // own rules (here: the other files' allow rules go, their denies and asks stay). toolexec's own configuration
  // is the operator's, not a settings file: its hooks and rules stay.
  const hasManagedHooks = settingsHooks.some((h) => h.managed);
  const onlyManagedHooks = policy.hooksOnly || (otherDisablesHooks && hasManagedHooks);
  for (const { file, managed, hooks } of settingsHooks) {
    if (onlyManagedHooks && !managed) {
      warnings.push(`${file}: hooks are not run: ${policy.hooksOnly ? 'the managed settings allow managed hooks only (allowManagedHooksOnly)' : 'a settings file sets disableAllHooks, which leaves managed hooks alone'}`);
      continue;
    }
    for (const [event, groups] of Object.entries(hooks)) config.hooks[event] = [...(config.hooks[event] ?? []), ...groups];
  }
  if (policy.disableAllHooks || (otherDisablesHooks && !hasManagedHooks)) config.disableAllHooks = true;
  if (policy.rulesOnly) {
    // Claude Code drops the other files' deny and ask rules too; a deny is never weakened here, so only their allows go.
    const dropped = rules.filter((r) => r.source !== 'policySettings' && r.behavior === 'allow');
    if (dropped.length > 0) {
      warnings.push(
        `${dropped.length} allow rule(s) of settings files other than the managed settings are ignored: the managed settings allow managed rules only (allowManagedPermissionRulesOnly); their deny and ask rules still hold`,
      );
      rules.splice(0, rules.length, ...rules.filter((r) => !dropped.includes(r)));
    }
  }

  if (opts.mcpConfigPath) {
    const file = path.resolve(cwd, opts.mcpConfigPath);
    const m = McpJson.safeParse(readJson(file));
    if (!m.success) throw new ConfigError(`${file}: ${describeIssue(m.error)}`, file);
    files.push(file);
    const servers = Config.shape.mcpServers.safeParse(m.data.mcpServers);
    if (!servers.success) throw new ConfigError(`${file}: mcpServers.${describeIssue(servers.error, m.data.mcpServers)}`, file);
    for (const [name, s] of Object.entries(servers.data)) {
      // As in Claude Code, a settings file's disabledMcpjsonServers rejects those servers of .mcp.json.
      if (disabledMcpjson.has(name)) continue;
      if (config.mcpServers[name]) warnings.push(`${file}: MCP server "${name}" is also in the configuration; the configuration's wins`);
      else config.mcpServers[name] = s;
    }
  }

  warnings.push(...unrunHooks(config.hooks));

  const problems = configProblems(config);
  if (problems.length > 0) throw new ConfigError(`${configPath ? path.resolve(cwd, configPath) : 'configuration'}: ${problems[0]}`, configPath);

  const o = opts.overrides ?? {};
  if (o.workspace) config.workspace.root = path.resolve(cwd, o.workspace);
  if (o.host) config.server.host = o.host;
  if (o.port !== undefined) config.server.port = o.port;
  if (o.dataDir) config.storage.path = path.join(path.resolve(cwd, o.dataDir), 'toolexec.db');
  for (const r of rules) if (r.source === 'policySettings') r.root = config.workspace.root;
  warnings.push(...projectMismatch(settings, config.workspace.root, userDir), ...unloadedMcpJson(settings, opts.mcpConfigPath, userDir), ...runnableProblems(config, env));
  return { config, rules, warnings, files };
}
