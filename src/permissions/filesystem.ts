/**
 * The file tools' permission check: Read and Edit path rules, protected
 * paths, and the working directories (Claude Code's filesystem.ts).
 *
 *   deny rule → toolexec's own files (denied, whatever the rules and mode)
 *   → protected path (edits ask, even in bypass) → ask rule
 *   → allow rule → outside the working directories: ask (working_dir)
 *   → reads inside: allow → edits inside: allow in acceptEdits, else
 *   undecided (ask).
 *
 * Deny and ask rules match any spelling of the path (as given, or where it
 * really leads); an allow rule must match where it really leads, so that a
 * symlink under an allowed directory cannot carry an allowance elsewhere.
 */
import path from 'node:path';
import { ToolError } from '../pipeline/error-class.js';
import type { PermissionResult, ToolContext } from '../tool/types.js';
import { withDecisionMemo } from '../util/decision-memo.js';
import type { Workspace } from '../workspace.js';
import { DENIED_MEMORY_LIMIT } from './denied-memory.js';
import { gitDirReason, gitHooksReason, sharedInodeReason } from './git-hooks.js';
import type { HardLinkVerdict } from './hard-links.js';
import { messages } from './messages.js';

/**
 * Claude Code's safety paths (case-insensitive), plus toolexec's own data directory, and the shell
 * startup files Claude Code's list leaves out: zsh reads .zshenv for every shell, scripts and
 * `zsh -c` included (more often than the .zshrc it protects), and .zlogin, .bash_login and the
 * logout files run as surely as .zprofile does.
 */
export const PROTECTED_FILES: ReadonlySet<string> = new Set([
  '.gitconfig',
  '.gitmodules',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
  '.mcp.json',
  '.claude.json',
  '.zshenv',
  '.zlogin',
  '.zlogout',
  '.bash_login',
  '.bash_logout',
]);
export const PROTECTED_DIRS: ReadonlySet<string> = new Set(['.git', '.vscode', '.idea', '.claude', '.toolexec']);

/** Why a path is protected, or undefined. */
export function protectedPathReason(absPath: string): string | undefined {
  const parts = path.normalize(absPath).split(path.sep).filter((p) => p.length > 0);
  for (let i = 0; i < parts.length; i++) {
    const seg = parts[i]!.toLowerCase();
    const last = i === parts.length - 1;
    if (!last && PROTECTED_DIRS.has(seg)) {
      // Claude Code's worktrees are checkouts, not its configuration: this `.claude` does not count, but
      // what lies in a worktree (its .git, .claude, shell files) does, as in any other checkout.
      if (seg === '.claude' && parts[i + 1]?.toLowerCase() === 'worktrees') continue;
      return `${seg}/ is a protected directory`;
    }
    if (last && PROTECTED_DIRS.has(seg)) return `${seg} is a protected directory`;
    if (last && PROTECTED_FILES.has(seg)) return `${seg} is a protected file`;
  }
  return undefined;
}

/**
 * Why changing a path always needs a person's approval, in every mode: a
 * protected path, a script toolexec runs itself (Workspace.runScriptReason), or
 * a file in the hooks directory a repository's `core.hooksPath` names, in a git directory a `.git` file
 * names (git-hooks.ts gitDirReason), or another name (a hard
 * link) of the repository's config, a hook or a protected file in a workspace root (git-hooks.ts).
 * `env`: the environment the commands run with (ToolContext.childEnv), whose
 * HOME, XDG_CONFIG_HOME, GIT_CONFIG_* say which configuration git reads.
 * `globStart`: the path is a directory a glob only starts in (`src` of
 * `src/*.ts`), which the command does not move or remove, so only the
 * protected paths count for it.
 */
export function protectedChangeReason(abs: string, workspace: Workspace, env: NodeJS.ProcessEnv, globStart = false): string | undefined {
  return (
    protectedPathReason(abs) ??
    (globStart ? undefined : workspace.runScriptReason(abs)) ??
    gitHooksReason(abs, workspace, env, globStart) ??
    gitDirReason(abs, workspace, globStart) ??
    sharedInodeReason(abs, workspace, env, (p) => protectedPathReason(p) !== undefined)
  );
}

/** The spellings of a path a rule is matched against: canonical first, then as resolved. */
export function pathSpellings(filePath: string, ctx: ToolContext): { abs: string; canonical: string; all: string[] } {
  const abs = ctx.workspace.resolve(filePath, ctx.session.cwd);
  const canonical = ctx.workspace.canonical(filePath, ctx.session.cwd);
  return { abs, canonical, all: abs === canonical ? [canonical] : [canonical, abs] };
}

/**
 * Why one of these spellings of a path is one of toolexec's own files (the
 * configuration it loaded, which may hold tokens; its database and data
 * directory, which hold every session's calls), or undefined. No rule or mode
 * lets a tool read or change them.
 */
