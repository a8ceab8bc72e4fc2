/**
 * The composition root: builds every part of the service from the config
 * once, and hands each part only what it uses. `buildApp` puts the HTTP
 * surface on top; tests build the same services.
 */
import path from 'node:path';
import pino, { type Logger } from 'pino';
import { configProblems, type Config } from './config/schema.js';
import { ToolexecError } from './errors.js';
import { envToken } from './http/auth.js';
import { Executor } from './executions/executor.js';
import { ExecutionRegistry } from './executions/registry.js';
import { ConfiguredHookRunner } from './hooks/runner.js';
import { ruleIfMatcher } from './permissions/if-matcher.js';
import type { HookRunner } from './hooks/types.js';
import { ApprovalBroker } from './permissions/approval-broker.js';
import type { Approvals } from './permissions/approvals.js';
import { RuleStore } from './permissions/rule-store.js';
import { DEFAULT_HUB_OPTIONS, WsHub, type HubOptions } from './ws/hub.js';
import { HttpClassifier, type Classifier } from './permissions/classifier.js';
import { McpManager, type McpManagerOptions } from './mcp/manager.js';
import { compileRules, type RuleError, type RuleInput } from './permissions/rule-index.js';
import type { PipelineDeps } from './pipeline/types.js';
import { CatalogCache } from './pool/catalog.js';
import { ToolPool } from './pool/pool.js';
import { ResultStore } from './results/store.js';
import type { Session } from './sessions/session.js';
import { SessionStore } from './sessions/store.js';
import { AuditLog } from './storage/audit.js';
import { GroupCommitWriter, makeDatabaseDir, openDatabase, type Db } from './storage/db.js';
import { lockDatabase } from './storage/lock.js';
import { SqliteDeniedFiles } from './storage/denied-files.js';
import { defaultPinLimit, type DeniedFileMemory } from './permissions/denied-memory.js';
import { Checkpointer } from './storage/checkpointer.js';
import { ExecutionLog } from './storage/executions.js';
import { Observability, type ObservabilityOptions } from './observability/observability.js';
import { Retention } from './storage/retention.js';
import { BackgroundTasks } from './tasks/background.js';
import type { AnyTool } from './tool/types.js';
import { builtinTools } from './tools/index.js';
import { childEnvironment } from './util/env.js';
import { acquireSpawnHelper } from './util/spawner.js';
import { configSecrets, outputMasker, secretMasker } from './observability/logging.js';
import { realpathLoose, Workspace } from './workspace.js';
import { scriptsRunByService } from './permissions/run-scripts.js';

export interface ServiceOptions {
  config: Config;
  logger?: Logger | undefined;
  /** Replaces the built-in tool list (tests). */
  builtins?: AnyTool[] | undefined;
  /** Added to the built-in tools (tests, embedders). */
  extraTools?: AnyTool[] | undefined;
  /** Stage-3 tools (MCP tools already wrapped as tools). */
  mcpTools?: AnyTool[] | undefined;
  hookRunner?: HookRunner | undefined;
  classifier?: Classifier | undefined;
  approvals?: Approvals | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** Extra rules (e.g. from a Claude Code settings file), with their sources. */
  rules?: RuleInput[] | undefined;
  /** The configuration files the service loaded (config/load.ts `files`): no tool may read them, as they can hold tokens. */
  configFiles?: readonly string[] | undefined;
  /** Websocket hub tuning (heartbeat, buffer limits); tests shorten it. */
  ws?: Partial<HubOptions> | undefined;
  /** MCP client tuning (reconnect backoff, connect timeout); tests shorten it. */
  mcp?: Pick<McpManagerOptions, 'reconnect' | 'connectTimeoutMs'> | undefined;
  /** Statistics flush period and readiness probe reuse; tests shorten them. */
  observability?: Pick<ObservabilityOptions, 'flushMs' | 'readinessCacheMs'> | undefined;
}

