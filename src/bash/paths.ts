/**
 * Which arguments of a command name files it reads or writes, for the
 * permission checks (Read and Edit rules, protected paths, working
 * directories). Covered: common file readers (cat, head, grep, sed, …),
 * file writers (rm, mv, cp, touch, mkdir, tee, sed -i, …), `cd`, and the
 * archivers and copy tools of bash/archive-paths.ts (tar, zip, unzip, rsync, scp).
 * Each command's options are listed with their arity (SPECS), so that an
 * option's value is not taken for a path nor a path for a value; an option
 * not listed, or one reading a list of file names (`--files0-from`), makes
 * the command opaque (PathArgs.opaque): what it reads cannot be judged. A
 * command not listed here names no paths as far as these checks go
 * (hasPathModel).
 */
import { rsyncPaths, scpPaths, tarPaths, unzipPaths, zipPaths } from './archive-paths.js';
import type { Word } from './types.js';
import { parseGitGlobals } from './git-globals.js';
import { isLongOption } from './long-option.js';
import { resolveLong } from './wrappers.js';
import { awkProgramFiles, sedScriptFiles } from './script-files.js';
import { wordTail } from './words.js';

export interface PathArgs {
  reads: Word[];
  writes: Word[];
  /** A command that reads directories recursively (`grep -r`, `rg`, `find`, `cp -r`, `mv`). */
  recursive: boolean;
  /**
   * Files the command reads (or writes) that no argument names, each shown by
   * the word responsible: an option the tables below do not know (its value
   * could be a file), an option reading a list of file names from a file or
   * standard input (`--files0-from=-`, `file -f`, `md5sum -c`), the names
   * xargs appends. What they reach cannot be judged: never allowed by the
   * command's content, and an unknown location while Read deny rules exist.
   */
  opaque: Word[];
}

/** What an option's value (or the option itself) means for the files a command touches. */
type FileRole =
  /** The value is a file read. */
  | 'read'
  /** The value is a colon-separated list of files read (`file -m a:b`). */
  | 'reads'
  /** The value is a file written. */
  | 'write'
  /** The value is a file read that lists other files read (`-` for standard input). */
  | 'list'
  /** The option makes the command read files its arguments do not name. */
  | 'opaque';

interface Spec {
  kind: 'read' | 'write' | 'copy';
  /**
   * The short options, as a getopt optstring: a letter alone is a flag,
   * `x:` takes a value (`-x v` or `-xv`), `x::` an optional one that can
   * only be attached (`-xv`). Digits listed are flags (`head -5`).
   */
  short: ReadonlyMap<string, Arity>;
  /** The long options (getopt_long: any unambiguous prefix is accepted). */
  long: ReadonlyMap<string, Arity>;
  /** Positionals before the paths that are not paths (a pattern, a script, a mode). */
  skip: number;
  files: Readonly<Record<string, FileRole>>;
}

/** A flag, an option with a value, one whose value can only be attached, or one taking this many words (jq's `--rawfile NAME FILE`). */
type Arity = 'flag' | 'arg' | 'opt' | number;

const HELP_LONG = '--help --version';

function shortTable(optstring: string): Map<string, Arity> {
  const m = new Map<string, Arity>();
  for (let i = 0; i < optstring.length; i++) {
    const c = optstring[i]!;
    if (c === ':') continue;
    if (optstring[i + 1] === ':' && optstring[i + 2] === ':') m.set(c, 'opt');
    else m.set(c, optstring[i + 1] === ':' ? 'arg' : 'flag');
  }
  return m;
}

/** `--name` a flag, `--name=` takes a value, `--name=?` an optional one (attached with `=`), `--name=2` two words. */
function longTable(spec: string): Map<string, Arity> {
  const m = new Map<string, Arity>();
  for (const o of `${spec} ${HELP_LONG}`.split(/\s+/)) {
    if (!o) continue;
    const eq = o.indexOf('=');
    if (eq === -1) m.set(o, 'flag');
    else {
      const a = o.slice(eq + 1);
      m.set(o.slice(0, eq), a === '' ? 'arg' : a === '?' ? 'opt' : Number(a));
    }
  }
  return m;
}

interface SpecInput {
  short?: string;
  long?: string;
  skip?: number;
  files?: Readonly<Record<string, FileRole>>;
}

function spec(kind: Spec['kind'], i: SpecInput): Spec {
  return { kind, short: shortTable(i.short ?? ''), long: longTable(i.long ?? ''), skip: i.skip ?? 0, files: i.files ?? {} };
}
const READ = (i: SpecInput = {}): Spec => spec('read', i);
const WRITE = (i: SpecInput = {}): Spec => spec('write', i);
const COPY = (i: SpecInput = {}): Spec => spec('copy', i);

const DIGITS = '0123456789';
const SUMS = READ({ short: 'bctwz', long: '--binary --check --quiet --status --text --warn --strict --tag --ignore-missing --zero', files: { '-c': 'opaque', '--check': 'opaque' } });
const BASE = READ({ short: 'diw:', long: '--decode --ignore-garbage --wrap=' });
const GREP = READ({
  short: `${DIGITS}A:B:C:D:EFGHIJLNPRTUVX:abcd:e:f:hilm:noqrsuvwxyZz`,
  long:
    '--after-context= --basic-regexp --before-context= --binary --binary-files= --byte-offset --color=? --colour=? --context= --count ' +
    '--dereference-recursive --devices= --directories= --exclude-dir= --exclude-from= --exclude= --extended-regexp --file= ' +
    '--files-with-matches --files-without-match --fixed-strings --group-separator= --ignore-case --include= --initial-tab ' +
    '--invert-match --label= --line-buffered --line-number --line-regexp --max-count= --no-filename --no-group-separator ' +
    '--no-ignore-case --no-messages --null --null-data --only-matching --perl-regexp --quiet --recursive --regexp= --silent ' +
    '--text --with-filename --word-regexp --unix-byte-offsets',
  skip: 1,
  files: { '-f': 'read', '--file': 'read', '--exclude-from': 'read' },
});
const PGREP = READ({
  short: 'd:lavwcfg:G:inoO:P:s:t:u:U:xF:Lr:AHeq:',
  long:
    '--delimiter= --list-name --list-full --inverse --lightweight --count --full --pgroup= --group= --ignore-case --newest --oldest ' +
    '--older= --parent= --session= --terminal= --euid= --uid= --exact --pidfile= --logpidfile --runstates= --ignore-ancestors ' +
    '--require-handler --cgroup= --ns= --nslist= --env= --signal= --queue= --echo',
  skip: Number.POSITIVE_INFINITY,
  files: { '-F': 'read', '--pidfile': 'read' },
});
/** pkill's and pidwait's first word may be a signal (`-9`, `-HUP`, `-SIGTERM`), not an option. */
const SIGNAL_WORD =
  /^-(\d+|(SIG)?(HUP|INT|QUIT|ILL|TRAP|ABRT|IOT|BUS|FPE|KILL|USR1|SEGV|USR2|PIPE|ALRM|TERM|STKFLT|CHLD|CLD|CONT|STOP|TSTP|TTIN|TTOU|URG|XCPU|XFSZ|VTALRM|PROF|WINCH|IO|POLL|PWR|SYS|UNUSED|RTMIN|RTMAX|RTMIN\+\d+|RTMAX-\d+))$/i;
