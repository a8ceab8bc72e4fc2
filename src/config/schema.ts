/**
 * The configuration file's schema. Every field is optional; defaults are the
 * embedded ones `npm start` runs on. Sections Claude Code users already write
 * (permissions, hooks, mcpServers) keep Claude Code's shape.
 */
import { z } from 'zod';
import { DEFAULT_BACKGROUND_LIMITS } from '../tasks/background.js';

/** The longest delay a Node timer takes (2^31 - 1 ms, about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export const Scope = z.enum(['execute', 'read', 'approve', 'admin']);
export type Scope = z.infer<typeof Scope>;

/** The shortest token accepted, in server.tokens and in TOOLEXEC_TOKEN alike. */
export const MIN_TOKEN_LENGTH = 16;

export const TokenConfig = z.object({
  name: z.string().min(1),
  token: z.string().min(MIN_TOKEN_LENGTH, `a token must be at least ${MIN_TOKEN_LENGTH} characters`),
  scopes: z.array(Scope).default(['execute', 'read', 'approve', 'admin']),
});
export type TokenConfig = z.infer<typeof TokenConfig>;

export const PermissionMode = z.enum([
  'default',
  'acceptEdits',
  'plan',
  'dontAsk',
  'bypassPermissions',
  'auto',
]);
export type PermissionMode = z.infer<typeof PermissionMode>;

/** What every hook handler may carry. */
const hookCommon = {
  timeout: z.number().positive().max(MAX_TIMER_MS / 1000).optional(),
  statusMessage: z.string().optional(),
  if: z.string().optional(),
};
/** Command (and prompt, agent) hooks may also run once per session or in the background. */
const hookRunning = {
  once: z.boolean().optional(),
  async: z.boolean().optional(),
  asyncRewake: z.boolean().optional(),
};
const HookCommand = z.object({
  type: z.literal('command'),
  command: z.string().min(1),
  shell: z.string().optional(),
  ...hookCommon,
  ...hookRunning,
});
const HookHttp = z.object({
  type: z.literal('http'),
  url: z.string().url(),
  headers: z.record(z.string(), z.string()).optional(),
  allowedEnvVars: z.array(z.string()).optional(),
  ...hookCommon,
});
// Claude Code's hooks that need a model or an MCP client of their own: accepted,
// so that a settings file works unchanged, and not run (config/load.ts warns).
const HookPrompt = z.object({
  type: z.literal('prompt'),
  prompt: z.string(),
  model: z.string().optional(),
  ...hookCommon,
  ...hookRunning,
});
const HookAgent = HookPrompt.extend({ type: z.literal('agent') });
const HookMcpTool = z.looseObject({ type: z.literal('mcp_tool') });
export const HookHandler = z.discriminatedUnion('type', [HookCommand, HookHttp, HookPrompt, HookAgent, HookMcpTool]);
export type HookHandler = z.infer<typeof HookHandler>;
/** The handlers toolexec runs. */
export type RunnableHookHandler = Extract<HookHandler, { type: 'command' | 'http' }>;
/** The handler types toolexec accepts but does not run. */
export const UNRUN_HOOK_TYPES: ReadonlySet<string> = new Set(['prompt', 'agent', 'mcp_tool']);

export const HookMatcherGroup = z.object({
  matcher: z.string().optional(),
  hooks: z.array(HookHandler),
});
export type HookMatcherGroup = z.infer<typeof HookMatcherGroup>;

export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

// Claude Code settings carry many more hook events (SessionStart, Stop, …);
// they are accepted and ignored rather than rejected, so a settings file can be
// pointed at unchanged.
export const HooksConfig = z.record(z.string(), z.array(HookMatcherGroup)).default({});
export type HooksConfig = z.infer<typeof HooksConfig>;

export const McpServerConfig = z.union([
  z.object({
    type: z.literal('stdio').optional(),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    alwaysLoad: z.boolean().optional(),
    timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
    /** /readyz is not ready until this server is connected. */
    required: z.boolean().optional(),
  }),
  z.object({
    type: z.enum(['http', 'sse', 'streamable-http']),
    // A URL with ${VAR} or ${VAR:-default} in it is checked once expanded, at connect time.
    url: z.string().refine((u) => u.includes('${') || URL.canParse(u), { message: 'expected a URL' }),
    headers: z.record(z.string(), z.string()).optional(),
    alwaysLoad: z.boolean().optional(),
    timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).optional(),
    /** /readyz is not ready until this server is connected. */
    required: z.boolean().optional(),
  }),
]);
export type McpServerConfig = z.infer<typeof McpServerConfig>;

