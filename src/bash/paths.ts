/**
 * Which arguments of a command name files it reads or writes, for the
 * permission checks (Read and Edit rules, protected paths, working
 * directories). Covered: common file readers (cat, head, grep, sed, …),
 * file writers (rm, mv, cp, touch, mkdir, tee, sed -i, …), `cd`, and the
 * archivers and copy tools of bash/archive-paths.ts (tar, zip, unzip, rsync, scp).
 * Options that take a value are skipped so their values are not taken for
 * paths. A command not listed here names no paths as far as these checks go.
 */
import { operands, rsyncPaths, scpPaths, tarPaths, unzipPaths, zipPaths } from './archive-paths.js';
import type { Word } from './types.js';

export interface PathArgs {
  reads: Word[];
  writes: Word[];
  /** A command that reads directories recursively (`grep -r`, `rg`, `find`, `cp -r`). */
  recursive: boolean;
}

interface Spec {
  /** Short options that take a value. */
  arg?: string;
  /** Long options that take a value when not written `--opt=value`. */
  longArg?: readonly string[];
  /** Positionals before the paths that are not paths (a pattern, a script, a mode). */
  skip?: number;
  /** What the remaining positionals are. */
  kind: 'read' | 'write' | 'copy';
}

const READ = (arg = '', skip = 0, longArg: readonly string[] = []): Spec => ({ arg, skip, longArg, kind: 'read' });
const WRITE = (arg = '', skip = 0, longArg: readonly string[] = []): Spec => ({ arg, skip, longArg, kind: 'write' });

const SPECS: Readonly<Record<string, Spec>> = {
  cat: READ(),
  head: READ('nc'),
  tail: READ('ncs'),
  wc: READ(),
  stat: READ('c', 0, ['--format', '--printf']),
  diff: READ('xXLFIU', 0, ['--label', '--exclude', '--exclude-from', '--ignore-matching-lines']),
  cmp: READ('in'),
  comm: READ(),
  cut: READ('dfbc', 0, ['--delimiter', '--fields', '--bytes', '--characters', '--output-delimiter']),
  nl: READ('bdfhilnsvw'),
  tac: READ('s'),
  rev: READ(),
  paste: READ('d'),
  join: READ('aejot12'),
  column: READ('csto'),
  fold: READ('w'),
  fmt: READ('pw'),
  expand: READ('t'),
  unexpand: READ('t'),
  od: READ('AjNtw'),
  hexdump: READ('eefnsC'),
  strings: READ('ntoe'),
  md5sum: READ(),
  sha1sum: READ(),
  sha256sum: READ(),
  sha512sum: READ(),
  cksum: READ(),
  base64: READ('w'),
  less: READ(),
  more: READ(),
  file: READ('mfFP'),
  ls: READ('IwT', 0, ['--ignore', '--hide', '--width', '--tabsize', '--format', '--sort', '--time', '--color', '--block-size']),
  tree: READ('ILPo', 0, ['--filelimit', '--timefmt', '--charset']),
  du: READ('BdtX', 0, ['--exclude', '--max-depth', '--threshold', '--block-size', '--time-style']),
  realpath: READ(),
  readlink: READ(),
  source: READ('', 0),
  '.': READ('', 0),
  sort: READ('kStTo', 0, ['--key', '--field-separator', '--buffer-size', '--temporary-directory', '--output', '--parallel', '--batch-size']),
  uniq: READ('fsw', 0, ['--skip-fields', '--skip-chars', '--check-chars']),
  jq: READ('f', 1, ['--arg', '--argjson', '--slurpfile', '--rawfile', '--indent', '--from-file']),
  grep: READ('efmABCdD', 1, ['--regexp', '--file', '--max-count', '--after-context', '--before-context', '--context', '--include', '--exclude', '--exclude-dir', '--label', '--color', '--colour', '--binary-files', '--devices', '--directories']),
  rg: READ('efgtTmABCMjE', 1, ['--regexp', '--file', '--glob', '--iglob', '--type', '--type-not', '--max-count', '--after-context', '--before-context', '--context', '--max-columns', '--threads', '--encoding', '--replace', '--max-depth', '--type-add', '--sort', '--sortr', '--color', '--colors', '--pre', '--pre-glob']),
  sed: READ('efl', 1, ['--expression', '--file', '--line-length']),
  awk: READ('fvF', 1, ['--file', '--assign', '--field-separator']),
  xxd: READ('slcgo', 0, ['-seek', '-len', '-cols', '-groupsize']),
  rm: WRITE(),
  rmdir: WRITE(),
  unlink: WRITE(),
  shred: WRITE('nsu'),
  touch: WRITE('dtr', 0, ['--date', '--reference']),
  mkdir: WRITE('m', 0, ['--mode', '--context']),
  tee: WRITE(),
  truncate: WRITE('sr', 0, ['--size', '--reference']),
  chmod: WRITE('', 1, ['--reference']),
  chown: WRITE('', 1, ['--reference', '--from']),
  chgrp: WRITE('', 1, ['--reference']),
  mv: { arg: 'StZ', longArg: ['--suffix', '--target-directory', '--backup'], kind: 'copy' },
  cp: { arg: 'StZ', longArg: ['--suffix', '--target-directory', '--backup', '--reflink', '--sparse', '--preserve'], kind: 'copy' },
  ln: { arg: 'St', longArg: ['--suffix', '--target-directory', '--backup'], kind: 'copy' },
  install: { arg: 'gmoStZ', longArg: ['--group', '--mode', '--owner', '--suffix', '--target-directory'], kind: 'copy' },
};