const CHOWN_LONG = '--changes --dereference --no-dereference --no-preserve-root --preserve-root --quiet --silent --recursive --reference= --verbose';

/**
 * Every option of each command, checked against its manual (GNU coreutils
 * 9, util-linux, binutils, file 5, jq 1.6/1.7, ripgrep 13/14, tree 2):
 * which take a value, and which name files. An option not listed makes the
 * command opaque (see PathArgs.opaque): a wrongly guessed arity would hide a
 * path, so nothing is guessed.
 */
const SPECS: Readonly<Record<string, Spec>> = {
  cat: READ({ short: 'benstuvAET', long: '--number --number-nonblank --show-all --show-ends --show-nonprinting --show-tabs --squeeze-blank' }),
  head: READ({ short: `c:n:qvz${DIGITS}`, long: '--bytes= --lines= --quiet --silent --verbose --zero-terminated' }),
  tail: READ({
    short: `c:n:fFqs:vz${DIGITS}`,
    long: '--bytes= --follow=? --lines= --max-unchanged-stats= --pid= --quiet --retry --silent --sleep-interval= --verbose --zero-terminated --debug',
  }),
  wc: READ({ short: 'clLmw', long: '--bytes --chars --lines --files0-from= --max-line-length --words --total= --debug', files: { '--files0-from': 'list' } }),
  stat: READ({ short: 'c:fLt', long: '--cached= --dereference --file-system --format= --printf= --terse' }),
  diff: READ({
    short: `${DIGITS}abBcC:dD:eEfF:hHiI:lL:nNpPqrsS:tTuU:vwW:x:X:yZ`,
    long:
      '--brief --color=? --context=? --ed --exclude-from= --exclude= --expand-tabs --from-file= --to-file= --horizon-lines= --ifdef= ' +
      '--ignore-all-space --ignore-blank-lines --ignore-case --ignore-file-name-case --ignore-matching-lines= --ignore-space-change ' +
      '--ignore-tab-expansion --ignore-trailing-space --initial-tab --label= --left-column --line-format= --old-line-format= ' +
      '--new-line-format= --unchanged-line-format= --old-group-format= --new-group-format= --unchanged-group-format= ' +
      '--changed-group-format= --minimal --new-file --no-dereference --no-ignore-file-name-case --normal --paginate --palette= --rcs ' +
      '--recursive --report-identical-files --show-c-function --show-function-line= --side-by-side --speed-large-files ' +
      '--starting-file= --strip-trailing-cr --suppress-blank-empty --suppress-common-lines --tabsize= --text --unidirectional-new-file ' +
      '--unified=? --width= --binary',
    files: { '--from-file': 'read', '--to-file': 'read', '-X': 'read', '--exclude-from': 'read' },
  }),
  cmp: READ({ short: 'bci:ln:sv', long: '--print-bytes --print-chars --ignore-initial= --verbose --bytes= --quiet --silent' }),
  comm: READ({ short: '123z', long: '--check-order --nocheck-order --output-delimiter= --total --zero-terminated' }),
  cut: READ({ short: 'b:c:d:f:nsz', long: '--bytes= --characters= --delimiter= --fields= --only-delimited --output-delimiter= --complement --zero-terminated' }),
  nl: READ({
    short: 'h:b:f:v:i:pl:s:w:n:d:',
    long:
      '--header-numbering= --body-numbering= --footer-numbering= --starting-line-number= --line-increment= --no-renumber ' +
      '--join-blank-lines= --number-separator= --number-width= --number-format= --section-delimiter=',
  }),
  tac: READ({ short: 'brs:', long: '--before --regex --separator=' }),
  rev: READ({ short: '0hV', long: '--zero' }),
  paste: READ({ short: 'd:sz', long: '--serial --delimiters= --zero-terminated' }),
  join: READ({ short: 'a:e:i1:2:j:o:t:v:z', long: '--ignore-case --check-order --nocheck-order --zero-terminated --header' }),
  column: READ({
    short: 'C:c:dE:eFH:hi:Jjl:LN:n:O:o:p:R:r:s:S:T:tVW:x',
    long:
      '--table --table-name= --table-order= --table-columns= --table-columns-limit= --table-noextreme= --table-noheadings ' +
      '--table-header-repeat --table-hide= --table-right= --table-truncate= --table-wrap= --keep-empty-lines --json --tree= ' +
      '--tree-id= --tree-parent= --output-width= --output-separator= --separator= --fillrows --table-column= --use-spaces=',
  }),
  fold: READ({ short: `bsw:${DIGITS}`, long: '--bytes --spaces --width=' }),
  fmt: READ({ short: `${DIGITS}cstuw:p:g:`, long: '--crown-margin --prefix= --split-only --tagged-paragraph --uniform-spacing --width= --goal=' }),
  expand: READ({ short: `it:${DIGITS}`, long: '--initial --tabs=' }),
  unexpand: READ({ short: `at:${DIGITS}`, long: '--all --first-only --tabs=' }),
  od: READ({
    short: 'A:aBbcDdeFfHhIij:LlN:OoS:st:vw::Xx',
    long: '--address-radix= --endian= --format= --output-duplicates --read-bytes= --skip-bytes= --strings=? --traditional --width=?',
  }),
  hexdump: READ({
    short: 'bcCde:f:L::n:os:vxXhV',
    long: '--one-byte-octal --one-byte-char --one-byte-hex --canonical --two-bytes-decimal --two-bytes-octal --two-bytes-hex --color=? --format= --format-file= --length= --skip= --no-squeezing',
    files: { '-f': 'read', '--format-file': 'read' },
  }),
  strings: READ({
    short: `adfhHn:wot:e:T:s:U:Vv${DIGITS}`,
    long: '--all --data --print-file-name --bytes= --radix= --include-all-whitespace --target= --encoding= --unicode= --output-separator=',
  }),
  md5sum: SUMS,
  sha1sum: SUMS,
  sha224sum: SUMS,
  sha256sum: SUMS,
  sha384sum: SUMS,
  sha512sum: SUMS,
  b2sum: READ({
    short: 'bcl:twz',
    long: '--binary --check --length= --quiet --status --text --warn --strict --tag --ignore-missing --zero',
    files: { '-c': 'opaque', '--check': 'opaque' },
  }),
  cksum: READ({
    short: 'a:l:bcrtwz',
    long: '--algorithm= --base64 --check --debug --length= --raw --tag --untagged --text --binary --warn --strict --status --quiet --ignore-missing --zero',
    files: { '-c': 'opaque', '--check': 'opaque' },
  }),
  base64: BASE,
  base32: BASE,
  less: READ({
    short: 'aAbBcCdeEfFgGiIJKLmMnNqQrRsSuUVwWXz:x:y:h:j:k:o:O:p:P:t:T:D:#:~',
    files: { '-k': 'read', '-o': 'write', '-O': 'write', '-T': 'read' },
  }),
  more: READ({ short: `dlfpcsun:${DIGITS}`, long: '--silent --logical --no-pause --print-over --clean-print --squeeze --plain --lines=' }),
  file: READ({
    short: '0bcCde:f:F:hiklLm:nNpP:rsSvzZ',
    long:
      '--magic-file= --uncompress --uncompress-noreport --brief --checking-printout --exclude= --exclude-quiet= --files-from= ' +
      '--separator= --mime --apple --extension --mime-type --mime-encoding --keep-going --list --dereference --no-dereference ' +
      '--no-buffer --no-pad --print0 --preserve-date --parameter= --raw --special-files --no-sandbox --compile --debug',
    files: { '-m': 'reads', '--magic-file': 'reads', '-f': 'list', '--files-from': 'list' },
  }),
  ls: READ({
    short: 'abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1',
    long:
      '--all --almost-all --author --escape --block-size= --ignore-backups --color=? --directory --dired --classify=? --file-type ' +
      '--format= --full-time --group-directories-first --no-group --human-readable --si --dereference-command-line ' +
      '--dereference-command-line-symlink-to-dir --hide= --hyperlink=? --indicator-style= --inode --ignore= --kibibytes ' +
      '--dereference --numeric-uid-gid --literal --hide-control-chars --show-control-chars --quote-name --quoting-style= ' +
      '--reverse --recursive --size --sort= --time= --time-style= --tabsize= --width= --context --zero',
  }),
  tree: READ({
    short: 'adlfxRqNQpugshDFvtcUrCnASiXJL:P:I:o:H:T:',
    long:
      '--noreport --charset= --filelimit= --timefmt= --sort= --du --si --prune --info --infofile= --gitignore --gitfile= ' +
      '--ignore-case --matchdirs --metafirst --dirsfirst --filesfirst --nolinks --hintro= --houtro= --fromfile --fromtabfile ' +
      '--fflinks --inodes --device --opt-toggle',
    files: { '-o': 'write', '--infofile': 'read', '--gitfile': 'read' },
  }),
  du: READ({
    short: '0abd:chHklmst:xB:DLPSX:',
    long:
      '--null --all --apparent-size --block-size= --bytes --total --max-depth= --human-readable --inodes --kilobytes --count-links ' +
      '--dereference --dereference-args --no-dereference --separate-dirs --si --summarize --threshold= --time=? --time-style= ' +
      '--one-file-system --exclude-from= --exclude= --files0-from=',
    files: { '-X': 'read', '--exclude-from': 'read', '--files0-from': 'list' },
  }),
  realpath: READ({ short: 'eLmPqsz', long: '--canonicalize-existing --canonicalize-missing --logical --physical --quiet --relative-base= --relative-to= --no-symlinks --strip --zero' }),
  readlink: READ({ short: 'efmnqsvz', long: '--canonicalize --canonicalize-existing --canonicalize-missing --no-newline --quiet --silent --verbose --zero' }),
  source: READ(),
  '.': READ(),
  sort: READ({
    short: 'bcCdfghik:mMno:rRsS:t:T:uVy:z',
    long:
      '--batch-size= --buffer-size= --check=? --compress-program= --debug --dictionary-order --field-separator= --files0-from= ' +
      '--general-numeric-sort --human-numeric-sort --ignore-case --ignore-leading-blanks --ignore-nonprinting --key= --merge ' +
      '--month-sort --numeric-sort --output= --parallel= --random-sort --random-source= --reverse --sort= --stable ' +
      '--temporary-directory= --unique --version-sort --zero-terminated',
    // -T: its temporary files are written in that directory.
    files: { '-o': 'write', '--output': 'write', '--files0-from': 'list', '--random-source': 'read', '-T': 'write', '--temporary-directory': 'write' },
  }),
  uniq: READ({
    short: `${DIGITS}Dcdf:is:uw:z`,
    long: '--all-repeated=? --count --repeated --group=? --ignore-case --skip-fields= --skip-chars= --check-chars= --unique --zero-terminated',
  }),
  jq: READ({
    // jq parses its own options: clusters of letters, values in the next word only.
    short: 'cnesrjaRCMShVbf0L:',
    long:
      '--seq --stream --stream-errors --slurp --raw-input --null-input --compact-output --tab --indent= --color-output ' +
      '--monochrome-output --ascii-output --unbuffered --sort-keys --raw-output --raw-output0 --join-output --nul-output ' +
      '--exit-status --arg=2 --argjson=2 --slurpfile=2 --rawfile=2 --args --jsonargs --from-file --library-path= --seq ' +
      '--debug-dump-disasm --debug-trace --build-configuration --binary --strip-comments',
    skip: 1,
    files: { '--slurpfile': 'read', '--rawfile': 'read', '-L': 'opaque', '--library-path': 'opaque' },
  }),
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  zgrep: GREP,
  rg: READ({
    short: 'A:B:C:E:M:T:e:f:g:j:m:r:t:d:abcFhHiIlLnNopqsSuUvVwxz0.',
    long:
      '--after-context= --auto-hybrid-regex --before-context= --binary --block-buffered --byte-offset --case-sensitive --color= ' +
      '--colors= --column --context= --context-separator= --count --count-matches --crlf --debug --trace --dfa-size-limit= ' +
      '--encoding= --engine= --field-context-separator= --field-match-separator= --file= --files --files-with-matches ' +
      '--files-without-match --fixed-strings --follow --glob= --glob-case-insensitive --heading --hidden --iglob= ' +
      '--ignore-case --ignore-file= --ignore-file-case-insensitive --include-zero --invert-match --json --line-buffered ' +
      '--line-number --line-regexp --max-columns= --max-columns-preview --max-count= --max-depth= --maxdepth= --max-filesize= --mmap ' +
      '--multiline --multiline-dotall --no-config --no-filename --no-heading --no-ignore --null --null-data --one-file-system ' +
      '--only-matching --passthru --passthrough --path-separator= --pcre2 --pcre2-version --pre= --pre-glob= --pretty --quiet ' +
      '--regex-size-limit= --regexp= --replace= --search-zip --smart-case --sort= --sortr= --sort-files --stats --text --threads= ' +
      '--trim --type= --type-add= --type-clear= --type-list --type-not= --unrestricted --vimgrep --with-filename --word-regexp ' +
      '--unicode --hyperlink-format= --generate= --stop-on-nonmatch --line-number',
    skip: 1,
    files: { '-f': 'read', '--file': 'read', '--ignore-file': 'read', '--pre': 'opaque' },
  }),
  sed: READ({
    short: 'bsnrzuEe:f:l:i::',
    long:
      '--binary --debug --expression= --file= --follow-symlinks --in-place=? --line-length= --null-data --zero-terminated ' +
      '--posix --quiet --silent --regexp-extended --sandbox --separate --unbuffered',
    skip: 1,
    files: { '-f': 'read', '--file': 'read' },
  }),
  awk: READ({
    // gawk's and mawk's options.
    short: 'F:f:v:W:e:E:i:l:bcCd::D::gL::nNo::Op::MPrsStVYh',
    long:
      '--field-separator= --file= --assign= --characters-as-bytes --traditional --copyright --dump-variables=? --debug=? --source= ' +
      '--exec= --gen-pot --include= --load= --lint=? --bignum --use-lc-numeric --non-decimal-data --pretty-print=? --optimize ' +
      '--profile=? --posix --re-interval --no-optimize --sandbox --lint-old --version',
    skip: 1,
    // gawk's -l loads a shared library; -d, -p and -o write the variables, a profile or the program to a file (default names in the working directory).
    files: {
      '-f': 'read', '--file': 'read', '-E': 'read', '--exec': 'read', '-i': 'read', '--include': 'read', '-W': 'opaque',
      '-l': 'opaque', '--load': 'opaque', '-d': 'opaque', '--dump-variables': 'opaque', '-p': 'opaque', '--profile': 'opaque', '-o': 'opaque', '--pretty-print': 'opaque',
    },
  }),
  date: READ({
    short: 'd:f:I::r:Rs:u',
    long: '--date= --debug --file= --iso-8601=? --reference= --resolution --rfc-3339= --rfc-email --set= --universal --utc',
    // The positional is a format or a date to set, not a path.
    skip: Number.POSITIVE_INFINITY,
    files: { '-f': 'read', '--file': 'read', '-r': 'read', '--reference': 'read' },
  }),
  // procps-ng 4: the pattern is not a path; -F reads a pid file (pgrep is read-only, the file is still a read).
  pgrep: PGREP,
  pkill: PGREP,
  pidwait: PGREP,
  rm: WRITE({ short: 'dfirvIR', long: '--force --interactive=? --one-file-system --no-preserve-root --preserve-root=? --recursive --dir --verbose' }),
  rmdir: WRITE({ short: 'pv', long: '--ignore-fail-on-non-empty --parents --verbose' }),
  unlink: WRITE(),
  shred: WRITE({ short: 'fn:s:uvxz', long: '--force --iterations= --size= --random-source= --remove=? --verbose --exact --zero', files: { '--random-source': 'read' } }),
  touch: WRITE({ short: 'acd:fhmr:t:', long: '--time= --no-create --date= --reference= --no-dereference', files: { '-r': 'read', '--reference': 'read' } }),
  mkdir: WRITE({ short: 'pm:vZ', long: '--context=? --mode= --parents --verbose' }),
  tee: WRITE({ short: 'aip', long: '--append --ignore-interrupts --output-error=?' }),
  truncate: WRITE({ short: 'cor:s:', long: '--no-create --io-blocks --reference= --size=', files: { '-r': 'read', '--reference': 'read' } }),
  chmod: WRITE({ short: 'Rcfv', long: '--changes --silent --quiet --verbose --no-preserve-root --preserve-root --reference= --recursive', skip: 1, files: { '--reference': 'read' } }),
  chown: WRITE({ short: 'HLPRcfhv', long: `${CHOWN_LONG} --from=`, skip: 1, files: { '--reference': 'read' } }),
  chgrp: WRITE({ short: 'HLPRcfhv', long: CHOWN_LONG, skip: 1, files: { '--reference': 'read' } }),
  mv: COPY({
    short: 'bfinS:t:TuvZ',
    long:
      '--backup=? --context --debug --exchange --force --interactive --no-clobber --no-copy --strip-trailing-slashes --suffix= ' +
      '--target-directory= --no-target-directory --update=? --verbose',
  }),
  cp: COPY({
    short: 'abdfHilLnprst:uvxPRS:TZ',
    long:
      '--archive --attributes-only --backup=? --copy-contents --debug --dereference --force --interactive --link --no-clobber ' +
      '--no-dereference --no-preserve= --no-target-directory --one-file-system --parents --path --preserve=? --recursive --reflink=? ' +
      '--remove-destination --sparse= --strip-trailing-slashes --suffix= --symbolic-link --target-directory= --update=? --verbose ' +
      '--keep-directory-symlink --context=?',
  }),
  ln: COPY({
    short: 'bdfinrsvFLPS:t:T',
    long: '--backup=? --directory --force --interactive --logical --no-dereference --no-target-directory --physical --relative --suffix= --symbolic --target-directory= --verbose',
  }),
  link: COPY(),
  install: COPY({
    short: 'bcCdDg:m:o:psS:t:TvZ',
    long:
      '--backup=? --compare --directory --group= --mode= --owner= --preserve-timestamps --strip --strip-program= --suffix= ' +
      '--target-directory= --no-target-directory --verbose --preserve-context --context=? --debug',
  }),
};

