/**
 * The files archivers and copy tools read and write, for the permission
 * checks (bash/paths.ts): `tar`, `zip`, `unzip`, `rsync` and `scp`. Without
 * them `tar -czf out.tgz .env` or `scp .env host:` would read a file a Read
 * deny rule covers while the checks saw no path at all.
 *
 * - tar: creating (c, r, u, A) reads its members (whole trees) relative to
 *   the last `-C` before them and writes the archive; extracting (x) reads
 *   the archive and writes into `-C` (else the current directory); listing
 *   and comparing (t, d) read the archive (d also the members).
 * - zip writes the archive and reads the files (trees with -r); unzip reads
 *   the archive and writes into `-d` (else the current directory), except
 *   when it only lists, tests or prints.
 * - rsync and scp read the sources (trees with -r / -a) and write the
 *   destination; a remote side (`host:path`, `rsync://…`) is not a local path.
 * What an archive holds is not known before it runs: an extraction is judged
 * by its target directory only.
 */
import type { PathArgs } from './paths.js';
import type { Word } from './types.js';
import { isLongOption } from './long-option.js';
import { wordTail } from './words.js';

/** `dir/member`, when both are literal and the member is relative; else the member as written. */
function under(dir: Word | undefined, member: Word): Word {
  if (!dir || !member.literal || !dir.literal || member.value.startsWith('/') || member.tilde) return member;
  const base = dir.value.endsWith('/') ? dir.value.slice(0, -1) : dir.value;
  return { ...member, raw: `${base}/${member.value}`, value: `${base}/${member.value}`, tilde: dir.tilde };
}

/** A remote rsync/scp operand: `host:path`, `user@host:path`, `rsync://…` (a colon before any slash). */
function isRemote(w: Word): boolean {
  if (!w.literal) return false;
  const v = w.value;
  if (v.startsWith('rsync://')) return true;
  const colon = v.indexOf(':');
  if (colon <= 0) return false;
  const slash = v.indexOf('/');
  return slash === -1 || colon < slash;
}

const TAR_SHORT_ARG = 'fCTXbHKLNVgIF';
const TAR_LONG_ARG = new Set([
  '--file', '--directory', '--files-from', '--exclude-from', '--exclude', '--format', '--label', '--newer', '--after-date',
  '--newer-mtime', '--listed-incremental', '--use-compress-program', '--to-command', '--transform', '--xform', '--owner',
  '--group', '--mode', '--mtime', '--blocking-factor', '--record-size', '--tape-length', '--volno-file', '--info-script',
  '--new-volume-script', '--rsh-command', '--index-file', '--checkpoint-action', '--warning', '--strip-components',
  '--suffix', '--backup', '--occurrence', '--sort', '--owner-map', '--group-map', '--quoting-style', '--exclude-tag',
  '--exclude-tag-under', '--exclude-tag-all', '--pax-option', '--atime-preserve',
]);
const TAR_MODES: Readonly<Record<string, string>> = {
  '--create': 'c', '--append': 'r', '--update': 'u', '--catenate': 'A', '--concatenate': 'A', '--extract': 'x', '--get': 'x',
  '--list': 't', '--diff': 'd', '--compare': 'd', '--delete': 'D',
};

/** A word standing for the files named in a list the command reads: unknown before it runs. */
function unnamed(what: string): Word {
  return { raw: what, value: what, literal: false, glob: false, tilde: false };
}

