/**
 * One Bash permission decision's look at the file system and at its
 * commands. The check (permissions/bash-rules.ts) asks the same questions of
 * the same paths many times in one decision: every spelling of every path is
 * canonicalised for the deny rules, again for the ask rules, the working
 * directories and the hard-link check, and git's start directories are
 * walked up for a planted repository twice. `cd src && ls -la foo bar && cat
 * x/y.txt > out.txt` cost 57 realpath calls (20 of the workspace root) and 40
 * stat or lstat calls; asked once each, 17 calls in all. Each of its steps
 * also strips every command's wrappers again (innermostOf, commandPaths).
 * Inside `withDecisionMemo(fn)` each distinct question (and each result built
 * on them: realpathLoose, resolveTarget, a command's innermost form and
 * paths) is answered once; outside one, every call computes afresh.
 *
 * Nothing is kept between decisions: the scope ends when `fn` returns, so a
 * link swapped between two decisions is seen by the second, as before. Within
 * one decision the answers are those of the moment each was first asked: a
 * change made while the (synchronous) decision runs could already land
 * between two of its checks, so no check relied on asking twice.
 *
 * A scope rather than a parameter: the questions are asked deep below
 * Workspace.canonical and the bash-paths/bash-git helpers, which other
 * callers use unscoped; `fn` is synchronous, so nothing else runs while the
 * scope is open.
 */
import fs from 'node:fs';

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

interface Scope {
  /** Per kind of question, by path. */
  byPath: Map<string, Map<string, Outcome>>;
  /** Per kind of question, by the object asked about (a command of the analysis). */
  byObject: Map<string, Map<object, unknown>>;
}

/** The open scope's answers; undefined outside a scope. */
let scope: Scope | undefined;

/** Runs `fn` (synchronous) with each question answered once; a nested call joins the open scope. */
export function withDecisionMemo<T>(fn: () => T): T {
  if (scope !== undefined) return fn();
  scope = { byPath: new Map(), byObject: new Map() };
  try {
    return fn();
  } finally {
    scope = undefined;
  }
}

/** `compute(key)`'s outcome (its value, or what it threw), once per open scope; computed afresh outside one. */
export function memoised<T>(kind: string, key: string, compute: (key: string) => T): T {
  if (scope === undefined) return compute(key);
  let table = scope.byPath.get(kind);
  if (table === undefined) scope.byPath.set(kind, (table = new Map()));
  const kept = table.get(key);
  if (kept !== undefined) {
    if (kept.ok) return kept.value as T;
    throw kept.error;
  }
  try {
    const value = compute(key);
    table.set(key, { ok: true, value });
    return value;
  } catch (error) {
    table.set(key, { ok: false, error });
    throw error;
  }
}

/**
 * Records `value` as the answer to `key` in the open scope unless one is there already (nothing
 * outside a scope): an answer that follows from others already given (workspace.ts realpathLoose seeds the
 * directories above a real path as real).
 */
export function memoSeed(kind: string, key: string, value: unknown): void {
  if (scope === undefined) return;
  let table = scope.byPath.get(kind);
  if (table === undefined) scope.byPath.set(kind, (table = new Map()));
  if (!table.has(key)) table.set(key, { ok: true, value });
}

/** The answer to `key` given in the open scope, if any (asks nothing itself). */
export function memoPeek(kind: string, key: string): { value: unknown } | undefined {
  const kept = scope?.byPath.get(kind)?.get(key);
  return kept?.ok ? { value: kept.value } : undefined;
}

/** `compute(of)` once per open scope for the object `of` (a pure function of it, which throws nothing); afresh outside one. */
export function memoisedFor<K extends object, T>(kind: string, of: K, compute: (of: K) => T): T {
  if (scope === undefined) return compute(of);
  let table = scope.byObject.get(kind);
  if (table === undefined) scope.byObject.set(kind, (table = new Map()));
  if (table.has(of)) return table.get(of) as T;
  const value = compute(of);
  table.set(of, value);
  return value;
}

// Named functions rather than closures: outside a scope (the file tools' checks) each call allocates nothing more.
const NO_THROW = { throwIfNoEntry: false } as const;
const realpathNow = (p: string): string => fs.realpathSync.native(p);
const lstatNow = (p: string): fs.Stats | undefined => fs.lstatSync(p, NO_THROW);
const readlinkNow = (p: string): string => fs.readlinkSync(p);
/** What lstat found, where it was asked first, is what stat finds unless it is a symbolic link (the parents are followed alike). */
const statNow = (p: string): fs.Stats | undefined => {
  const l = scope?.byPath.get('lstat')?.get(p);
  if (l?.ok && !(l.value as fs.Stats | undefined)?.isSymbolicLink()) return l.value as fs.Stats | undefined;
  return fs.statSync(p, NO_THROW);
};

/**
 * fs.realpathSync.native, fs.statSync, fs.lstatSync, fs.readlinkSync and fs.existsSync, answered once
 * per scope. stat and lstat answer undefined where nothing is (ENOENT) rather than throw: most paths
 * a command names that are missing are asked about three or four times, and an exception costs
 * ~5 µs, the call itself 1-2 (Node 20, measured).
 */
export const memoFs = {
  realpath: (p: string): string => memoised('realpath', p, realpathNow),
  stat: (p: string): fs.Stats | undefined => memoised('stat', p, statNow),
  lstat: (p: string): fs.Stats | undefined => memoised('lstat', p, lstatNow),
  readlink: (p: string): string => memoised('readlink', p, readlinkNow),
  /**
   * fs.existsSync, as the stat of the same path (one question for both: the walks up for a `.git`
   * ask one, repositoryFrom the other, of the same names).
   */
  exists: (p: string): boolean => {
    try {
      return memoFs.stat(p) !== undefined;
    } catch {
      return false;
    }
  },
  /**
   * The stat of a regular file (links followed) that has other names (hard links), or undefined: what
   * the checks for another name of a protected file or of the service's own start from.
   */
  multiplyLinked: (p: string): fs.Stats | undefined => {
    let st: fs.Stats | undefined;
    try {
      st = memoFs.stat(p);
    } catch {
      return undefined;
    }
    return st !== undefined && st.isFile() && st.nlink >= 2 ? st : undefined;
  },
  /** Whether a scope is open (answers are kept). */
  scoped: (): boolean => scope !== undefined,
  /** Whether an lstat of `p` in this scope found nothing there (or failed): asks nothing itself. */
  knownMissing: (p: string): boolean => {
    const l = scope?.byPath.get('lstat')?.get(p);
    return l !== undefined && (!l.ok || l.value === undefined);
  },
};