export interface Services {
  config: Config;
  log: Logger;
  db: Db;
  writer: GroupCommitWriter;
  workspace: Workspace;
  results: ResultStore;
  executions: ExecutionLog;
  audit: AuditLog;
  sessions: SessionStore;
  registry: ExecutionRegistry;
  executor: Executor;
  hooks: HookRunner;
  deps: PipelineDeps;
  rules: RuleStore;
  /** The denied files met by identity, shared by every rule index (permissions/denied-memory.ts). */
  deniedFiles: DeniedFileMemory;
  ruleErrors: readonly RuleError[];
  broker: ApprovalBroker;
  hub: WsHub;
  pool(): ToolPool;
  catalogs(): CatalogCache;
  /** Replaces the MCP part of the pool (stage 3); the catalog and its ETag follow. */
  setMcpTools(tools: readonly AnyTool[]): void;
  /** The configured MCP servers' connections (started in the background). */
  mcp: McpManager;
  /** Call statistics, Prometheus metrics, readiness. */
  observability: Observability;
  /** Pruning of old audit rows, executions and stored results (config.retention). */
  retention: Retention;
  /** Background Bash tasks (run_in_background); absent when bash.background.enabled is false. */
  tasks: BackgroundTasks | undefined;
  /** Set when a graceful shutdown begins: new requests get 503. */
  closing: boolean;
  close(): Promise<void>;
}

/** How long after start-up the WAL checkpointer's worker starts. */
const CHECKPOINTER_START_MS = 1000;

/** How often the memory of denied files drops the rows of files deleted since, between walks. */
const DENIED_PRUNE_MS = 60_000;

