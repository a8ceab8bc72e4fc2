/**
 * Helpers for the Bash tests: a real rule index, workspace and session for
 * calling the Bash permission check directly, and process checks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import { initBashParser } from '../src/bash/parser.js';
import type { PermissionMode } from '../src/config/schema.js';
import { checkBashPermission, type BashPermissionContext } from '../src/permissions/bash-rules.js';
import { DeniedFileMemory } from '../src/permissions/denied-memory.js';
import { SessionPermissionQuery } from '../src/permissions/query.js';
import { compileRules, RuleIndex, type RuleInput } from '../src/permissions/rule-index.js';
import { Session } from '../src/sessions/session.js';
import type { PermissionResult } from '../src/tool/types.js';
import { Workspace } from '../src/workspace.js';
import { cleanupTmp, makeApp, tmpDir, type TestApp } from './helpers.js';

/** Permissions in bypassPermissions mode (allowed to be). */
export const BYPASS = { defaultMode: 'bypassPermissions' as const, allowBypass: true };

export interface RuleEnvOptions {
  allow?: string[];
  deny?: string[];
  ask?: string[];
  mode?: PermissionMode;
  /** The denied files met by identity (the service's is loaded from its database); a fresh one when not given. */
  deniedFiles?: DeniedFileMemory;
}

export interface RuleEnv {
  ws: string;
  ctx: BashPermissionContext;
  /** The rule index the checks use (kept between them, as the service keeps a session's). */
  index: RuleIndex;
  check(command: string): Promise<PermissionResult>;
}

/** A workspace in a temp dir with these rules, and the Bash check bound to it. */
export function ruleEnv(opts: RuleEnvOptions = {}): RuleEnv {
  const ws = path.join(tmpDir('toolexec-bash-rules-'), 'ws');
  fs.mkdirSync(ws);
  const workspace = new Workspace(ws);
  const inputs: RuleInput[] = [
    ...(opts.deny ?? []).map((raw) => ({ raw, behavior: 'deny' as const, source: 'config' as const })),
    ...(opts.ask ?? []).map((raw) => ({ raw, behavior: 'ask' as const, source: 'config' as const })),
    ...(opts.allow ?? []).map((raw) => ({ raw, behavior: 'allow' as const, source: 'config' as const })),
  ];
  const { rules, errors } = compileRules(inputs);
  if (errors.length > 0) throw new Error(`bad rules: ${JSON.stringify(errors)}`);
  const index = new RuleIndex(rules, { root: workspace.root, cwd: workspace.root, home: workspace.home, caseInsensitive: workspace.caseInsensitive }, opts.deniedFiles);
  const mode = opts.mode ?? 'default';
  const session = new Session({ id: 's', mode, cwd: workspace.root, todos: [], created_at: 0, updated_at: 0 }, () => {});
  const ctx: BashPermissionContext = { permissions: new SessionPermissionQuery(index, mode, workspace), workspace, session };
  return { ws: workspace.root, ctx, index, check: (command) => checkBashPermission(command, ctx) };
}

export { isAlive } from './helpers.js';

/** Polls until the condition holds or the attempts run out; returns the last value. */
export async function eventually(cond: () => boolean, attempts = 200, everyMs = 50): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return cond();
}

export function readPid(file: string): number {
  return Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
}

/** The lifecycle of a Bash test file: the bash parser loaded before the tests, the temporary directories removed at the end. */
export function bashTests(): void {
  beforeAll(async () => {
    await initBashParser();
  });
  afterAll(cleanupTmp);
}

/**
 * The lifecycle of a Bash test file that also runs the real service: the bash
 * parser loaded before the tests, the app a test opens closed after it (and
 * before another one the same test opens), the temporary directories removed
 * at the end. Returns the function that opens a test's app (makeApp's arguments).
 */
export function bashServiceTests(): (...args: Parameters<typeof makeApp>) => Promise<TestApp> {
  let open: TestApp | undefined;
  bashTests();
  afterEach(async () => {
    await open?.close();
    open = undefined;
  });
  return async (...args) => {
    await open?.close();
    open = undefined;
    return (open = await makeApp(...args));
  };
}

/**
 * A directory (src/p) laid out as a repository in ordinary files, whose config runs a program
 * (core.fsmonitor prints .env) on `git status`: a repository git obeys when pointed at it.
 */
export function plantRepository(ws: string): void {
  const p = path.join(ws, 'src', 'p');
  fs.mkdirSync(path.join(p, 'objects'), { recursive: true });
  fs.mkdirSync(path.join(p, 'refs'));
  fs.writeFileSync(path.join(p, 'HEAD'), 'ref: refs/heads/master\n');
  fs.writeFileSync(path.join(p, 'config'), '[core]\n\tfsmonitor = cat .env >&2; echo\n');
}

/** A time to set directories' mtime back to, so that what a test changes later moves it. */
export const HOUR_AGO = new Date(Date.now() - 3_600_000);

/**
 * Past the second within which a directory's listing is not trusted: setting mtime back an hour moves
 * ctime to now, and the kept listings go by ctime too (`touch -r` sets mtime back, never ctime).
 */
export const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1_100));

/** `parent/d0`…`parent/d{n-1}` under `ws`, each with a file `name` holding `text`; returns ws, parent and the d's. */
export function plantDirs(ws: string, parent: string, n: number, name: string, text: string): string[] {
  const dirs = [ws, path.join(ws, parent)];
  for (let i = 0; i < n; i++) {
    const d = path.join(ws, parent, `d${i}`);
    fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(d, name), text);
    dirs.push(d);
  }
  return dirs;
}

/** Sets the directories' mtime back an hour and waits past the second within which their listings are not kept. */
export async function settleDirs(dirs: readonly string[]): Promise<void> {
  for (const d of dirs) fs.utimesSync(d, HOUR_AGO, HOUR_AGO);
  await settle();
}

/** Directory reads from now on, by directory (the real fs.readdirSync, called through); vi.restoreAllMocks() ends it. */
export function countListings(): { readonly n: number; of(dir: string): number } {
  const spy = vi.spyOn(fs, 'readdirSync');
  return {
    get n() {
      return spy.mock.calls.length;
    },
    of: (dir) => spy.mock.calls.filter((c) => c[0] === dir).length,
  };
}