const ARCHIVERS: Readonly<Record<string, (args: readonly Word[]) => PathArgs>> = {
  tar: tarPaths,
  xxd: xxdPaths,
  gtar: tarPaths,
  bsdtar: tarPaths,
  zip: zipPaths,
  unzip: unzipPaths,
  rsync: rsyncPaths,
  scp: scpPaths,
};

/** Commands whose pattern/script positional is replaced by -e/-f options when those are given. */
const PATTERN_OPTS: Readonly<Record<string, readonly string[]>> = {
  grep: ['-e', '-f', '--regexp', '--file'],
  egrep: ['-e', '-f', '--regexp', '--file'],
  fgrep: ['-e', '-f', '--regexp', '--file'],
  zgrep: ['-e', '-f', '--regexp', '--file'],
  rg: ['-e', '-f', '--regexp', '--file'],
  sed: ['-e', '-f', '--expression', '--file'],
  awk: ['-f', '--file', '-E', '--exec', '-e', '--source'],
  jq: ['-f', '--from-file'],
};

/** The commands acceptEdits auto-allows inside the working directories (Claude Code's modeValidation). */
export const ACCEPT_EDITS_COMMANDS: ReadonlySet<string> = new Set(['mkdir', 'touch', 'rm', 'rmdir', 'mv', 'cp', 'sed']);