export function createServices(opts: ServiceOptions): Services {
  const { config } = opts;
  const problems = configProblems(config);
  if (problems.length > 0) throw new ToolexecError('TOOLEXEC_ERR_CONFIG_INVALID', `invalid configuration: ${problems[0]}`);
  const log = opts.logger ?? pino({ level: config.logging.level });
  const env = opts.env ?? process.env;
  const dbPath = config.storage.path === ':memory:' ? ':memory:' : path.resolve(config.storage.path);
  const workspace = new Workspace(
    config.workspace.root,
    [...config.workspace.additionalDirectories, ...config.permissions.additionalDirectories],
    {
      serviceFiles: { config: opts.configFiles, database: dbPath },
      // Hooks and stdio MCP servers run with the service's rights: changing their scripts asks a person.
      runScripts: scriptsRunByService(config.hooks, config.mcpServers, realpathLoose(config.workspace.root)),
    },
  );
  // One service per database file (storage/lock.ts), taken before anything reads or changes it.
  makeDatabaseDir(dbPath);
  const dbLock = dbPath === ':memory:' ? undefined : lockDatabase(dbPath);
  let db: Db;
  try {
    db = openDatabase({ path: dbPath });
  } catch (e) {
    dbLock?.release();
    throw e;
  }
  const writer = new GroupCommitWriter(db);
  // Its worker starts once the service is up, not while it gets ready (checkpointer.ts startAfterMs).
  const checkpointer = dbPath === ':memory:' ? undefined : new Checkpointer(db, dbPath, writer, { startAfterMs: CHECKPOINTER_START_MS });
  // Tool output is masked before it is stored or answered: a command that prints a token (`ps e`, a file holding one) hands it to nobody.
  const results = new ResultStore(db, outputMasker(config, env));
  const executions = new ExecutionLog(db, writer, (id, e) => log.error({ err: e, execution_id: id }, 'could not write an execution row'));
  const audit = new AuditLog(db, writer);
  const interrupted = executions.recoverInterrupted();
  if (interrupted.length > 0) log.warn({ count: interrupted.length }, 'calls left unfinished by a previous process were marked cancelled');
  const allowBypass = config.permissions.allowBypass && config.permissions.disableBypassPermissionsMode !== 'disable';
  const sessions = new SessionStore(
    db,
    writer,
    { mode: config.permissions.defaultMode, cwd: workspace.root, allowBypass },
    (id, after, limit) => executions.toolUsesOf(id, after, limit),
    undefined,
    undefined,
    (id) => executions.heldOf(id),
    results.mask,
  );

  const ruleInputs: RuleInput[] = [
    ...config.permissions.deny.map((raw) => ({ raw, behavior: 'deny' as const, source: 'config' as const })),
    ...config.permissions.ask.map((raw) => ({ raw, behavior: 'ask' as const, source: 'config' as const })),
    ...config.permissions.allow.map((raw) => ({ raw, behavior: 'allow' as const, source: 'config' as const })),
    ...(opts.rules ?? []),
  ];
  const compiled = compileRules(ruleInputs);
  for (const e of compiled.errors) log.warn({ rule: e.raw, source: e.source, error: e.error }, 'permission rule ignored');
  const pathBase = { root: workspace.root, cwd: workspace.root, home: workspace.home, caseInsensitive: workspace.caseInsensitive };
  // The denied files met by identity by an earlier process: one that lost its denied name then is still known.
  const deniedFiles = new SqliteDeniedFiles(db).load(undefined, (e) => log.error({ err: e }, 'could not record a denied file met by identity'), {
    pinLimit: defaultPinLimit(),
    warn: (event, detail) =>
      log.warn(
        detail,
        event === 'nearly_full'
          ? 'the memory of denied files met by identity is 80% full: past its limit, files born before the next denied file met ask (see toolexec denied-memory)'
          : 'a denied file could not be remembered by identity (the memory is full): files born no later than it now ask; see toolexec denied-memory',
      ),
  });
  const ruleStore = new RuleStore(db, ruleInputs, pathBase, deniedFiles);
  // Walks prune the rows their rules made too; this frees a deleted denied file's blocks when none runs, and drops the
  // rows no walk's rules made any more (denied-memory.ts, Pruning).
  const pruneDenied = setInterval(() => deniedFiles.prune(), DENIED_PRUNE_MS);
  pruneDenied.unref();

  // Bash and hooks get neither the tokens nor the credentials the
  // configuration's headers name; configured MCP servers (and the ${VAR}
  // expansion of their settings) may need the latter, so they get those.
  const tokens = config.server.tokens.map((t) => t.token);
  const fromEnv = envToken(opts.env);
  if (fromEnv) tokens.push(fromEnv);
  const childEnv = childEnvironment(env, configSecrets(config, env), config.server.redact);
  const mcpEnv = childEnvironment(env, tokens, config.server.redact);
  // What third parties (MCP servers, hooks, the classifier) echo back reaches responses through this.
  const maskSecrets = secretMasker(config, env);

  const hooks =
    opts.hookRunner ??
    new ConfiguredHookRunner({
      hooks: config.hooks,
      disableAll: config.disableAllHooks,
      projectDir: workspace.root,
      childEnv,
      log,
      env,
      ifMatcher: ruleIfMatcher(workspace),
      mask: maskSecrets,
    });
  const classifier =
    opts.classifier ?? (config.classifier ? new HttpClassifier({ url: config.classifier.url, timeoutMs: config.classifier.timeoutMs, headers: config.classifier.headers, mask: maskSecrets }) : undefined);

  const releaseSpawner = config.execution.spawner === 'helper' ? acquireSpawnHelper() : undefined;
  const { enabled: backgroundEnabled, ...backgroundLimits } = config.bash.background;
  const tasks = backgroundEnabled ? new BackgroundTasks(backgroundLimits, log) : undefined;
  // Without background tasks, their tools have nothing to read or stop.
  const features = backgroundEnabled ? config.features : { TaskOutput: false, TaskStop: false, ...config.features };
  const builtins = [...(opts.builtins ?? builtinTools()), ...(opts.extraTools ?? [])];
  let mcpTools: readonly AnyTool[] = opts.mcpTools ?? [];
  const logProblems = (p: ToolPool): void => {
    for (const problem of p.problems) log.warn({ problem }, problem.message);
  };
  let pool = new ToolPool({ builtins, features, rules: ruleStore.global, mcpTools });
  let catalogs = new CatalogCache(pool);
  const rebuildPool = (): void => {
    pool = new ToolPool({ builtins, features, rules: ruleStore.global, mcpTools });
    catalogs = new CatalogCache(pool);
    logProblems(pool);
  };
  ruleStore.onGlobalChange = rebuildPool;
  logProblems(pool);

  const registry = new ExecutionRegistry();
  const broker = new ApprovalBroker(db, ruleStore, {
    headless: config.permissions.headless,
    askTimeoutMs: config.permissions.askTimeoutMs,
    workspace,
    log,
    cwdOf: (id) => sessions.find(id)?.cwd ?? workspace.root,
    mask: results.mask,
  });
  const rateLimit = config.server.rateLimit;
  const hub = new WsHub(registry, broker, log, {
    ...DEFAULT_HUB_OPTIONS,
    frameLimit: rateLimit ? { max: rateLimit.max, windowMs: rateLimit.timeWindowMs } : undefined,
    ...(opts.ws ?? {}),
  });
  const deps: PipelineDeps = {
    pool: () => pool,
    rulesFor: (s: Session) => ruleStore.forSession(s.id, s.mode === 'auto'),
    hooks,
    approvals: opts.approvals ?? broker,
    classifier,
    executions,
    audit,
    results,
    workspace,
    childEnv,
    persistThresholdChars: config.results.persistThresholdChars,
    previewChars: config.results.previewChars,
    log,
    observer: registry,
    config,
    tasks,
    rememberRule: (r) => ruleStore.remember(r),
  };
  const executor = new Executor({
    deps,
    registry,
    maxConcurrency: config.execution.maxConcurrency,
    maxInFlight: config.server.maxInFlightCalls,
    waiting: { count: () => broker.pendingCount, max: config.server.maxWaitingCalls },
  });

  const staticMcpTools = opts.mcpTools ?? [];
  // The callback runs only after start(), once `services` exists.
  const mcp: McpManager = new McpManager({
    servers: config.mcpServers,
    log,
    childEnv: mcpEnv,
    cwd: workspace.root,
    mask: maskSecrets,
    ...opts.mcp,
    onToolsChanged: (tools) => services.setMcpTools([...staticMcpTools, ...tools]),
  });
  const observability = new Observability({
    db,
    writer,
    registry,
    log,
    pendingPermissionRequests: () => broker.pendingCount,
    websocketConnections: () => hub.connections,
    backgroundTasks: () => tasks?.running ?? 0,
    deniedFiles: () => ({ remembered: deniedFiles.size, limit: deniedFiles.limit, overflowed: deniedFiles.overflowed, held: deniedFiles.pinnedFiles }),
    mcp,
    requiredMcpServers: Object.keys(config.mcpServers).filter((name) => config.mcpServers[name]!.required === true),
    ...opts.observability,
  });
  const retention = new Retention(db, { ...config.retention, isLive: (id) => registry.get(id) !== undefined, log });
  const services: Services = {
    config,
    log,
    db,
    writer,
    workspace,
    results,
    executions,
    audit,
    sessions,
    registry,
    executor,
    hooks,
    deps,
    rules: ruleStore,
    deniedFiles,
    ruleErrors: compiled.errors,
    broker,
    hub,
    pool: () => pool,
    catalogs: () => catalogs,
    setMcpTools(tools) {
      mcpTools = tools;
      rebuildPool();
    },
    mcp,
    observability,
    retention,
    tasks,
    closing: false,
    async close() {
      hub.close();
      hooks.close?.();
      await tasks?.close();
      releaseSpawner?.();
      broker.cancelAll();
      await mcp.close();
      observability.close();
      await retention.stop();
      clearInterval(pruneDenied);
      deniedFiles.close();
      writer.flushNow();
      await checkpointer?.stop();
      db.close();
      dbLock?.release();
    },
  };
  mcp.start();
  retention.start();
  return services;
}
