/**
 * `toolexec denied-memory`: the memory of denied files met by identity
 * (permissions/denied-memory.ts) as the service's database keeps it: how
 * full it is, whether it overflowed, which files no longer lie at the denied
 * name they were met at; and the two ways out of an overflow, each an
 * operator's decision after checking the workspace (the README says what
 * they give up). Reads the database directly (no server needed); a running
 * service keeps what it loaded until it restarts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SqliteDeniedFiles } from '../storage/denied-files.js';
import { openDatabase } from '../storage/db.js';
import { DENIED_MEMORY_LIMIT, type MetDenied } from '../permissions/denied-memory.js';
import { CONFIG_HELP, CONFIG_OPTIONS, flag, parse } from './args.js';
import { loadCliConfig } from './config.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, type CliIO, type CommandResult } from './io.js';

export const DENIED_MEMORY_HELP = `usage: toolexec denied-memory [options]

Prints the memory of denied files met by identity, from the service's
database: how many files it holds against its limit (${DENIED_MEMORY_LIMIT.toLocaleString('en-US')}), how many no
longer lie at the denied name they were met at (each may be a secret living on
under another name, or a file deleted while the service could not see it),
and whether it overflowed (a denied file could not be remembered: every file
born no later than it asks, for good).

  --list                   every file remembered: device:inode, when met, whether
                           its denied name still holds it, the name and the rule
  --forget-displaced       forget the files no longer at their denied names
                           (those found under another name in the workspace
                           are kept: 'elsewhere' in --list)
  --clear-overflow         forget the overflow: files born before the file that
                           could not be remembered stop asking
  --json                   print the state as JSON
${CONFIG_HELP}

Both changes are yours to make after checking the workspace: a file forgotten
that lives on under another name (an archive's hard link to .env, a .env moved
away) can then be read under that name. Stop the service first, or restart it
after: a running service keeps the memory it loaded.
`;

const OPTIONS = {
  ...CONFIG_OPTIONS,
  list: { type: 'boolean' },
  json: { type: 'boolean' },
  'forget-displaced': { type: 'boolean' },
  'clear-overflow': { type: 'boolean' },
} as const;

type Where = 'in place' | 'moved' | 'elsewhere' | 'unknown';

/**
 * Whether the denied name the file was met at still holds it: 'moved' when it holds another file or
 * none, 'unknown' when it cannot be looked at (permissions: another user than the service's), which
 * --forget-displaced leaves alone.
 */