export function commandName(argv: readonly Word[]): string | undefined {
  const h = argv[0];
  if (!h || !h.literal) return undefined;
  return h.value.includes('/') ? h.value.slice(h.value.lastIndexOf('/') + 1) : h.value;
}

/** Other names of a modelled program (the implementations `awk` may be). */
const ALIASES: Readonly<Record<string, string>> = { gawk: 'awk', mawk: 'awk', nawk: 'awk', gsed: 'sed' };

function modelName(name: string | undefined): string | undefined {
  return name !== undefined && Object.hasOwn(ALIASES, name) ? ALIASES[name] : name;
}

/** Whether a command has a model of the files its arguments name here. */
export function hasPathModel(command: string): boolean {
  const name = modelName(command)!;
  return Object.hasOwn(SPECS, name) || Object.hasOwn(ARCHIVERS, name) || ['cd', 'pushd', 'find', 'dd', 'git', 'history'].includes(name);
}

interface Option {
  /** The option's full name (`-f`, `--files0-from`). */
  name: string;
  /** Its value (the last word of a multi-word value). */
  value: Word | undefined;
  word: Word;
}


/** `chmod -w file`: a mode that starts with a dash. */
const CHMOD_MODE = /^-[rwxXstugoa0-7,+=-]+$/;

/**
 * Splits a command's arguments as getopt_long does (options anywhere, `--`
 * ends them): the options with their values, the operands, and the words
 * holding an option the spec does not know.
 */