export function tarPaths(args: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false, opaque: [] };
  let mode = '';
  let archive: Word | undefined;
  let dir: Word | undefined;
  const members: Word[] = [];
  const lists: Word[] = [];
  let namesFromList = false;
  const shortOpt = (c: string, value: () => Word | undefined): void => {
    if ('crutxdA'.includes(c)) mode ||= c;
    if (!TAR_SHORT_ARG.includes(c)) return;
    const v = value();
    if (!v) return;
    if (c === 'f') archive = v;
    else if (c === 'C') dir = v;
    else if (c === 'T' || c === 'X') lists.push(v);
    if (c === 'T') namesFromList = true;
  };
  let i = 0;
  // The old style: a first word without a dash is a bundle of letters whose values follow in order.
  if (args[0] && args[0].literal && !args[0].value.startsWith('-')) {
    const bundle = args[0].value;
    i = 1;
    for (const c of bundle) shortOpt(c, () => args[i++]);
  }
  operands(
    args.slice(i),
    TAR_SHORT_ARG,
    TAR_LONG_ARG,
    (name, value) => {
      if (name.startsWith('--')) {
        if (TAR_MODES[name]) mode ||= TAR_MODES[name]!;
        // GNU tar takes an abbreviation (`--files=list`, `--files-fr list`).
        if (isLongOption(name, ['--files-from'], 7)) namesFromList = true;
        if (!value || !TAR_LONG_ARG.has(name)) return;
        if (name === '--file') archive = value;
        else if (name === '--directory') dir = value;
        else if (name === '--files-from' || name === '--exclude-from') lists.push(value);
      } else shortOpt(name[1]!, () => value);
    },
    // Each member is read relative to the last -C before it.
    (w) => members.push(under(dir, w)),
  );
  out.reads.push(...lists);
  // -T/--files-from name the members in a file (or standard input): files no word of the line names.
  if (namesFromList) out.opaque.push(unnamed('the files tar -T reads names of'));
  const arch = archive && !(archive.literal && archive.value === '-') && !isRemote(archive) ? archive : undefined;
  if (mode === 'x') {
    if (arch) out.reads.push(arch);
    out.writes.push(dir ?? { raw: '.', value: '.', literal: true, glob: false, tilde: false });
  } else if (mode === 't' || mode === 'd') {
    if (arch) out.reads.push(arch);
    if (mode === 'd') out.reads.push(...members);
  } else if (mode === 'D') {
    if (arch) out.writes.push(arch);
  } else {
    // c, r, u, A (and a tar with no mode, which fails: judged as creating)
    if (arch) out.writes.push(arch);
    out.reads.push(...members);
    out.recursive = members.length > 0;
    if (mode === 'A') out.recursive = false;
  }
  return out;
}

/**
 * Walks a command's arguments as getopt does: `--` ends the options, `-abc`
 * clusters, `-ovalue` / `-o value`, `--long=value` / `--long value` (the
 * latter only for options in `longArg`). Each option is reported with its
 * value, each operand in order (and returned).
 */
export function operands(
  args: readonly Word[],
  shortArg: string,
  longArg: { has(name: string): boolean },
  onOption: (name: string, value: Word | undefined) => void,
  onOperand?: (w: Word) => void,
): Word[] {
  const ops: Word[] = [];
  let done = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const v = w.value;
    if (done || !w.literal || !v.startsWith('-') || v === '-') {
      ops.push(w);
      onOperand?.(w);
      continue;
    }
    if (v === '--') {
      done = true;
      continue;
    }
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const name = eq === -1 ? v : v.slice(0, eq);
      onOption(name, eq !== -1 ? wordTail(w, eq + 1) : longArg.has(name) ? args[++i] : undefined);
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const c = v[j]!;
      if (shortArg.includes(c)) {
        onOption(`-${c}`, j < v.length - 1 ? wordTail(w, j + 1) : args[++i]);
        break;
      }
      onOption(`-${c}`, undefined);
    }
  }
  return ops;
}

export function zipPaths(args: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false, opaque: [] };
  // -x and -i start lists of patterns (names inside the archive, not files).
  const cut = args.findIndex((w) => w.literal && (w.value === '-x' || w.value === '-i' || w.value === '--exclude' || w.value === '--include'));
  const own = cut === -1 ? args : args.slice(0, cut);
  let output: Word | undefined;
  const ops = operands(own, 'bntO', new Set(['--temp-path', '--suffixes', '--output-file', '--from-date', '--before-date']), (name, value) => {
    if (name === '-r' || name === '-R' || name === '--recurse-paths' || name === '--recurse-patterns') out.recursive = true;
    if ((name === '-O' || name === '--output-file') && value) output = value;
    // -@ (--names-stdin) takes the files to add from standard input: files no word of the line names.
    if (name === '-@' || name === '--names-stdin') out.opaque.push(unnamed('the files zip -@ reads names of'));
  });
  const [archive, ...files] = ops;
  if (archive) {
    if (output) {
      out.reads.push(archive);
      out.writes.push(output);
    } else out.writes.push(archive);
  }
  out.reads.push(...files);
  if (files.length === 0) out.recursive = false;
  return out;
}