const ARCHIVERS: Readonly<Record<string, (args: readonly Word[]) => PathArgs>> = {
  tar: tarPaths,
  gtar: tarPaths,
  bsdtar: tarPaths,
  zip: zipPaths,
  unzip: unzipPaths,
  rsync: rsyncPaths,
  scp: scpPaths,
};

const GREP_SPEC = SPECS.grep!;
const ALIASES: Readonly<Record<string, Spec>> = { egrep: GREP_SPEC, fgrep: GREP_SPEC, zgrep: GREP_SPEC };

/** Commands whose pattern/script positional is replaced by -e/-f options when those are given. */
const PATTERN_OPTS: Readonly<Record<string, readonly string[]>> = {
  grep: ['-e', '-f', '--regexp', '--file'],
  egrep: ['-e', '-f', '--regexp', '--file'],
  fgrep: ['-e', '-f', '--regexp', '--file'],
  zgrep: ['-e', '-f', '--regexp', '--file'],
  rg: ['-e', '-f', '--regexp', '--file'],
  sed: ['-e', '-f', '--expression', '--file'],
  awk: ['-f', '--file'],
  jq: ['-f', '--from-file'],
};

/** The commands acceptEdits auto-allows inside the working directories (Claude Code's modeValidation). */
export const ACCEPT_EDITS_COMMANDS: ReadonlySet<string> = new Set(['mkdir', 'touch', 'rm', 'rmdir', 'mv', 'cp', 'sed']);

export function commandName(argv: readonly Word[]): string | undefined {
  const h = argv[0];
  if (!h || !h.literal) return undefined;
  return h.value.includes('/') ? h.value.slice(h.value.lastIndexOf('/') + 1) : h.value;
}

function usesPatternOption(name: string, args: readonly Word[]): boolean {
  const opts = PATTERN_OPTS[name];
  if (!opts) return false;
  return args.some((w) => {
    const v = w.value;
    if (opts.includes(v) || opts.some((o) => o.startsWith('--') && v.startsWith(`${o}=`))) return true;
    // A short cluster ending in the option letter: `-ie pattern`.
    return /^-[A-Za-z]+$/.test(v) && opts.some((o) => o.length === 2 && v.endsWith(o[1]!));
  });
}

/** Each spec's long options with values, as a set (made once). */
const longArgs = new WeakMap<Spec, ReadonlySet<string>>();

