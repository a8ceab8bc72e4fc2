/**
 * Files that sed and awk programs name inside their script text, for the path
 * model (paths.ts): `sed 'r .env' x`, `sed -n '1R .env' x`, `sed 's/a/b/w out'
 * x` and `awk '{ while ((getline l < ".env") > 0) print l }'` read and write
 * files that no argument names, so a Read or Edit deny rule on them was not
 * seen once `Bash(sed:*)` or `Bash(awk:*)` allowed the command.
 *
 * sed scripts are parsed (GNU sed's grammar: addresses, `{}`, `s` and `y`
 * with any delimiter, text commands, labels): the file of `r`, `R`, `w`, `W`
 * and of the `w` flag of `s` is a read or a write; `e` (the command and the
 * flag) runs a program, and anything not understood, make the script opaque.
 * awk is a language: a program that redirects (`>`, `>>`, `|`, `getline <`),
 * calls `system` or loads code (`@include`, `@load`) is opaque, as its files
 * cannot be told from the text.
 */

export interface ScriptFiles {
  reads: string[];
  writes: string[];
  /** The script reaches files or programs that cannot be listed. */
  opaque: boolean;
}

const NO_ARG = new Set(['=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F']);
const NUMBER_ARG = new Set(['q', 'Q', 'l', 'L']);
const LABEL_ARG = new Set(['b', 't', 'T', ':']);
const TEXT_ARG = new Set(['a', 'i', 'c']);
/** GNU sed's special files, by their exact names: `/dev/stdin/.env` is `./.env` when standard input is the directory (`< .`). */
const SPECIAL_FILES: ReadonlySet<string> = new Set(['/dev/stdin', '/dev/stdout', '/dev/stderr']);
const FILE_ARG: Readonly<Record<string, 'read' | 'write'>> = { r: 'read', R: 'read', w: 'write', W: 'write' };