export function unzipPaths(args: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false, opaque: [] };
  let exdir: Word | undefined;
  let extracts = true;
  // -d (alone or ending a cluster: `-qd dir`, `-ddir`) may also come after the member names and an -x list.
  const dAt = args.findIndex((w) => w.literal && /^-[A-Za-z]*d/.test(w.value) && !w.value.startsWith('--'));
  let rest = args;
  if (dAt !== -1) {
    const d = args[dAt]!;
    const at = d.value.indexOf('d', 1) + 1;
    const after = d.value.slice(at);
    exdir = after.length > 0 ? wordTail(d, at) : args[dAt + 1];
    rest = [...args.slice(0, dAt), ...args.slice(dAt + (after.length > 0 ? 1 : 2))];
  }
  const cut = rest.findIndex((w) => w.literal && w.value === '-x');
  const own = cut === -1 ? rest : rest.slice(0, cut);
  const ops = operands(own, 'P', new Set(['--password']), (name) => {
    if (name === '-l' || name === '-t' || name === '-p' || name === '-v' || name === '-Z' || name === '-z') extracts = false;
  });
  if (ops[0]) out.reads.push(ops[0]);
  if (extracts) out.writes.push(exdir ?? { raw: '.', value: '.', literal: true, glob: false, tilde: false });
  return out;
}

const RSYNC_LONG_ARG = new Set([
  '--rsh', '--rsync-path', '--exclude', '--exclude-from', '--include', '--include-from', '--files-from', '--filter',
  '--backup-dir', '--suffix', '--log-file', '--log-file-format', '--password-file', '--temp-dir', '--partial-dir',
  '--compare-dest', '--copy-dest', '--link-dest', '--chmod', '--chown', '--usermap', '--groupmap', '--block-size',
  '--max-size', '--min-size', '--max-delete', '--timeout', '--contimeout', '--port', '--bwlimit', '--out-format',
  '--modify-window', '--compress-level', '--compress-choice', '--checksum-choice', '--checksum-seed', '--sockopts',
  '--address', '--write-batch', '--only-write-batch', '--read-batch', '--protocol', '--iconv', '--skip-compress',
  '--info', '--debug', '--outbuf', '--stop-after', '--stop-at', '--remote-option', '--secluded-args', '--early-input',
]);

export function rsyncPaths(args: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false, opaque: [] };
  const ops = operands(args, 'eBfTM', RSYNC_LONG_ARG, (name, value) => {
    if (name === '-r' || name === '-a' || name === '--recursive' || name === '--archive') out.recursive = true;
    if (value && (name === '--files-from' || name === '--exclude-from' || name === '--include-from' || name === '--password-file' || name === '--read-batch')) out.reads.push(value);
    // --files-from names the files to copy in a file: files no word of the line names.
    if (name === '--files-from') out.opaque.push(unnamed('the files rsync --files-from reads names of'));
    if (value && (name === '--log-file' || name === '--write-batch' || name === '--only-write-batch')) out.writes.push(value);
  });
  copyLike(ops, out);
  return out;
}

export function scpPaths(args: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false, opaque: [] };
  const ops = operands(args, 'cFiJlloPSDX', new Set(), (name, value) => {
    if (name === '-r') out.recursive = true;
    if (value && (name === '-F' || name === '-i')) out.reads.push(value);
  });
  copyLike(ops, out);
  return out;
}

/** The last operand is the destination, the others the sources; remote ones are not local paths. */
function copyLike(ops: Word[], out: PathArgs): void {
  if (ops.length === 0) return;
  const dest = ops[ops.length - 1]!;
  const sources = ops.length > 1 ? ops.slice(0, -1) : ops;
  const local = sources.filter((w) => !isRemote(w));
  out.reads.push(...local);
  if (ops.length > 1 && !isRemote(dest)) out.writes.push(dest);
  if (local.length === 0) out.recursive = false;
}