function parseArgs(name: string, args: readonly Word[], s: Spec): { options: Option[]; operands: Word[]; unknown: Word[] } {
  const options: Option[] = [];
  const ops: Word[] = [];
  const unknown: Word[] = [];
  let done = false;
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const v = w.value;
    if (done || !w.literal || !v.startsWith('-') || v === '-') {
      ops.push(w);
      continue;
    }
    if (v === '--') {
      done = true;
      continue;
    }
    if (name === 'chmod' && CHMOD_MODE.test(v) && !/^-[Rcfv]+$/.test(v)) {
      ops.push(w);
      continue;
    }
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const long = resolveLong(eq === -1 ? v : v.slice(0, eq), s.long);
      const arity = long === undefined ? undefined : s.long.get(long);
      if (long === undefined || arity === undefined || (arity === 'flag' && eq !== -1) || (typeof arity === 'number' && eq !== -1)) {
        unknown.push(w);
        continue;
      }
      if (arity === 'arg') options.push({ name: long, word: w, value: eq !== -1 ? wordTail(w, eq + 1) : args[++i] });
      else if (arity === 'opt') options.push({ name: long, word: w, value: eq !== -1 ? wordTail(w, eq + 1) : undefined });
      else if (typeof arity === 'number') {
        i += arity;
        options.push({ name: long, word: w, value: args[i] });
      } else options.push({ name: long, word: w, value: undefined });
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const c = v[j]!;
      const arity = s.short.get(c);
      if (arity === undefined) {
        unknown.push(w);
        break;
      }
      if (arity === 'flag') {
        options.push({ name: `-${c}`, word: w, value: undefined });
        continue;
      }
      const rest = j < v.length - 1 ? wordTail(w, j + 1) : undefined;
      options.push({ name: `-${c}`, word: w, value: arity === 'arg' ? (rest ?? args[++i]) : rest });
      break;
    }
  }
  return { options, operands: ops, unknown };
}

/**
 * grep's options as its getopt_long reads them: each option's value taken (the word after `-e`,
 * `-f` or `--exclude-dir` is that option's value whatever it spells: `grep -r -e --exclude=.env
 * SECRET .` searches for the text `--exclude=.env`), abbreviations resolved (`--exclu=`), nothing
 * after `--`; `afterOperand`: the option stands past the first operand, where getopt stops under
 * POSIXLY_CORRECT. Undefined when a word is an expansion (it may split into options) or an option
 * grep's table does not know.
 */
export function grepOptions(argv: readonly Word[]): ReadonlyArray<{ name: string; value: Word | undefined; afterOperand: boolean }> | undefined {
  const name = commandName(argv);
  const spec = name !== undefined && Object.hasOwn(SPECS, name) ? SPECS[name] : undefined;
  if (!spec || spec !== SPECS.grep || argv.some((w) => !w.literal)) return undefined;
  const { options, operands, unknown } = parseArgs(name!, argv.slice(1), spec);
  if (unknown.length > 0) return undefined;
  // With POSIXLY_CORRECT in its environment, getopt stops at the first operand: an option past it is a file name.
  const first = operands.length > 0 ? argv.indexOf(operands[0]!) : argv.length;
  return options.map((o) => ({ name: o.name, value: o.value, afterOperand: argv.indexOf(o.word) > first }));
}

const RECURSIVE_FLAGS = /^-[A-Za-z]*[rR][A-Za-z]*$/;

/** A word standing for file names that only exist when the command runs (the names xargs supplies). */
export function hiddenNames(raw: string): Word {
  return { raw, value: raw, literal: false, glob: false, tilde: false };
}

/** git options (of the read verbs) that read files outside git's own object store and index. */
const GIT_FILE_OPTIONS = ['--no-index', '--untracked', '--contents', '--pathspec-from-file', '--exclude-from', '--exclude-per-directory', '--ignore-revs-file', '--file', '--blob', '--orderfile', '--output'];

/**
 * Whether a git argument reads a file that git does not track (see GIT_FILE_OPTIONS; also `-O<orderfile>`, `-f <file>`, `ls-files -X <file>`).
 * git's parse-options accepts any unambiguous prefix of a long option (`git config --fil=F --list`, `git blame --cont=F`).
 */
export function gitReadsFiles(verb: string | undefined, a: string): boolean {
  if (isLongOption(a, GIT_FILE_OPTIONS, 3)) return true;
  if (a.startsWith('-O') && !a.startsWith('--')) return true;
  if ((verb === 'grep' || verb === 'config') && /^-[A-Za-z]*f/.test(a) && !a.startsWith('--')) return true;
  if (verb === 'blame' && /^-[A-Za-z]*S/.test(a) && !a.startsWith('--')) return true;
  // A list of paths read from stdin: `echo .env | git hash-object -w --stdin-paths`, `git update-index --add --stdin`.
  if ((verb === 'hash-object' && a === '--stdin-paths') || (verb === 'update-index' && a === '--stdin')) return true;
  // ls-files -X FILE is --exclude-from=FILE.
  if (verb === 'ls-files' && /^-[A-Za-z]*X/.test(a) && !a.startsWith('--')) return true;
  return false;
}

/**
 * The files git writes where an option says (`log`/`diff`/`show --output=F`,
 * by any abbreviation git accepts; `format-patch -o DIR`, `--output-directory`;
 * `archive -o F`): `Bash(git log:*)` must not let `git log --output=.claude/settings.json`
 * past the protected paths or Edit deny rules.
 */
function gitOutputs(args: readonly Word[]): Word[] {
  const out: Word[] = [];
  const dashO = args.some((w) => w.literal && (w.value === 'format-patch' || w.value === 'archive'));
  // checkout-index --prefix=P writes every file it checks out at P<path> (`--prefix=.git/hooks/`).
  if (args.some((w) => w.literal && w.value === 'checkout-index')) {
    for (const w of args) if (w.literal && w.value.startsWith('--prefix=') && w.value.length > 9) out.push(wordTail(w, 9));
  }
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    if (!w.literal) continue;
    if (w.value === '--') break;
    if (w.value.startsWith('--')) {
      if (!isLongOption(w.value, ['--output', '--output-directory'], 5)) continue;
      const eq = w.value.indexOf('=');
      const value = eq === -1 ? args[i + 1] : wordTail(w, eq + 1);
      if (value) out.push(value);
    } else if (dashO && /^-o/.test(w.value)) {
      const value = w.value.length > 2 ? wordTail(w, 2) : args[i + 1];
      if (value) out.push(value);
    }
  }
  return out;
}

/** git verbs whose `-F FILE` / `--file=FILE` is a message read from a file (shown later by `git log`, `git show`). */
const GIT_MESSAGE_FILE_VERBS: ReadonlySet<string> = new Set(['commit', 'tag', 'notes', 'merge']);
/**
 * git verbs whose operands are files they read: a blob hashed and stored, a
 * patch, an mbox, files mailed, and files staged (`git add .env` puts it in
 * the object store, where `git push` or `git bundle` carries it away).
 */
