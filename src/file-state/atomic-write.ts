/**
 * Writing files for Edit, Write and NotebookEdit: atomically (a temp file in
 * the same directory, fsync, rename, fsync of the directory), keeping the
 * file's permission bits, and never through a symlink that leads out of the
 * working directories. A symlink that stays inside is written through: its
 * target changes, the link stays a link.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ToolError } from '../pipeline/error-class.js';
import { assertOpenedAsJudged, assertStillPermitted, judgedPath, protectedChangeReason } from '../permissions/filesystem.js';
import type { ToolContext } from '../tool/types.js';
import { resolveTarget } from '../workspace.js';

/**
 * Where a write to `abs` (as the tool resolved it) must land. Refuses a path
 * that is spelt inside the working directories but leads outside through a
 * symlink, or that now leads where an Edit deny rule or toolexec's own files
 * forbid; a path outside them was judged as such by the permission layer
 * (asked, or allowed by a rule) and is written where it leads.
 */
export function writeTarget(abs: string, ctx: ToolContext, toolName: string): string {
  const { workspace } = ctx;
  let resolved: { target: string; viaSymlink: boolean };
  try {
    resolved = resolveTarget(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new ToolError(`Too many levels of symbolic links: ${abs}`, 'io');
    throw e;
  }
  const { target, viaSymlink } = resolved;
  if (viaSymlink && workspace.containsLexically(abs) && !workspace.containsCanonical(workspace.fold(target))) {
    throw new ToolError(
      `Refusing to write ${abs}: a symbolic link leads it to ${target}, outside the working directories (${workspace.roots.join(', ')}).`,
      'permission',
    );
  }
  // The permission check judged the path before; where it leads now is judged again (a symlink may have moved).
  assertStillPermitted('edit', toolName, target, ctx);
  // Elsewhere than the check judged: judged again, whole (a protected path, an ask rule, an edit the mode
  // does not allow). A person may have approved, or acceptEdits allowed, a write to a harmless name that a
  // symlink swapped in since carries into .git/hooks. An input a hook or an approver changed was judged too
  // (step 5), and is held to that judgement.
  const was = judgedPath(ctx);
  if (was !== undefined) assertOpenedAsJudged('edit', toolName, target, ctx);
  // No check on this context, or an input changed after the person saw the ask (an approver's edit is judged
  // again, but its ask is not shown again): a protected path (.git, a hook toolexec runs, core.hooksPath's
  // directory) reached only through a symlink is refused. Written by its own name, it is judged (and asked)
  // as what it is.
  if (viaSymlink && (was === undefined || ctx.userModified)) {
    const why = protectedChangeReason(target, workspace, ctx.childEnv);
    if (why !== undefined && protectedChangeReason(abs, workspace, ctx.childEnv) === undefined) {
      throw new ToolError(
        `Refusing to write ${abs}: a symbolic link leads it to ${target}, and ${why}. Write ${target} by its own name, which asks for approval.`,
        'permission',
      );
    }
  }
  return target;
}

export interface AtomicWriteOptions {
  /** Permission bits to keep (an existing file's); new files get the umask's default. */
  mode?: number | undefined;
  /** Owner to keep where the process may set it (running as root). */
  uid?: number | undefined;
  gid?: number | undefined;
  signal?: AbortSignal | undefined;
}

function abortError(): Error {
  return Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
}

/**
 * Replaces `target` (a real path, symlinks already resolved) with `data`.
 * Readers see the old file or the new one, never a mix; a crash leaves at
 * worst a stray temp file beside it. Hard links to the old file keep the old
 * content (a rename makes a new inode), as with any atomic save.
 */
export async function writeFileAtomic(target: string, data: Buffer, opts: AtomicWriteOptions = {}): Promise<void> {
  const dir = path.dirname(target);
  await fs.promises.mkdir(dir, { recursive: true });
  if (opts.mode !== undefined) {
    // A rename would replace a file that could not be written in place: a
    // read-only file stays as it is, even for root (who ignores the bits).
    if ((opts.mode & 0o222) === 0) {
      throw new ToolError(`${target} is read-only (mode ${(opts.mode & 0o7777).toString(8).padStart(4, '0')}); it was not changed.`, 'io');
    }
    await fs.promises.access(target, fs.constants.W_OK);
  }
  if (opts.signal?.aborted) throw abortError();
  const tmp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.toolexec.tmp`);
  const flags = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;
  const fh = await fs.promises.open(tmp, flags, opts.mode ?? 0o666);
  let renamed = false;
  try {
    try {
      await fh.writeFile(data);
      // open() applied the umask; an existing file's bits are restored exactly.
      if (opts.mode !== undefined) await fh.chmod(opts.mode);
      if (opts.uid !== undefined && opts.gid !== undefined && process.getuid?.() === 0) {
        await fh.chown(opts.uid, opts.gid).catch(() => undefined);
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    if (opts.signal?.aborted) throw abortError();
    await fs.promises.rename(tmp, target);
    renamed = true;
  } finally {
    if (!renamed) await fs.promises.unlink(tmp).catch(() => undefined);
  }
  await syncDir(dir);
}

/** Makes the rename durable; some file systems refuse fsync on a directory, which is then best effort. */
async function syncDir(dir: string): Promise<void> {
  let dh: fs.promises.FileHandle | undefined;
  try {
    dh = await fs.promises.open(dir, fs.constants.O_RDONLY);
    await dh.sync();
  } catch {
    // EINVAL/EISDIR on file systems without directory fsync.
  } finally {
    await dh?.close().catch(() => undefined);
  }
}
