/**
 * The optional OS sandbox for Bash: bubblewrap (`bwrap`). The whole file
 * system is mounted read-only; the working directories, the configured
 * writable paths and a private /tmp are writable; the service's own data
 * directory and `.git/hooks` stay read-only even inside a writable root; the
 * network is cut (unless allowed); the command gets its own PID namespace
 * and session and dies with the service.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

let available: boolean | undefined;

/** Whether bwrap exists and can create its namespaces here (probed once). */
export function bubblewrapAvailable(): boolean {
  if (available === undefined) {
    try {
      const r = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-pid', '--die-with-parent', 'true'], {
        stdio: 'ignore',
        timeout: 5000,
      });
      available = r.status === 0;
    } catch {
      available = false;
    }
  }
  return available;
}

export interface SandboxOptions {
  /** Directories and files the command may write (those that exist are bound). */
  writable: readonly string[];
  /** Paths inside writable ones that stay read-only. */
  readOnly: readonly string[];
  allowNetwork: boolean;
  cwd: string;
}

function exists(p: string): boolean {
  try {
    fs.statSync(p);
    return true;
  } catch {
    return false;
  }
}

/** bwrap's arguments up to (not including) the command. */
export function bubblewrapArgs(o: SandboxOptions): string[] {
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp'];
  // Later mounts win over earlier ones: writable paths under /tmp are bound after the private /tmp.
  const writable = [...new Set(o.writable.map((p) => path.resolve(p)))].filter(exists).sort((a, b) => a.length - b.length);
  for (const w of writable) args.push('--bind', w, w);
  for (const r of [...new Set(o.readOnly.map((p) => path.resolve(p)))].filter(exists)) args.push('--ro-bind', r, r);
  args.push('--unshare-pid', '--die-with-parent', '--new-session');
  if (!o.allowNetwork) args.push('--unshare-net');
  args.push('--chdir', o.cwd);
  return args;
}