/** `stage` is git's other name for `add`. */
const GIT_FILE_OPERAND_VERBS: ReadonlySet<string> = new Set(['hash-object', 'apply', 'am', 'send-email', 'add', 'stage', 'update-index']);

/**
 * The files a git verb reads where an option or its operands say: a commit,
 * tag or note message from `-F FILE` (or `--file`, any abbreviation), a
 * commit template (`-t`, `--template`), and the operands of hash-object,
 * apply, am, send-email, add and update-index (named files; a directory
 * given is not read as a tree here). With Read(./.env) denied, `git commit -F .env`
 * under Bash(git commit:*) put .env in a message `git log` prints.
 */
function gitInputs(verb: string | undefined, rest: readonly Word[]): Word[] {
  if (verb === undefined) return [];
  const out: Word[] = [];
  const messages = GIT_MESSAGE_FILE_VERBS.has(verb);
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (!w.literal) continue;
    const v = w.value;
    if (v === '--') {
      if (GIT_FILE_OPERAND_VERBS.has(verb)) out.push(...rest.slice(i + 1));
      break;
    }
    if (v.startsWith('--')) {
      const names = [...(messages ? ['--file'] : []), ...(verb === 'commit' ? ['--template'] : [])];
      if (isLongOption(v, names)) {
        const eq = v.indexOf('=');
        const value = eq === -1 ? rest[++i] : wordTail(w, eq + 1);
        if (value) out.push(value);
      }
      continue;
    }
    if (v.startsWith('-') && v.length > 1) {
      const letters = verb === 'commit' ? 'Ft' : messages ? 'F' : '';
      const at = [...v.slice(1)].findIndex((c) => letters.includes(c));
      if (at !== -1) {
        const value = at + 2 < v.length ? wordTail(w, at + 2) : rest[++i];
        if (value) out.push(value);
      }
      continue;
    }
    if (GIT_FILE_OPERAND_VERBS.has(verb)) out.push(w);
  }
  return out;
}

/**
 * git verbs whose operands are files opened by the name given, never pathspecs: `git am
 * patches/*.patch` (the shell's glob, expanded and judged name by name), `git apply '*.diff'`
 * (the one file of that name).
 */
const GIT_LITERAL_FILE_VERBS: ReadonlySet<string> = new Set(['am', 'apply', 'hash-object']);

/** A pathspec git expands itself: a wildcard, or magic other than the top of the tree (`:/`). */
const GIT_PATHSPEC_PATTERN = /[*?[]|^:(?!\/?\.?$)/;

/**
 * A git verb's operands: every word after `--` (then `dashes`), and before it each word that is no
 * option. `option` sees each option word and its index, and answers the index of the last word it
 * takes (`i + 1` for a value in the next word), or false to give up the scan (undefined).
 */
export function gitOperands(rest: readonly Word[], option: (w: Word, i: number) => number | false): { operands: Word[]; dashes: boolean } | undefined {
  const operands: Word[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i]!;
    if (w.literal && w.value === '--') return { operands: [...operands, ...rest.slice(i + 1)], dashes: true };
    if (w.literal && w.value.startsWith('-') && w.value.length > 1) {
      const last = option(w, i);
      if (last === false) return undefined;
      i = last;
      continue;
    }
    operands.push(w);
  }
  return { operands, dashes: false };
}

/**
 * `git mv SRC… DST` moves files as mv does (a source is read where it leads, and goes away;
 * with Read(./.env) denied, `git mv .env x` then `cat x` printed it), and `git rm PATH…`
 * deletes them (not with --cached).
 */
function gitMovesAndRemoves(verb: string, rest: readonly Word[], out: PathArgs): void {
  if (verb !== 'mv' && verb !== 'rm') return;
  let cached = false;
  const { operands } = gitOperands(rest, (w, i) => {
    // Not `--cached=…` (git refuses it): that word is not taken for --cached, whose operands are then not judged as deleted.
    if (!w.value.includes('=') && isLongOption(w.value, ['--cached'])) cached = true;
    // git rm --pathspec-from-file=F: a list of names (opaque, as for other commands).
    if (w.value.startsWith('--pathspec-f')) out.opaque.push(w);
    return i;
  })!;
  for (const w of operands) if (GIT_PATHSPEC_PATTERN.test(w.value)) out.opaque.push(w);
  if (verb === 'mv') {
    const sources = operands.slice(0, -1);
    out.reads.push(...sources);
    out.writes.push(...sources, ...operands.slice(-1));
  } else if (!cached) out.writes.push(...operands);
}

/**
 * `git restore PATH…` and `git checkout [TREE-ISH] [--] PATH…` write the files they name in the
 * work tree, with any content a commit holds: with Edit(./src/**) denied, `git checkout other --
 * src/a.ts` replaced it. Every operand of restore is a path; checkout's after `--`, and after the
 * first when there is no `--` (the first is a tree-ish or a path, which only the repository tells:
 * gitCheckoutFirst). Not with -b/-B/--orphan (a branch made, no path), nor --pathspec-from-file
 * (a list of names: opaque).
 */
function gitRestores(verb: string, rest: readonly Word[], out: PathArgs): void {
  if (verb !== 'restore' && verb !== 'checkout') return;
  const scan = gitOperands(rest, (w, i) => {
    if (w.value.startsWith('--pathspec-f')) out.opaque.push(w);
    if (verb === 'checkout' && (/^-[A-Za-z]*[bB]$/.test(w.value) || isLongOption(w.value, ['--orphan']))) return false;
    // Options whose value is the next word: restore's -s/--source, checkout's --conflict takes it attached.
    return verb === 'restore' && (w.value === '-s' || w.value === '--source') ? i + 1 : i;
  });
  if (!scan) return;
  const { operands, dashes } = scan;
  const paths = verb === 'checkout' && !dashes ? operands.slice(1) : operands;
  for (const w of paths) (GIT_PATHSPEC_PATTERN.test(w.value) ? out.opaque : out.writes).push(w);
}

/**
 * `git merge-file [-p] CURRENT BASE OTHER` reads the three files (work tree files, not tracked
 * contents: `git merge-file -p .env x y` printed .env) and writes the merge into CURRENT, unless -p
 * prints it. `-L LABEL` takes the next word.
 */
function gitMergeFile(verb: string, rest: readonly Word[], out: PathArgs): void {
  if (verb !== 'merge-file') return;
  let stdout = false;
  const { operands } = gitOperands(rest, (w, i) => {
    if (w.value === '-p' || isLongOption(w.value, ['--stdout'])) stdout = true;
    return w.value === '-L' ? i + 1 : i;
  })!;
  out.reads.push(...operands);
  if (!stdout && operands[0]) out.writes.push(operands[0]);
}