/** Splits arguments into option values and positionals. */
function positionalsOf(args: readonly Word[], spec: Spec): { positionals: Word[]; optionValues: Map<string, Word[]> } {
  const optionValues = new Map<string, Word[]>();
  let longArg = longArgs.get(spec);
  if (!longArg) longArgs.set(spec, (longArg = new Set(spec.longArg ?? [])));
  const positionals = operands(args, spec.arg ?? '', longArg, (name, value) => {
    if (value === undefined) return;
    const l = optionValues.get(name);
    if (l) l.push(value);
    else optionValues.set(name, [value]);
  });
  return { positionals, optionValues };
}

const RECURSIVE_FLAGS = /^-[A-Za-z]*[rR][A-Za-z]*$/;

/** The paths an (unwrapped) argv reads and writes. */
export function pathArgs(argv: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false };
  const name = commandName(argv);
  if (name === undefined) return out;
  const args = argv.slice(1);
  if (name === 'cd' || name === 'pushd') {
    const t = args.find((w) => !(w.literal && /^-[LPe@]+$/.test(w.value)));
    if (t) out.reads.push(t);
    return out;
  }
  if (name === 'find') {
    for (const w of args) {
      if (w.literal && (w.value.startsWith('-') || w.value === '(' || w.value === '!')) break;
      out.reads.push(w);
    }
    out.recursive = true;
    return out;
  }
  if (name === 'dd') {
    for (const w of args) {
      if (w.literal && w.value.startsWith('if=')) out.reads.push({ ...w, value: w.value.slice(3), raw: w.value.slice(3) });
      if (w.literal && w.value.startsWith('of=')) out.writes.push({ ...w, value: w.value.slice(3), raw: w.value.slice(3) });
    }
    return out;
  }
  const archiver = ARCHIVERS[name];
  if (archiver) return archiver(args);
  const spec = SPECS[name] ?? ALIASES[name];
  if (!spec) return out;
  const { positionals, optionValues } = positionalsOf(args, spec);
  const skip = usesPatternOption(name, args) ? 0 : (spec.skip ?? 0);
  const files = positionals.slice(skip);
  for (const k of ['-f', '--file', '--from-file', '--reference', '-r']) {
    if (k === '-r' && name !== 'touch' && name !== 'truncate') continue;
    for (const w of optionValues.get(k) ?? []) out.reads.push(w);
  }
  if (spec.kind === 'read') {
    if (name === 'sed' && args.some((w) => w.literal && (/^-[A-Za-z]*i/.test(w.value) || w.value.startsWith('--in-place')))) {
      out.writes.push(...files);
    } else if ((name === 'uniq' || name === 'xxd') && files.length >= 2) {
      out.reads.push(files[0]!);
      out.writes.push(...files.slice(1));
    } else out.reads.push(...files);
    for (const k of ['-o', '--output']) if (name === 'sort' || name === 'tree') for (const w of optionValues.get(k) ?? []) out.writes.push(w);
    if (name === 'rg') out.recursive = true;
    if ((name === 'grep' || name === 'egrep' || name === 'diff') && args.some((w) => w.literal && (RECURSIVE_FLAGS.test(w.value) || w.value === '--recursive' || w.value === '--dereference-recursive'))) {
      out.recursive = true;
    }
    return out;
  }
  if (spec.kind === 'write') {
    out.writes.push(...files);
    return out;
  }
  // copy-like: the target (last positional or -t) is written; sources are read (mv also removes them).
  const target = optionValues.get('-t') ?? optionValues.get('--target-directory');
  const sources = target ? files : files.slice(0, -1);
  const dest = target ?? files.slice(-1);
  out.writes.push(...dest);
  if (name === 'mv') out.writes.push(...sources);
  else out.reads.push(...sources);
  // cp -r/-R/-a copies whole trees: every file below a source is read.
  if (name === 'cp' && args.some((w) => w.literal && (/^-[A-Za-z]*[rRa][A-Za-z]*$/.test(w.value) || w.value === '--recursive' || w.value === '--archive'))) out.recursive = true;
  return out;
}