function serviceFileReason(spellings: readonly string[], ctx: Pick<ToolContext, 'workspace'>): string | undefined {
  if (!ctx.workspace.hasServiceFiles) return undefined;
  for (const p of spellings) {
    const why = ctx.workspace.serviceFileReason(p);
    if (why) return why;
  }
  return undefined;
}

/** A process's environment in /proc (`/proc/self/environ`, `/proc/PID/task/TID/environ`). */
const PROCESS_ENVIRON = /^\/proc\/[^/]+\/(task\/[^/]+\/)?environ$/;

export function isProcessEnvironment(abs: string): boolean {
  return PROCESS_ENVIRON.test(abs);
}

/**
 * Why one of these spellings of a path is a process's environment, or
 * undefined. The file tools run in toolexec's own process, so
 * `/proc/self/environ` is toolexec's environment (its tokens, the
 * credentials it was started with); like its configuration files, no rule
 * or mode lets a tool read it.
 */
function processEnvironmentReason(spellings: readonly string[]): string | undefined {
  const hit = spellings.find(isProcessEnvironment);
  return hit === undefined ? undefined : `${hit} is a process's environment (toolexec's own holds its tokens)`;
}

/**
 * Why one of these spellings of a path is a file no rule or mode lets a tool read or change:
 * one of toolexec's own files, or a process's environment (the first when it is both); undefined when none.
 */
function forbiddenFileReason(spellings: readonly string[], ctx: Pick<ToolContext, 'workspace'>, opened?: string): string | undefined {
  return serviceFileReason(spellings, ctx) ?? processEnvironmentReason(spellings) ?? ctx.workspace.serviceFileLinkReason(opened ?? spellings[0]!);
}

/** What the model is told when a tool would read or change one of toolexec's own files. */
export function serviceFileMessage(toolName: string, why: string): string {
  return `Permission to use ${toolName} on this path has been denied: ${why}, which no tool may read or change.`;
}

/** What each call's permission check judged, by its context: the canonical path, for the recheck when the file is opened. */
const judged = new WeakMap<object, string>();

/** The canonical path this call's permission check judged, or undefined (none ran on this context). */
export function judgedPath(ctx: object): string | undefined {
  return judged.get(ctx);
}

/**
 * Hands what the check judged on `from` to `to`, the same call's context for an input a PreToolUse hook or
 * an approver changed (pipeline/context.ts modified()). Step 5 judges the changed input on `from` last, so
 * the record is of the input that runs: without it the recheck at open fell back to the deny rules only,
 * and a symlink swapped in after the check carried that input anywhere a deny rule does not name.
 */
export function carryJudgement(from: object, to: object): void {
  const was = judged.get(from);
  if (was !== undefined) judged.set(to, was);
}

export function checkPathPermission(
  kind: 'read' | 'edit',
  toolName: string,
  filePath: string,
  ctx: ToolContext,
): PermissionResult {
  // An edit's check has one memo (util/decision-memo.ts): the protected-change check walks up for a .git from
  // the directory canonical() has just resolved, and stats the file it has just looked at. A read's asks
  // each question once, and a scope would only cost it.
  return kind === 'edit' ? withDecisionMemo(() => checkPathPermissionNow(kind, toolName, filePath, ctx)) : checkPathPermissionNow(kind, toolName, filePath, ctx);
}

function checkPathPermissionNow(kind: 'read' | 'edit', toolName: string, filePath: string, ctx: ToolContext): PermissionResult {
  const q = ctx.permissions;
  const { canonical, all } = pathSpellings(filePath, ctx);
  judged.set(ctx, canonical);
  const deny = q.pathRule(kind, 'deny', all);
  if (deny) {
    return { behavior: 'deny', message: messages.ruleDenied(toolName), type: 'rule', detail: deny.raw };
  }
  // The file tools show what they read (Edit, Write and NotebookEdit return the original too).
  const own = forbiddenFileReason(all, ctx);
  if (own) return { behavior: 'deny', message: serviceFileMessage(toolName, own), type: 'safety', detail: own };
  if (kind === 'read') {
    // The same file under another name (a hard link): Edit, Write and NotebookEdit replace the file they write
    // (a new inode), so only reading through the link reaches the denied file.
    const link = q.hardLinkChecker('read')(canonical);
    if (link) return hardLinkResult(toolName, canonical, link);
  }
  if (kind === 'edit') {
    let why: string | undefined;
    for (const p of all) if ((why = protectedChangeReason(p, ctx.workspace, ctx.childEnv)) !== undefined) break;
    if (why) {
      return {
        behavior: 'ask',
        message: `${toolName} wants to modify ${canonical}: ${why}, which always needs a person's approval.`,
        type: 'safety',
        detail: why,
      };
    }
  }
  const ask = q.pathRule(kind, 'ask', all);
  if (ask) return { behavior: 'ask', message: messages.notGranted(toolName), type: 'rule', detail: ask.raw };
  const allow = q.pathRule(kind, 'allow', [canonical]);
  if (allow) return { behavior: 'allow', type: 'rule', detail: allow.raw };
  if (!ctx.workspace.containsCanonical(canonical)) {
    return {
      behavior: 'ask',
      message: `${toolName} wants to access ${canonical}, which is outside the working directories (${ctx.workspace.roots.join(', ')}).`,
      type: 'working_dir',
      detail: canonical,
    };
  }
  if (kind === 'read') return { behavior: 'allow', type: 'working_dir', detail: 'read inside the working directories' };
  if (q.mode === 'acceptEdits') return { behavior: 'allow', type: 'mode', detail: 'acceptEdits: edit inside the working directories' };
  return { behavior: 'passthrough' };
}