/** `git checkout X` with no `--`: X, which is a path when no revision of that name exists (bash-paths.ts judges it by what is on disk). */
export function gitCheckoutFirst(argv: readonly Word[]): Word | undefined {
  if (commandName(argv) !== 'git') return undefined;
  const args = argv.slice(1);
  const verbAt = parseGitGlobals(argv).verbAt - 1;
  if (verbAt < 0 || verbAt >= args.length || !args[verbAt]!.literal || args[verbAt]!.value !== 'checkout') return undefined;
  const rest = args.slice(verbAt + 1);
  if (rest.some((w) => w.literal && (w.value === '--' || /^-[A-Za-z]*[bB]$/.test(w.value) || isLongOption(w.value, ['--orphan'])))) return undefined;
  return rest.find((w) => !(w.literal && w.value.startsWith('-') && w.value.length > 1));
}

/** The paths an (unwrapped) argv reads and writes. */
export function pathArgs(argv: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false, opaque: [] };
  const name = modelName(commandName(argv));
  if (name === undefined) return out;
  const args = argv.slice(1);
  if (name === 'cd' || name === 'pushd') {
    const t = args.find((w) => !(w.literal && /^-[LPe@]+$/.test(w.value)));
    if (t) out.reads.push(t);
    return out;
  }
  if (name === 'find') return findPaths(args);
  if (name === 'history') {
    // history -a/-w [FILE] writes the history list (which `history -s TEXT` fills) to FILE; -r/-n [FILE] reads one.
    let mode: 'read' | 'write' | undefined;
    let i = 0;
    for (; i < args.length; i++) {
      const w = args[i]!;
      if (!w.literal) {
        out.opaque.push(w);
        return out;
      }
      if (w.value === '--') {
        i++;
        break;
      }
      if (!w.value.startsWith('-') || w.value === '-') break;
      if (/[sp]/.test(w.value)) return out;
      if (/[aw]/.test(w.value)) mode = 'write';
      else if (/[rn]/.test(w.value)) mode ??= 'read';
    }
    if (mode) {
      const file = args[i];
      if (file) (mode === 'write' ? out.writes : out.reads).push(file);
      else out.opaque.push(args[i - 1] ?? argv[0]!);
    }
    return out;
  }
  if (name === 'dd') {
    for (const w of args) {
      if (w.literal && w.value.startsWith('if=')) out.reads.push(wordTail(w, 3));
      if (w.literal && w.value.startsWith('of=')) out.writes.push(wordTail(w, 3));
    }
    return out;
  }
  if (name === 'git') {
    // Read verbs reading files git does not track (`diff --no-index`, `grep --untracked`, `blame --contents`): not modelled.
    // The verb: the first word past git's global options (`-C dir`, `-c k=v` take the next word).
    let verbAt = parseGitGlobals(argv).verbAt - 1;
    if (verbAt >= args.length || !args[verbAt]!.literal) verbAt = -1;
    const verb = verbAt === -1 ? undefined : args[verbAt]!.value;
    for (const w of args) if (!w.literal || gitReadsFiles(verb, w.value)) out.opaque.push(w);
    // `git diff a b` with a path outside the repository (or no repository) is
    // `git diff --no-index`: it prints files. Its operands are reads (a
    // revision read as a path inside the workspace harms nothing).
    if (verb === 'diff') for (const w of args.slice(verbAt + 1)) if (w.literal && !w.value.startsWith('-')) out.reads.push(w);
    out.writes.push(...gitOutputs(args));
    // A pathspec git matches itself (`git add '*.env'`, `':(icase).ENV'`, `':/.env'`) names files no path check sees.
    for (const w of gitInputs(verb, args.slice(verbAt + 1))) (GIT_PATHSPEC_PATTERN.test(w.value) && !GIT_LITERAL_FILE_VERBS.has(verb!) ? out.opaque : out.reads).push(w);
    if (verb !== undefined) gitMovesAndRemoves(verb, args.slice(verbAt + 1), out);
    if (verb !== undefined) gitRestores(verb, args.slice(verbAt + 1), out);
    if (verb !== undefined) gitMergeFile(verb, args.slice(verbAt + 1), out);
    return out;
  }
  const archiver = Object.hasOwn(ARCHIVERS, name) ? ARCHIVERS[name] : undefined;
  if (archiver) return archiver(args);
  const spec = Object.hasOwn(SPECS, name) ? SPECS[name] : undefined;
  if (!spec) return out;
  const parsed = (name === 'pkill' || name === 'pidwait') && args[0]?.literal && SIGNAL_WORD.test(args[0].value) ? args.slice(1) : args;
  const { options, operands: positionals, unknown } = parseArgs(name, parsed, spec);
  out.opaque.push(...unknown);
  // A word that is an expansion may split into several, options among them, wherever it stands.
  for (const w of args) if (!w.literal) out.opaque.push(w);
  const given = (...names: string[]): boolean => options.some((o) => names.includes(o.name));
  for (const o of options) {
    const role = spec.files[o.name];
    if (role === undefined) continue;
    if (role === 'opaque') {
      out.opaque.push(o.word);
      continue;
    }
    if (!o.value) continue;
    if (role === 'read') out.reads.push(o.value);
    else if (role === 'write') out.writes.push(o.value);
    else if (role === 'reads') {
      if (!o.value.literal) out.reads.push(o.value);
      else for (const part of o.value.value.split(':')) if (part) out.reads.push({ ...o.value, raw: part, value: part });
    } else {
      // A list of names: the list is read, and so is every file it names.
      if (!(o.value.literal && o.value.value === '-')) out.reads.push(o.value);
      out.opaque.push(o.word);
    }
  }
  if (name === 'sed' || name === 'awk') scriptPaths(name, options, positionals, out);
  // strings and other binutils read more options from `@file`, wherever the word stands (an option's value too: `strings -s @.env f`).
  if (name === 'strings') for (const w of args) if (!w.literal || w.value.startsWith('@')) out.opaque.push(w);
  // jq's modules (`import`, `include`, -L) are files too.
  if (name === 'jq') for (const w of args) if (!w.literal || /\b(import|include)\b/.test(w.value)) out.opaque.push(w);
  let skip = spec.skip;
  const patternOpts = PATTERN_OPTS[name];
  if (patternOpts && options.some((o) => patternOpts.includes(o.name))) skip = 0;
  if ((name === 'chmod' || name === 'chown' || name === 'chgrp') && given('--reference')) skip = 0;
  const files = positionals.slice(skip);
  if (spec.kind === 'read') {
    if (name === 'sed' && given('-i', '--in-place')) {
      out.writes.push(...files);
      // A backup suffix with a `/` (or an expansion) puts the copy elsewhere (`--in-place='/etc/cron.d/*'`): not modelled.
      for (const o of options) {
        if ((o.name === '-i' || o.name === '--in-place') && o.value && (!o.value.literal || o.value.value.includes('/'))) out.opaque.push(o.word);
      }
    } else if ((name === 'uniq' || name === 'xxd') && files.length >= 2) {
      out.reads.push(files[0]!);
      out.writes.push(...files.slice(1));
    } else out.reads.push(...files);
    if (name === 'rg') out.recursive = true;
    if ((name === 'grep' || name === 'egrep' || name === 'fgrep' || name === 'zgrep' || name === 'diff') && given('-r', '-R', '--recursive', '--dereference-recursive')) {
      out.recursive = true;
    }
    // grep -d recurse (--directories=recurse, or any value but read and skip) is -r.
    if ((name === 'grep' || name === 'egrep' || name === 'fgrep' || name === 'zgrep') && options.some((o) => (o.name === '-d' || o.name === '--directories') && !(o.value?.literal && (o.value.value === 'read' || o.value.value === 'skip')))) {
      out.recursive = true;
    }
    // diff given a directory compares the files inside it, and prints whole those on one side only (-N):
    // a directory operand reads what it holds. Which operand is a directory is not known here: as a reader of trees.
    if (name === 'diff' && given('-N', '--new-file', '--unidirectional-new-file')) out.recursive = true;
    return out;
  }
  if (spec.kind === 'write') {
    out.writes.push(...files);
    // An option not known to a writer may name what it writes too.
    out.writes.push(...unknown);
    return out;
  }
  // copy-like: the target (last positional or -t) is written; the sources are read (their content is
  // what the target then holds, under another name) and, for mv, also removed: written.
  const target = options.filter((o) => o.name === '-t' || o.name === '--target-directory').flatMap((o) => (o.value ? [o.value] : []));
  const sources = target.length > 0 ? files : files.slice(0, -1);
  const dest = target.length > 0 ? target : files.slice(-1);
  out.writes.push(...dest, ...unknown);
  out.reads.push(...sources);
  if (name === 'mv') out.writes.push(...sources);
  // mv moves whole trees; cp -r/-R/-a copies them: every file below a source is read.
  if (name === 'mv' || (name === 'cp' && given('-r', '-R', '-a', '--recursive', '--archive'))) out.recursive = sources.length > 0;
  return out;
}

