/**
 * The service built in-process for `tools` and `check` without --url: the
 * same app a running service would be, on a throw-away database, so that
 * what they print is what GET /tools and POST /permissions/check would
 * answer. The configured database is only read: the rules an approver
 * remembered and the sessions' modes are copied from it into the temporary
 * one (opened read-only, so a running service is never disturbed).
 *
 * With tokens configured (server.tokens, TOOLEXEC_TOKEN) the in-process app
 * authenticates as a running service does. Its requests carry a token made
 * for this run alone and added to its configuration: the user's tokens are
 * never copied into a request (nor printed), a configured token that lacks
 * the route's scope does not matter, and auth stays on, so the service keeps
 * treating the configured tokens as secrets (log masking, child environments).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import type { Loaded } from '../config/load.js';
import type { Scope } from '../config/schema.js';
import { openDatabase } from '../storage/db.js';
import { ruleWarnings } from './rule-warnings.js';
import { requireWorkspace } from './config.js';
import { CliError, EXIT_USAGE, oneLine, warn, type CliIO } from './io.js';

/** Tables whose rows change a permission decision: remembered rules and session modes. */
const DECISION_TABLES = ['rules', 'sessions'] as const;

/** The scopes the commands' routes need: GET /tools (execute), POST /permissions/check (read). */
const LOCAL_SCOPES: Scope[] = ['execute', 'read'];

/** The bearer token each in-process app accepts from this process. */
const localTokens = new WeakMap<FastifyInstance, string>();

export interface LocalOptions {
  /** Connect the configured MCP servers and wait for them (their tools join the pool). */
  mcp: boolean;
  /** How long to wait for MCP servers to connect. */
  mcpWaitMs: number;
}

export interface LocalApp {
  app: FastifyInstance;
  close(): Promise<void>;
}

/** The configured database and SQLite's files beside it: the local run works on a copy, and no tool may read the original either. */
function databaseFiles(file: string): string[] {
  if (file === ':memory:') return [];
  const db = path.resolve(file);
  return [db, `${db}-wal`, `${db}-shm`, `${db}-journal`];
}

function columns(db: Database.Database, table: string): string[] {
  return (db.pragma(`table_info(${table})`) as Array<{ name: string }>).map((c) => c.name);
}

/**
 * Opens the configured database for reading without leaving a trace: while
 * a service has it open (its -wal and -shm files exist) as one more reader;
 * otherwise a copy, since even a read-only connection to a WAL database
 * creates -wal and -shm files, which would then belong to whoever ran the
 * command (root, say, in the service's container).
 */
function openForReading(file: string, scratch: string): Database.Database {
  if (fs.existsSync(`${file}-wal`) && fs.existsSync(`${file}-shm`)) return new Database(file, { readonly: true, fileMustExist: true });
  const copy = path.join(scratch, 'configured-copy.db');
  fs.copyFileSync(file, copy);
  if (fs.existsSync(`${file}-wal`)) fs.copyFileSync(`${file}-wal`, `${copy}-wal`);
  return new Database(copy, { fileMustExist: true });
}

/** Copies the decision tables from the configured database; warns (never fails) when it cannot. */
function copyDecisionState(from: string, to: string, scratch: string, io: CliIO): void {
  if (from === ':memory:' || !fs.existsSync(from)) return;
  let src: Database.Database | undefined;
  const dst = openDatabase({ path: to });
  try {
    src = openForReading(from, scratch);
    for (const table of DECISION_TABLES) {
      if (!src.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table)) continue;
      const have = new Set(columns(dst, table));
      const cols = columns(src, table).filter((c) => have.has(c));
      if (cols.length === 0) continue;
      const list = cols.map((c) => `"${c}"`).join(', ');
      const rows = src.prepare(`SELECT ${list} FROM ${table}`).raw().all() as unknown[][];
      const insert = dst.prepare(`INSERT OR REPLACE INTO ${table} (${list}) VALUES (${cols.map(() => '?').join(', ')})`);
      dst.transaction(() => {
        for (const r of rows) insert.run(...r);
      })();
    }
  } catch (e) {
    warn(io, `remembered rules and session modes were not read from ${from}: ${(e as Error).message}`);
  } finally {
    src?.close();
    dst.close();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function openLocalApp(loaded: Loaded, io: CliIO, opts: LocalOptions): Promise<LocalApp> {
  requireWorkspace(loaded);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-cli-'));
  const dbPath = path.join(tmp, 'toolexec.db');
  const cleanup = (): void => fs.rmSync(tmp, { recursive: true, force: true });
  copyDecisionState(loaded.config.storage.path, dbPath, tmp, io);
  const token = randomBytes(32).toString('base64url');
  const config = {
    ...loaded.config,
    server: { ...loaded.config.server, tokens: [...loaded.config.server.tokens, { name: 'toolexec-cli', token, scopes: LOCAL_SCOPES }] },
    storage: { ...loaded.config.storage, path: dbPath },
    mcpServers: opts.mcp ? loaded.config.mcpServers : {},
    logging: { level: 'silent' as const },
  };
  let app: FastifyInstance;
  try {
    // Imported here: `toolexec health` and the remote commands never load the service.
    const { buildApp } = await import('../app.js');
    app = await buildApp({ config, rules: loaded.rules, configFiles: [...loaded.files, ...databaseFiles(loaded.config.storage.path)], logger: false, env: io.env });
  } catch (e) {
    cleanup();
    throw new CliError(`cannot build the service from this configuration: ${oneLine((e as Error).message)}`, EXIT_USAGE);
  }
  localTokens.set(app, token);
  const svc = app.toolexec;
  for (const w of ruleWarnings(svc, Object.keys(loaded.config.mcpServers))) warn(io, w);

  const servers = Object.keys(config.mcpServers);
  if (servers.length > 0) {
    const deadline = Date.now() + opts.mcpWaitMs;
    while (Date.now() < deadline && svc.mcp.status().some((s) => s.state === 'connecting')) await sleep(25);
    for (const s of svc.mcp.status()) {
      if (s.state !== 'connected') {
        warn(io, `MCP server "${s.name}" is ${s.state}${s.last_error ? ` (${s.last_error})` : ''}: its tools are missing here`);
      }
    }
  } else if (!opts.mcp && Object.keys(loaded.config.mcpServers).length > 0) {
    warn(io, `MCP servers not connected (--no-mcp): ${Object.keys(loaded.config.mcpServers).join(', ')}`);
  }
  for (const p of svc.pool().problems) warn(io, p.message);
  return {
    app,
    async close() {
      try {
        await app.close();
      } finally {
        cleanup();
      }
    },
  };
}

/** A request to the in-process app, answered like a running service would. */
export async function injectJson<T>(app: FastifyInstance, method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; body: T }> {
  const token = localTokens.get(app);
  const res = await app.inject({
    method,
    url,
    ...(token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } }),
    ...(body === undefined ? {} : { payload: body as object }),
  });
  return { status: res.statusCode, body: (res.body.length > 0 ? res.json() : undefined) as T };
}