/** The decision for a path that is, or may be, a hard link to a file a deny rule covers. */
export function hardLinkResult(toolName: string, abs: string, link: HardLinkVerdict): PermissionResult {
  if ('unknown' in link) {
    const why = link.forgotten
      ? `toolexec has met more files that deny rules cover than the ${DENIED_MEMORY_LIMIT.toLocaleString('en')} it remembers by identity, and whether ${abs} is one of them under another name (after a hard link and a replacement) could not be settled`
      : `${abs} has several names (hard links), and whether one is a file a deny rule covers could not be settled`;
    return { behavior: 'ask', message: `${toolName} wants to use ${abs}: ${why}; it needs approval.`, type: 'safety', detail: why };
  }
  return {
    behavior: 'deny',
    message: `${messages.ruleDenied(toolName)} ${abs} is a hard link to ${link.other}, which ${link.rule.raw} denies.`,
    type: 'rule',
    detail: link.rule.raw,
  };
}

/** Claude Code's validation message for a path an Edit deny rule covers. */
export const EDIT_DENIED_MESSAGE = 'File is in a directory that is denied by your permission settings.';

/** Whether an Edit deny rule (covering Edit, Write and NotebookEdit) matches any spelling of the path. */
export function isEditDenied(filePath: string, ctx: ToolContext): boolean {
  return ctx.permissions.pathRule('edit', 'deny', pathSpellings(filePath, ctx).all) !== undefined;
}

/**
 * Judged again when the file is opened or written, on where it really is
 * then: a deny rule or one of toolexec's own files. The permission check ran
 * before (an approver may have taken minutes over it), and a symlink swapped
 * since must not carry the call to a file that check would have denied.
 * Throws a permission error.
 */
export function assertStillPermitted(
  kind: 'read' | 'edit',
  toolName: string,
  realPath: string,
  ctx: Pick<ToolContext, 'workspace' | 'permissions'>,
  /** Where the opened file's identity is read (`/proc/self/fd/N`): by path, another file may stand there by now. */
  opened: string = realPath,
): void {
  const folded = ctx.workspace.fold(realPath);
  const all = folded === realPath ? [realPath] : [folded, realPath];
  const deny = ctx.permissions.pathRule(kind, 'deny', all);
  if (deny) {
    throw new ToolError(`${messages.ruleDenied(toolName)} The path now leads to ${realPath}, which ${deny.raw} denies.`, 'permission');
  }
  const own = forbiddenFileReason(all, ctx, opened);
  if (own) throw new ToolError(serviceFileMessage(toolName, own), 'permission');
  const link = kind === 'read' ? ctx.permissions.hardLinkChecker('read')(opened) : undefined;
  if (link && !('unknown' in link)) {
    throw new ToolError(`${messages.ruleDenied(toolName)} ${realPath} is now a hard link to ${link.other}, which ${link.rule.raw} denies.`, 'permission');
  }
}

/**
 * Judged again, whole, when the opened file is not the one the permission check judged for this call
 * (a symlink moved in between): assertStillPermitted holds the deny rules, and this the rest, so that
 * a Read allowed inside the working directories, or one a person approved for another file, does not
 * carry to a file outside them that would have asked (`~/.ssh/id_rsa`). What bypassPermissions allows
 * outside the working directories it still allows. Nothing to compare when no check ran on this context
 * (a tool called directly); an input a hook or an approver changed was judged in step 5, and its record
 * carried to the context it runs in (carryJudgement).
 */
export function assertOpenedAsJudged(kind: 'read' | 'edit', toolName: string, realPath: string, ctx: ToolContext): void {
  const was = judged.get(ctx);
  if (was === undefined || ctx.workspace.fold(realPath) === was) return;
  const now = checkPathPermission(kind, toolName, realPath, ctx);
  judged.set(ctx, was);
  if (now.behavior === 'allow') return;
  // What bypassPermissions lets through (engine.ts): all but deny rules, ask rules and safety checks.
  if (ctx.permissions.mode === 'bypassPermissions' && (now.behavior === 'passthrough' || (now.behavior === 'ask' && now.type === 'working_dir'))) return;
  const why = now.behavior === 'deny' ? 'is denied' : now.behavior === 'ask' ? `would need approval (${now.type}: ${now.detail ?? ''})` : 'no rule allows';
  throw new ToolError(`${toolName} was allowed for ${was}, but the path now leads to ${realPath}, which ${why}; it was not opened. Ask again for that file by its own name.`, 'permission');
}