/** gawk's options that write a file (-d, -p, -o) or load code (-l). */
const AWK_WRITES = ['-l', '--load', '-d', '--dump-variables', '-p', '--profile', '-o', '--pretty-print'];

/**
 * The files a sed script or an awk program names in its text (script-files.ts).
 * A script read from a file (`-f`) cannot be seen: opaque, unless the
 * command runs sandboxed (`--sandbox`: no files but its operands, no programs).
 */
function scriptPaths(name: 'sed' | 'awk', options: readonly Option[], positionals: readonly Word[], out: PathArgs): void {
  // gawk's -d, -p and -o write a file (named or not) even sandboxed; -l loads code: opaque (SPECS), and uncertain writes.
  if (name === 'awk') for (const o of options) if (AWK_WRITES.includes(o.name)) out.writes.push(o.word);
  if (options.some((o) => o.name === '--sandbox')) return;
  const fromFile = name === 'sed' ? ['-f', '--file'] : ['-f', '--file', '-E', '--exec', '-i', '--include'];
  const inline = name === 'sed' ? ['-e', '--expression'] : ['-e', '--source'];
  // What such a script writes (`w`, `e`, awk's `print >`) is not known either: an uncertain write as
  // well as a read, so that an Edit deny rule (`Edit(./out)`) is not passed by `awk '{ print > "out" }'`.
  const file = options.find((o) => fromFile.includes(o.name));
  if (file) {
    out.opaque.push(file.word);
    out.writes.push(file.word);
    return;
  }
  const given = options.filter((o) => inline.includes(o.name));
  const parts = given.length > 0 ? given.flatMap((o) => (o.value ? [o.value] : [])) : positionals.slice(0, 1);
  // An expansion is opaque already (pathArgs).
  if (parts.length === 0 || parts.some((w) => !w.literal)) return;
  const script = parts.map((w) => w.value).join('\n');
  const found = name === 'sed' ? sedScriptFiles(script) : awkProgramFiles(script);
  const at = parts[0]!;
  const word = (v: string): Word => ({ raw: v, value: v, literal: true, glob: false, tilde: false });
  out.reads.push(...found.reads.map(word));
  out.writes.push(...found.writes.map(word));
  if (found.opaque) {
    out.opaque.push(at);
    out.writes.push(at);
  }
}

/** The options of xxd (its own parser: single-dash long names, any prefix of them, values attached or not). */
const XXD_VALUE = new Set(['c', 'g', 'l', 'n', 'o', 's', 'R']);
const XXD_FLAG = /^-(a|autoskip|b|bits|C|capitalize|d|e|E|EBCDIC|h|help|i|include|p|ps|postscript|plain|r|revert|u|uppercase|v|version)$/;

function xxdPaths(args: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: false, opaque: [] };
  const files: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const v = w.value;
    if (!w.literal || !v.startsWith('-') || v === '-') {
      files.push(w);
      continue;
    }
    if (v === '--') {
      files.push(...args.slice(i + 1));
      break;
    }
    if (XXD_FLAG.test(v)) continue;
    if (XXD_VALUE.has(v[1]!)) {
      // `-s 10`, `-seek 10`, `-s10`, `-s+10`, `-s -10`. xxd also takes the next word for any word that starts
      // like a long name (`-skip`, `-lenx`, `-colsy`): a spelling other than these is not guessed.
      if (v.length === 2 || /^-(cols|groupsize|len|name|offset|seek|skip)$/.test(v)) i++;
      else if (!/^-[a-zA-Z][+-]?(0[xX][0-9a-fA-F]+|\d+)$/.test(v)) out.opaque.push(w);
      continue;
    }
    out.opaque.push(w);
  }
  if (files[0]) out.reads.push(files[0]);
  out.writes.push(...files.slice(1));
  return out;
}

/** find's starting points (after -H/-L/-P/-D/-O), the files its tests read and write. */
function findPaths(args: readonly Word[]): PathArgs {
  const out: PathArgs = { reads: [], writes: [], recursive: true, opaque: [] };
  let i = 0;
  while (i < args.length && args[i]!.literal && /^-([HLP]+|O\d*|D)$/.test(args[i]!.value)) i += args[i]!.value === '-D' ? 2 : 1;
  for (; i < args.length; i++) {
    const w = args[i]!;
    if (w.literal && (w.value.startsWith('-') || w.value === '(' || w.value === '!')) break;
    out.reads.push(w);
  }
  for (let k = i; k < args.length; k++) {
    const w = args[k]!;
    if (!w.literal) continue;
    if (w.value === '-files0-from') {
      const list = args[k + 1];
      if (list && !(list.literal && list.value === '-')) out.reads.push(list);
      out.opaque.push(w);
    } else if (/^-(fprint|fprint0|fprintf|fls)$/.test(w.value)) {
      const f = args[k + 1];
      if (f) out.writes.push(f);
    }
  }
  // -delete removes what it matches below its starting points (the current directory when none is named):
  // a write of each, as `rm -r` of them is.
  if (args.some((w) => w.literal && w.value === '-delete')) {
    const roots = out.reads.filter((w) => !out.opaque.includes(w));
    out.writes.push(...(roots.length > 0 ? roots : [{ raw: '.', value: '.', literal: true, glob: false, tilde: false }]));
  }
  return out;
}