function where(f: MetDenied): Where {
  try {
    const st = fs.statSync(f.path);
    return st.dev === f.dev && st.ino === f.ino ? 'in place' : 'moved';
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'moved' : 'unknown';
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Entries the search for other names (otherNames) looks at, at most. */
const SEARCH_LIMIT = 1_000_000;

/**
 * The names under `roots` (the workspace and its additional directories) of the files `wanted`
 * (`dev:ino`), symlinks not followed; `complete` false when a directory could not be listed or the
 * search passed SEARCH_LIMIT entries, so that a file not found may still lie there. The file the
 * memory is for, an archive member N hard-linked to .env whose denied name a later member took,
 * mostly lives on in the workspace: it is 'elsewhere', not 'moved', and --forget-displaced keeps it.
 */
function otherNames(roots: readonly string[], wanted: ReadonlySet<string>): { found: Map<string, string>; complete: boolean } {
  const found = new Map<string, string>();
  const queue = [...roots];
  let seen = 0;
  for (let at = 0; at < queue.length && found.size < wanted.size; at++) {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(queue[at]!, { withFileTypes: true });
    } catch {
      return { found, complete: false };
    }
    for (const e of entries) {
      if (++seen > SEARCH_LIMIT) return { found, complete: false };
      // A name that is not UTF-8 comes back with U+FFFD and cannot be looked at: the file under it may be one (as hard-links.ts listing() counts it).
      if (e.name.includes('\ufffd')) return { found, complete: false };
      const p = path.join(queue[at]!, e.name);
      if (e.isDirectory()) queue.push(p);
      else if (e.isFile()) {
        try {
          const st = fs.lstatSync(p);
          const id = `${st.dev}:${st.ino}`;
          if (wanted.has(id) && !found.has(id)) found.set(id, p);
        } catch {
          /* gone since */
        }
      }
    }
  }
  return { found, complete: true };
}

export async function deniedMemoryCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, help } = parse('denied-memory', args, OPTIONS, 0);
  if (help) {
    io.stdout.write(DENIED_MEMORY_HELP);
    return 0;
  }
  const { config } = loadCliConfig(values, io);
  const file = config.storage.path;
  if (file === ':memory:') throw new CliError('denied-memory: the configuration keeps its database in memory: there is nothing to read', EXIT_USAGE);
  if (!fs.existsSync(file)) throw new CliError(`denied-memory: no database at ${file} (has the service run with this configuration?)`, EXIT_FAILURE);
  const db = openDatabase({ path: file });
  try {
    const store = new SqliteDeniedFiles(db);
    let rows: Array<MetDenied & { met_at: number; where: Where; also_at?: string }> = store.rows().map((r) => ({ ...r, where: where(r) }));
    const moved = new Set(rows.filter((r) => r.where === 'moved').map((r) => `${r.dev}:${r.ino}`));
    if (moved.size > 0) {
      const { found, complete } = otherNames([config.workspace.root, ...config.workspace.additionalDirectories], moved);
      rows = rows.map((r) => {
        if (r.where !== 'moved') return r;
        const also = found.get(`${r.dev}:${r.ino}`);
        if (also !== undefined) return { ...r, where: 'elsewhere', also_at: also };
        return complete ? r : { ...r, where: 'unknown' };
      });
    }
    const changes: string[] = [];
    if (flag(values, 'forget-displaced')) {
      const gone = rows.filter((r) => r.where === 'moved');
      db.transaction(() => {
        for (const r of gone) store.remove(r.dev, r.ino);
      })();
      rows = rows.filter((r) => r.where !== 'moved');
      changes.push(`forgot ${gone.length} file${gone.length === 1 ? '' : 's'} no longer at ${gone.length === 1 ? 'its denied name' : 'their denied names'}`);
    }
    if (flag(values, 'clear-overflow')) changes.push(store.clearOverflow() ? 'cleared the overflow' : 'there was no overflow to clear');
    const overflow = store.overflowState();
    const displaced = rows.filter((r) => r.where === 'moved').length;
    const elsewhere = rows.filter((r) => r.where === 'elsewhere').length;
    if (flag(values, 'json')) {
      io.stdout.write(
        `${JSON.stringify(
          {
            database: file,
            remembered: rows.length,
            limit: DENIED_MEMORY_LIMIT,
            displaced,
            elsewhere,
            overflow: overflow ? { born: overflow.born, path: overflow.path, at: iso(overflow.at) } : null,
            changes,
            ...(flag(values, 'list') ? { files: rows.map((r) => ({ ...r, met_at: iso(r.met_at) })) } : {}),
          },
          null,
          2,
        )}\n`,
      );
      return 0;
    }
    const out: string[] = [];
    for (const c of changes) out.push(`${c} (a running service keeps what it loaded until it restarts)`);
    out.push(`database: ${file}`);
    out.push(
      `denied files remembered: ${rows.length} of ${DENIED_MEMORY_LIMIT}` +
        (displaced > 0 ? ` (${displaced} no longer at the denied name met at: see --list, and --forget-displaced once checked)` : ''),
    );
    if (elsewhere > 0) out.push(`living on under another name in the workspace: ${elsewhere} (see --list; --forget-displaced keeps them)`);
    out.push(
      overflow
        ? `overflowed: yes, since ${iso(overflow.at)} (latest at ${overflow.path}): files born no later than ${overflow.born > 0 ? iso(overflow.born) : 'it (every file: no birth time kept)'} ask; see --clear-overflow`
        : 'overflowed: no',
    );
    if (flag(values, 'list') && rows.length > 0) {
      const id = (r: MetDenied): string => `${r.dev}:${r.ino}`;
      const width = Math.max(12, ...rows.map((r) => id(r).length)) + 2;
      out.push(`${'DEVICE:INODE'.padEnd(width)}${'MET'.padEnd(26)}${'WHERE'.padEnd(10)}PATH (RULE)`);
      for (const r of rows)
        out.push(`${id(r).padEnd(width)}${iso(r.met_at).padEnd(26)}${r.where.padEnd(10)}${r.path} (${r.rule})${r.also_at === undefined ? '' : `, now at ${r.also_at}`}`);
    }
    io.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } finally {
    db.close();
  }
}