export const Config = z.object({
  server: z
    .object({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8787),
      tokens: z.array(TokenConfig).default([]),
      /** Without tokens, host names besides loopback that requests may be addressed to (a reverse proxy on this machine). */
      allowedHosts: z.array(z.string().min(1)).default([]),
      bodyLimitBytes: z.number().int().positive().default(10 * 1024 * 1024),
      maxJsonDepth: z.number().int().positive().default(64),
      /** Time to receive a whole request (headers and body): slow clients are cut off. */
      requestTimeoutMs: z.number().int().nonnegative().max(MAX_TIMER_MS).default(60_000),
      /** Idle socket timeout; 0 = none (a call may wait minutes for an approval). */
      connectionTimeoutMs: z.number().int().nonnegative().max(MAX_TIMER_MS).default(0),
      rateLimit: z
        .object({ max: z.number().int().positive().max(MAX_TIMER_MS), timeWindowMs: z.number().int().positive().max(MAX_TIMER_MS) })
        .optional(),
      maxInFlightCalls: z.number().int().positive().default(1000),
      /**
       * Calls waiting for a person's answer that do not count against
       * maxInFlightCalls: they hold no CPU, and unanswered asks filled the
       * limit until the ask timeout, so that every auto-allowed call got a
       * 503. Past this many waiting, the others count again (memory stays
       * bounded by the sum of the two).
       */
      maxWaitingCalls: z.number().int().nonnegative().default(1000),
      shutdownGraceMs: z.number().int().nonnegative().max(MAX_TIMER_MS).default(10_000),
      redact: z.array(z.string()).default([]),
    })
    .prefault({}),
  workspace: z
    .object({
      root: z.string().default('.'),
      additionalDirectories: z.array(z.string()).default([]),
    })
    .prefault({}),
  storage: z
    .object({
      path: z.string().default('.toolexec/toolexec.db'),
    })
    .prefault({}),
  permissions: z
    .object({
      defaultMode: PermissionMode.default('default'),
      allow: z.array(z.string()).default([]),
      ask: z.array(z.string()).default([]),
      deny: z.array(z.string()).default([]),
      additionalDirectories: z.array(z.string()).default([]),
      headless: z.enum(['deny', 'wait']).default('deny'),
      askTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(300_000),
      allowBypass: z.boolean().default(false),
      disableBypassPermissionsMode: z.literal('disable').optional(),
    })
    .prefault({}),
  hooks: HooksConfig,
  disableAllHooks: z.boolean().default(false),
  mcpServers: z.record(z.string(), McpServerConfig).default({}),
  classifier: z
    .object({
      url: z.string().url(),
      timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(2000),
      headers: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  execution: z
    .object({
      maxConcurrency: z.number().int().positive().max(256).default(10),
      /**
       * How Bash, hooks, rg and background tasks are started: "helper" asks a
       * small helper process to (util/spawner.ts), "direct" forks this process,
       * which blocks its event loop while the fork copies its page tables.
       */
      spawner: z.enum(['helper', 'direct']).default('helper'),
    })
    .prefault({}),
  bash: z
    .object({
      defaultTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(120_000),
      maxTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(600_000),
      /** Optional OS sandbox for Bash (bubblewrap); "auto" uses it where available. */
      sandbox: z
        .object({
          mode: z.enum(['off', 'auto', 'bubblewrap']).default('off'),
          allowNetwork: z.boolean().default(true),
          writablePaths: z.array(z.string()).default([]),
        })
        .prefault({}),
      /** `run_in_background` tasks, read with TaskOutput and stopped with TaskStop (tasks/background.ts). */
      background: z
        .object({
          enabled: z.boolean().default(true),
          maxRunningPerSession: z.number().int().positive().default(DEFAULT_BACKGROUND_LIMITS.maxRunningPerSession),
          maxRunning: z.number().int().positive().default(DEFAULT_BACKGROUND_LIMITS.maxRunning),
          maxOutputBytes: z.number().int().positive().default(DEFAULT_BACKGROUND_LIMITS.maxOutputBytes),
          maxLifetimeMs: z.number().int().positive().max(MAX_TIMER_MS).default(DEFAULT_BACKGROUND_LIMITS.maxLifetimeMs),
          keepFinishedMs: z.number().int().positive().max(MAX_TIMER_MS).default(DEFAULT_BACKGROUND_LIMITS.keepFinishedMs),
          maxFinishedPerSession: z.number().int().nonnegative().default(DEFAULT_BACKGROUND_LIMITS.maxFinishedPerSession),
          maxKeptBytes: z.number().int().positive().default(DEFAULT_BACKGROUND_LIMITS.maxKeptBytes),
        })
        .prefault({}),
    })
    .prefault({}),
  webFetch: z
    .object({
      maxBytes: z.number().int().positive().default(10 * 1024 * 1024),
      timeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(30_000),
      /** Loopback and private addresses are refused unless allowed (SSRF). */
      allowPrivateNetwork: z.boolean().default(false),
    })
    .prefault({}),
  grep: z
    .object({
      engine: z.enum(['auto', 'rg', 'js']).default('auto'),
    })
    .prefault({}),
  results: z
    .object({
      persistThresholdChars: z.number().int().positive().default(20_000),
      previewChars: z.number().int().positive().default(4096),
    })
    .prefault({}),
  retention: z
    .object({
      auditMaxAgeDays: z.number().positive().optional(),
      resultsMaxAgeDays: z.number().positive().optional(),
      resultsMaxBytes: z.number().int().positive().optional(),
      intervalMs: z.number().int().positive().max(MAX_TIMER_MS).default(3_600_000),
    })
    .prefault({}),
  features: z.record(z.string(), z.boolean()).default({}),
  logging: z
    .object({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    })
    .prefault({}),
});
export type Config = z.infer<typeof Config>;

/** Cross-field rules the object schema cannot say field by field. */
export function configProblems(c: Config): string[] {
  const out: string[] = [];
  if (c.permissions.defaultMode === 'bypassPermissions' && (!c.permissions.allowBypass || c.permissions.disableBypassPermissionsMode === 'disable')) {
    out.push('permissions.defaultMode: "bypassPermissions" needs permissions.allowBypass: true');
  }
  if (c.bash.defaultTimeoutMs > c.bash.maxTimeoutMs) out.push('bash.defaultTimeoutMs: must not exceed bash.maxTimeoutMs');
  return out;
}
export type ConfigInput = z.input<typeof Config>;

export function defaultConfig(): Config {
  return Config.parse({});
}
