/**
 * The Bash tool's permission check (Claude Code's bashPermissions), on the
 * analysis of src/bash: every simple command of a compound command is
 * judged, including those inside `$( )`, backticks, process substitutions,
 * subshells, groups, function bodies, `bash -c '…'` and what xargs or
 * `find -exec` run.
 *
 *   1. deny rules, on every subcommand (all wrappers and `VAR=` stripped) and
 *      on the raw command → deny
 *   2. paths: a file read that a Read deny rule covers, or written (argument
 *      of rm/mv/cp/tee/…, output redirection) that an Edit deny rule covers
 *      → deny
 *   3. ask rules → ask (type rule: holds even in bypassPermissions)
 *   4. writes to protected paths → ask (safety)
 *   5. a command that cannot be modelled → ask (type tool, never allow)
 *   6. reads or writes outside the working directories → ask (working_dir);
 *      a write to a file whose name is an expansion → ask; more than one
 *      `cd`, or `cd` with `git` → ask
 *   7. every subcommand allowed — by an allow rule, as read-only (paths not
 *      Read-denied, no output into files), or in acceptEdits as
 *      mkdir/touch/rm/rmdir/mv/cp/sed inside the working directories
 *      → allow
 *   7. otherwise passthrough (the engine asks)
 */
import path from 'node:path';
import { analyseBash, analyseBashSync } from '../bash/parser.js';
import { ACCEPT_EDITS_COMMANDS, commandName, pathArgs } from '../bash/paths.js';
import { isHarmlessOutput, isReadOnlyCommand } from '../bash/read-only.js';
import { allowCandidates, compileBashRule, denyCandidates, type CompiledBashRule } from '../bash/rule-match.js';
import type { BashAnalysis, SimpleCommand, Word } from '../bash/types.js';
import { SAFE_ENV_VARS, unwrapStages } from '../bash/wrappers.js';
import type { ReasonType } from './types.js';
import type { PermissionResult, ToolContext, ToolInput } from '../tool/types.js';
import { expandHome } from '../workspace.js';
import { protectedPathReason } from './filesystem.js';
import { messages } from './messages.js';
import { parseRule } from './rule-parser.js';
import type { PermissionRule } from './types.js';

export type BashPermissionContext = Pick<ToolContext, 'permissions' | 'workspace' | 'session'>;

const compiled = new WeakMap<PermissionRule, CompiledBashRule>();

function matcherOf(rule: PermissionRule): CompiledBashRule {
  let m = compiled.get(rule);
  if (!m) {
    m = compileBashRule(rule.content ?? '');
    compiled.set(rule, m);
  }
  return m;
}