/** The files a GNU sed script (its -e parts joined by newlines) reads and writes. */
export function sedScriptFiles(script: string): ScriptFiles {
  const out: ScriptFiles = { reads: [], writes: [], opaque: false };
  const s = script;
  let i = 0;
  const n = s.length;
  const blank = (c: string | undefined): boolean => c === ' ' || c === '\t';
  const skipBlanks = (): void => {
    while (i < n && blank(s[i])) i++;
  };
  /** The rest of the line (a file name, a text), without its newline. */
  const restOfLine = (): string => {
    const end = s.indexOf('\n', i);
    const v = s.slice(i, end === -1 ? n : end);
    i = end === -1 ? n : end + 1;
    return v;
  };
  /** Skips a delimited part (`/re/`, the halves of `s` and `y`); false when it does not end. */
  const delimited = (d: string): boolean => {
    while (i < n) {
      const c = s[i]!;
      if (c === '\\') i += 2;
      else if (c === d) {
        i++;
        return true;
      } else if (c === '\n' && d !== '\n') return false;
      else i++;
    }
    return false;
  };
  const address = (): boolean => {
    const c = s[i];
    if (c === undefined) return true;
    if (/[0-9]/.test(c)) {
      while (i < n && /[0-9~]/.test(s[i]!)) i++;
      return true;
    }
    if (c === '$') {
      i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      let d = '/';
      if (c === '\\') {
        d = s[i + 1] ?? '';
        if (d === '' || d === '\n' || d === '\\') return false;
        i++;
      }
      i++;
      if (!delimited(d)) return false;
      while (i < n && (s[i] === 'I' || s[i] === 'M')) i++;
    }
    return true;
  };
  while (i < n) {
    const c0 = s[i]!;
    if (blank(c0) || c0 === '\n' || c0 === ';') {
      i++;
      continue;
    }
    if (c0 === '#') {
      restOfLine();
      continue;
    }
    if (!address()) return { ...out, opaque: true };
    skipBlanks();
    if (s[i] === ',') {
      i++;
      skipBlanks();
      if (s[i] === '+' || s[i] === '~') i++;
      if (!address()) return { ...out, opaque: true };
      skipBlanks();
    }
    while (s[i] === '!' || blank(s[i])) i++;
    const cmd = s[i];
    if (cmd === undefined) return { ...out, opaque: true };
    i++;
    if (cmd === '{' || cmd === '}') continue;
    if (NO_ARG.has(cmd)) continue;
    if (NUMBER_ARG.has(cmd)) {
      skipBlanks();
      while (i < n && /[0-9]/.test(s[i]!)) i++;
      continue;
    }
    if (LABEL_ARG.has(cmd)) {
      // GNU sed 4.9 ends a label at whitespace, `;`, `}` or `#` (`:a w out` labels `a`, then writes `out`).
      skipBlanks();
      while (i < n && !/[\s;}#]/.test(s[i]!)) i++;
      continue;
    }
    if (TEXT_ARG.has(cmd)) {
      // The text runs to the end of the line, a backslash before a newline continuing it.
      while (i < n && s[i] !== '\n') i += s[i] === '\\' ? 2 : 1;
      continue;
    }
    const role = FILE_ARG[cmd];
    if (role !== undefined) {
      skipBlanks();
      const file = restOfLine();
      if (file === '' || SPECIAL_FILES.has(file)) continue;
      (role === 'read' ? out.reads : out.writes).push(file);
      continue;
    }
    if (cmd === 's' || cmd === 'y') {
      const d = s[i];
      if (d === undefined || d === '\n' || d === '\\') return { ...out, opaque: true };
      i++;
      if (!delimited(d) || !delimited(d)) return { ...out, opaque: true };
      if (cmd === 'y') continue;
      // Flags: g, p, i/I, m/M, a number, e (runs the pattern space), w FILE (to the end of the line).
      while (i < n && /[gpiImM0-9e]/.test(s[i]!)) {
        if (s[i] === 'e') out.opaque = true;
        i++;
      }
      if (s[i] === 'w') {
        i++;
        skipBlanks();
        const file = restOfLine();
        if (file !== '' && !SPECIAL_FILES.has(file)) out.writes.push(file);
      }
      continue;
    }
    // `e` runs a command; `v`, anything else: not followed further.
    return { ...out, opaque: true };
  }
  return out;
}

/**
 * Redirection, pipes to or from commands, system(), loaded code, gawk's
 * indirect calls (`f = "system"; @f("id")`), and the operand list a program
 * can fill itself (`ARGV[1] = ".env"; ARGC = 2`, `split(s, ARGV)`, gawk's
 * `SYMTAB`): what an awk program reaches beyond its operands.
 */
const AWK_REACHES = /\bgetline\b|\bsystem\s*\(|(^|[^|])\|(?!\|)|@\s*[A-Za-z_]|\b(ARGV|SYMTAB)\b/;

/** The files an awk program reaches beyond its operands: none it can tell, or opaque. */
export function awkProgramFiles(program: string): ScriptFiles {
  // Two everyday outputs reach nothing: a message to standard error or output by its special name
  // (`print "bad line" > "/dev/stderr"`), and a pipe to sort with options that only order lines
  // (`print k, n | "sort -rn"`; not -o, -T or --compress-program). Only where the statement plainly
  // ends after the name (a constant string, nothing concatenated to it).
  const end = String.raw`(?=[ \t]*(?:[;}\n]|$))`;
  const harmless = new RegExp(String.raw`>>?[ \t]*"/dev/std(?:err|out)"${end}|\|[ \t]*"sort(?: -(?:[bfghnruV]+|k ?\d+(?:,\d+)?[bfghnrV]*|t ?[^\s"\\]))*"${end}`, 'g');
  const p = program.replace(harmless, ' ');
  // `>` is a comparison too; it redirects only in a print or printf statement. Where that statement
  // ends cannot be told without parsing strings and regexes (`print "};" > "out"`, a newline after a
  // comma): any `>` after a print is taken as one.
  const opaque = AWK_REACHES.test(p) || /\bprintf?\b[\s\S]*>/.test(p);
  return { reads: [], writes: [], opaque };
}