function short(s: string, max = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

/** The innermost command (every wrapper stripped). */
function innermostArgv(cmd: SimpleCommand): Word[] {
  const { stages } = unwrapStages(cmd.argv, false);
  return stages[stages.length - 1]!;
}

interface PathUse {
  word: Word;
  kind: 'read' | 'write';
  /** One absolute path per possible working directory; undefined when the name is not known. */
  abs: string[] | undefined;
  /** Found by the lexical fallback: used for deny rules only. */
  fallback: boolean;
}

interface Cwds {
  dirs: string[];
  unknown: boolean;
  cdCount: number;
}

function resolveWord(w: Word, cwd: string): string | undefined {
  if (!w.literal) return undefined;
  let v = w.value;
  if (v.length === 0) return undefined;
  if (w.tilde) {
    if (v !== '~' && !v.startsWith('~/')) return undefined;
    v = expandHome(v);
  }
  if (w.glob) {
    // The directory part before the first pattern character: what the pattern can reach.
    const at = v.search(/[*?[]/);
    const head = v.slice(0, at);
    v = head.endsWith('/') ? head : path.dirname(head || '.');
  }
  return path.resolve(cwd, v);
}

function workingDirs(a: BashAnalysis, ctx: BashPermissionContext): Cwds {
  const out: Cwds = { dirs: [ctx.session.cwd], unknown: false, cdCount: 0 };
  for (const cmd of a.commands) {
    const argv = innermostArgv(cmd);
    const name = commandName(argv);
    if (name === 'cd' || name === 'pushd' || name === 'popd') {
      out.cdCount++;
      if (name === 'popd') {
        out.unknown = true;
        continue;
      }
      const t = pathArgs(argv).reads[0];
      if (!t) out.dirs.push(ctx.workspace.home);
      else if (t.literal && !t.glob && t.value !== '-') {
        const r = resolveWord(t, ctx.session.cwd);
        if (r) out.dirs.push(r);
        else out.unknown = true;
      } else out.unknown = true;
    }
  }
  return out;
}

/** Devices a command may read or write without touching a file. */
const DEVICES: ReadonlySet<string> = new Set(['/dev/null', '/dev/stdin', '/dev/stdout', '/dev/stderr', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/fd/0', '/dev/fd/1', '/dev/fd/2', '-']);

function pathUses(a: BashAnalysis, cwds: Cwds): PathUse[] {
  const uses: PathUse[] = [];
  const add = (word: Word, kind: 'read' | 'write', fallback = false): void => {
    if (word.literal && !word.glob && DEVICES.has(word.value)) return;
    const relative = word.literal && !word.tilde && !word.value.startsWith('/');
    let abs: string[] | undefined;
    if (!(relative && cwds.unknown)) {
      const list = relative ? cwds.dirs.map((d) => resolveWord(word, d)) : [resolveWord(word, cwds.dirs[0]!)];
      abs = list.every((x) => x !== undefined) ? [...new Set(list as string[])] : undefined;
    }
    uses.push({ word, kind, abs, fallback });
  };
  for (const cmd of a.commands) {
    const p = pathArgs(innermostArgv(cmd));
    const fb = cmd.origin === 'fallback';
    for (const w of p.reads) add(w, 'read', fb);
    for (const w of p.writes) add(w, 'write', fb);
  }
  for (const r of a.redirects) {
    if (r.kind !== 'file' || !r.target) continue;
    add(r.target, r.output ? 'write' : 'read');
  }
  return uses;
}

function spellings(abs: string, ctx: BashPermissionContext): string[] {
  const canonical = ctx.workspace.canonical(abs);
  return canonical === abs ? [abs] : [canonical, abs];
}

function isReadDenyActive(ctx: BashPermissionContext): boolean {
  return ctx.permissions.contentRules('Read', 'deny').length > 0 || ctx.permissions.isReadDenied(ctx.workspace.root);
}

/** Whether a read-only subcommand's reads can be shown not to touch Read-denied files. */
function readsProvablyAllowed(cmd: SimpleCommand, readDenyActive: boolean): boolean {
  if (!readDenyActive) return true;
  const p = pathArgs(innermostArgv(cmd));
  if (p.recursive) return false;
  return p.reads.every((w) => w.literal && !w.glob);
}

function acceptEditsAllows(cmd: SimpleCommand): boolean {
  if (!cmd.assignments.every((a) => SAFE_ENV_VARS.has(a.name))) return false;
  const { stages } = unwrapStages(cmd.argv, true);
  const argv = stages[stages.length - 1]!;
  const name = commandName(argv);
  if (name === undefined || !ACCEPT_EDITS_COMMANDS.has(name)) return false;
  const p = pathArgs(argv);
  return [...p.reads, ...p.writes].every((w) => w.literal);
}

/** The decision for an analysed command. */
export function decideBashPermission(command: string, a: BashAnalysis, ctx: BashPermissionContext): PermissionResult {
  const q = ctx.permissions;
  const denyRules = q.contentRules('Bash', 'deny');
  const askRules = q.contentRules('Bash', 'ask');
  const allowRules = q.contentRules('Bash', 'allow');
  const perCommand = a.commands.map((c) => ({ cmd: c, deny: denyCandidates(c) }));

  // 1. Deny rules: the raw text, then every subcommand in every spelling.
  const raw = command.trim();
  for (const r of denyRules) {
    const m = matcherOf(r);
    const hit = m.test(raw) ? raw : perCommand.find((p) => p.deny.some((c) => m.test(c)))?.cmd.text;
    if (hit !== undefined) {
      return { behavior: 'deny', message: `Permission to use Bash with command ${short(hit)} has been denied.`, type: 'rule', detail: r.raw };
    }
  }

  // 2. Files read or written that Read or Edit deny rules cover.
  const cwds = workingDirs(a, ctx);
  const uses = pathUses(a, cwds);
  for (const u of uses) {
    for (const abs of u.abs ?? []) {
      const all = spellings(abs, ctx);
      if (u.kind === 'read') {
        const rule = q.pathRule('read', 'deny', all);
        if (rule || q.isReadDenied(abs)) {
          return { behavior: 'deny', message: `Permission to read ${abs} has been denied.`, type: 'rule', detail: rule?.raw ?? 'Read' };
        }
      } else {
        const rule = q.pathRule('edit', 'deny', all);
        if (rule) return { behavior: 'deny', message: `Permission to write ${abs} has been denied.`, type: 'rule', detail: rule.raw };
      }
    }
  }

  // 3. Ask rules.
  const askHit = askRules.find((r) => {
    const m = matcherOf(r);
    return m.test(raw) || perCommand.some((p) => p.deny.some((c) => m.test(c)));
  });
  if (askHit) {
    return { behavior: 'ask', message: `${messages.notGranted('Bash')} (the rule ${askHit.raw} asks for approval)`, type: 'rule', detail: askHit.raw };
  }

  // 4. Writes to protected files that the analysis found (bypass-immune).
  const modelled = uses.filter((u) => !u.fallback);
  for (const u of modelled) {
    if (u.kind !== 'write') continue;
    for (const abs of u.abs ?? []) {
      const why = spellings(abs, ctx).map(protectedPathReason).find((x) => x !== undefined);
      if (why) {
        return { behavior: 'ask', message: `Bash wants to modify ${abs}: ${why}, which always needs a person's approval.`, type: 'safety', detail: why };
      }
    }
  }

  // 5. A command that cannot be modelled is never allowed by its content. When
  // Bash deny or ask rules exist, it is not allowed by a whole-tool allow rule,
  // a hook's allow or bypassPermissions either (what an expansion hides could be
  // what they forbid), so the ask is a safety one; without such rules, as in
  // Claude Code, those may allow it.
  const unverifiable: ReasonType = denyRules.length > 0 || askRules.length > 0 ? 'safety' : 'tool';
  if (a.tooComplex !== undefined) {
    return {
      behavior: 'ask',
      message: `This Bash command cannot be checked safely (${a.tooComplex}); it needs approval.`,
      type: unverifiable,
      detail: `too complex: ${a.tooComplex}`,
    };
  }
  for (const u of modelled) {
    for (const abs of u.abs ?? []) {
      if (!ctx.workspace.contains(abs)) {
        return {
          behavior: 'ask',
          message: `Bash wants to ${u.kind === 'read' ? 'access' : 'modify'} ${abs}, which is outside the working directories (${ctx.workspace.roots.join(', ')}).`,
          type: 'working_dir',
          detail: abs,
        };
      }
    }
  }

  // 6. Files whose names are not known, cd.
  const unknownWrite = modelled.find((u) => u.kind === 'write' && !u.abs);
  if (unknownWrite) {
    const shown = short(unknownWrite.word.raw, 80);
    return {
      behavior: 'ask',
      message: `This Bash command writes to ${shown}, whose location cannot be known before it runs; it needs approval.`,
      type: unverifiable,
      detail: `unknown write target: ${shown}`,
    };
  }
  if (cwds.cdCount > 1) {
    return { behavior: 'ask', message: 'This Bash command changes directory more than once; it needs approval.', type: 'tool', detail: 'more than one cd' };
  }
  if (cwds.cdCount === 1 && a.commands.some((c) => commandName(innermostArgv(c)) === 'git')) {
    return { behavior: 'ask', message: 'This Bash command combines cd with git; it needs approval.', type: 'tool', detail: 'cd with git' };
  }

  // 7. Every subcommand allowed.
  if (a.commands.length === 0) return { behavior: 'passthrough' };
  const readDenyActive = isReadDenyActive(ctx);
  const byRule: string[] = [];
  let byMode = false;
  for (const { cmd } of perCommand) {
    const cands = allowCandidates(cmd);
    const rule = allowRules.find((r) => {
      const m = matcherOf(r);
      return cands.canonical.some((c) => m.test(c)) || (m.kind === 'exact' && cands.exactOnly.some((c) => m.test(c)));
    });
    if (rule) {
      if (!byRule.includes(rule.raw)) byRule.push(rule.raw);
      continue;
    }
    const readOnly = isReadOnlyCommand(cmd) && readsProvablyAllowed(cmd, readDenyActive);
    if (readOnly && cmd.redirects.every(isHarmlessOutput)) continue;
    // Output redirections that reach this point name files inside the working directories.
    if (q.mode === 'acceptEdits' && (readOnly || acceptEditsAllows(cmd))) {
      byMode = true;
      continue;
    }
    return { behavior: 'passthrough', message: `Permission to use Bash with command ${short(cmd.text)} was requested, but it hasn't been granted yet.` };
  }
  if (byRule.length > 0) return { behavior: 'allow', type: 'rule', detail: byRule.join(', ') };
  if (byMode) return { behavior: 'allow', type: 'mode', detail: 'acceptEdits: file commands inside the working directories' };
  return { behavior: 'allow', type: 'tool', detail: 'Read-only command is allowed' };
}

export async function checkBashPermission(command: string, ctx: BashPermissionContext): Promise<PermissionResult> {
  return decideBashPermission(command, await analyseBash(command), ctx);
}

/**
 * A hook's `if` condition (`Bash(git *)`) for a command: true when any
 * subcommand matches, and when the command cannot be analysed (the hook
 * runs rather than being skipped).
 */
export function bashIfMatches(ruleContent: string | undefined, command: string): boolean {
  if (ruleContent === undefined) return true;
  const a = analyseBashSync(command);
  if (!a || a.tooComplex !== undefined) return true;
  const m = compileBashRule(ruleContent);
  if (m.test(command.trim())) return true;
  return a.commands.some((c) => denyCandidates(c).some((x) => m.test(x)));
}

/**
 * An IfMatcher (hooks/runner.ts) that understands Bash rule contents; for
 * other tools it compares the tool name and runs on any content.
 */
export function bashAwareIfMatcher(rule: string, toolName: string, input: ToolInput): boolean {
  const p = parseRule(rule);
  if ('error' in p) return true;
  if (p.toolName !== toolName) return false;
  if (toolName !== 'Bash') return true;
  const command = typeof input.command === 'string' ? input.command : undefined;
  return command === undefined ? true : bashIfMatches(p.content, command);
}
