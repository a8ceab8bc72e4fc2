/**
 * Bash rule contents (Claude Code's shellRuleMatching) and the command
 * strings they are matched against.
 *
 *   `prefix:*`  the command is `prefix` or starts with `prefix ` (so `ls:*`
 *               never matches `lsof`); `xargs prefix …` also matches
 *   `a * b`     other unescaped `*` match any text (anchored; `\*` is a
 *               literal star, `\\` a literal backslash, in every kind of
 *               rule); a trailing ` *` makes the arguments optional: for
 *               an allow rule only when it is the rule's one unescaped star,
 *               as in Claude Code (`git *` matches `git`, `* run *` does not
 *               match `npm run`); for a deny or ask rule whatever its other
 *               stars (`* rm *` matches `xargs rm`), so that these never
 *               match less than they did
 *   `exact`     the whole command
 *
 * Each simple command is matched on its own (the analyser split compound
 * commands), with redirections left out. Deny and ask rules see every form
 * of it: as written, with quotes removed, with each wrapper and every
 * leading `VAR=` stripped, with a path-qualified command name reduced to its
 * base name, and for git without git's global options (`git -C . push` is
 * `git push` to them). Allow rules see only a canonical form in which each word is one
 * token (a word with spaces or operators is single-quoted), with Claude
 * Code's safe wrappers and safe variables stripped: a candidate that still
 * holds several commands or words joined by an escape cannot match a prefix
 * or wildcard.
 */
import type { Behavior } from '../permissions/types.js';
import { parseGitGlobals } from './git-globals.js';
import type { SimpleCommand, Word } from './types.js';
import { SAFE_ENV_VARS, unwrapStages } from './wrappers.js';

export interface CompiledBashRule {
  kind: 'prefix' | 'wildcard' | 'exact';
  test(candidate: string): boolean;
}

/**
 * A rule content's literal parts, split at its unescaped stars. `\*` is a literal star and `\\` a literal
 * backslash (Claude Code's shellRuleMatching), any other backslash is itself. Every kind of rule reads its
 * content here: the test for a star once read `\\` as a pair while the parsers did not, so `C:\\*` was
 * taken for a wildcard and then parsed as the literal `C:\*`, and a deny rule naming `C:\` and anything
 * after it denied only `C:\*`.
 */
function splitStars(s: string): string[] {
  const parts: string[] = [''];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    const next = s[i + 1];
    if (c === '\\' && (next === '*' || next === '\\')) {
      parts[parts.length - 1] += next;
      i++;
    } else if (c === '*') parts.push('');
    else parts[parts.length - 1] += c;
  }
  return parts;
}

/**
 * Compiles a Bash rule's content into a matcher of one command string, for a rule of this behaviour: the
 * behaviour decides only whether a trailing ` *` makes the arguments optional when the rule has other
 * stars too (see the top of this file). A hook's `if` condition is matched as a deny rule is: the hook runs
 * for every command a deny rule of that content would stop.
 */
export function compileBashRule(content: string, behavior: Behavior): CompiledBashRule {
  const text = content.trim();
  if (text.endsWith(':*')) {
    const head = splitStars(text.slice(0, -2));
    if (head.length === 1) {
      const prefix = head[0]!.trimEnd();
      const viaXargs = `xargs ${prefix}`;
      return {
        kind: 'prefix',
        test: (c) => c === prefix || c.startsWith(`${prefix} `) || c === viaXargs || c.startsWith(`${viaXargs} `),
      };
    }
  }
  // Literal parts between the stars. Matched by indexOf, leftmost first, in
  // time linear in the command per part: a regex of `.*`s backtracks, and a
  // rule with a few stars against a long command could hold the event loop
  // for minutes.
  const parts = splitStars(text);
  if (parts.length === 1) {
    const exact = parts[0]!;
    return { kind: 'exact', test: (c) => c === exact };
  }
  // A trailing unescaped ` *` makes the arguments optional: `git *` matches `git` too. Claude Code does so
  // only when that star is the rule's one unescaped star (shellRuleMatching), so an allow rule `* run *`
  // does not allow `npm run` alone. A deny or ask rule keeps it whatever the other stars: `* rm *` denied
  // `xargs rm` and `sudo rm` before this followed Claude Code, and a deny never matches less than it did.
  const beforeLast = parts[parts.length - 2]!;
  if (parts[parts.length - 1] === '' && beforeLast.endsWith(' ') && (behavior !== 'allow' || parts.length === 2)) {
    const withArgs = globMatcher(parts);
    const whole = globMatcher([...parts.slice(0, -2), beforeLast.slice(0, -1)]);
    return { kind: 'wildcard', test: (c) => whole(c) || withArgs(c) };
  }
  return { kind: 'wildcard', test: globMatcher(parts) };
}

/** A matcher for literal parts joined by stars (any run of characters, newlines too). */
function globMatcher(parts: readonly string[]): (c: string) => boolean {
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (parts.length === 1) return (c) => c === first;
  return (c) => {
    if (c.length < first.length + last.length || !c.startsWith(first) || !c.endsWith(last)) return false;
    const end = c.length - last.length;
    let at = first.length;
    for (let i = 1; i < parts.length - 1; i++) {
      const p = parts[i]!;
      if (p === '') continue;
      const found = c.indexOf(p, at);
      if (found === -1 || found + p.length > end) return false;
      at = found + p.length;
    }
    return true;
  };
}

const PLAIN_TOKEN = /^[A-Za-z0-9_@%+=:,./~^{}*?[\]!#-]+$/;

function quote(v: string): string {
  return `'${v.replace(/'/g, `'\\''`)}'`;
}

/** One token per word: plain words as they are, others single-quoted, expansions as written. */
export function canonicalJoin(words: readonly Word[]): string {
  return words
    .map((w) => {
      if (!w.literal) return w.raw;
      if (w.glob || w.tilde) return w.raw;
      return w.value.length > 0 && PLAIN_TOKEN.test(w.value) && !w.value.includes('*') ? w.value : quote(w.value);
    })
    .join(' ');
}

function rawJoin(words: readonly Word[]): string {
  return words.map((w) => w.raw).join(' ');
}

function valueJoin(words: readonly Word[]): string {
  return words.map((w) => w.value).join(' ');
}

function withBaseName(words: readonly Word[]): Word[] | undefined {
  const h = words[0];
  if (!h || !h.literal || !h.value.includes('/')) return undefined;
  const base = h.value.slice(h.value.lastIndexOf('/') + 1);
  return [{ ...h, raw: base, value: base }, ...words.slice(1)];
}

/**
 * A git command with git's global options (`-C dir`, `-c k=v`, `--no-pager`,
 * `--git-dir=…`, `-P`, `--exec-path=…`, `--namespace …`, …; read by
 * parseGitGlobals) removed, so that
 * `git -C . push` meets a `git push` rule; an alias set with `-c
 * alias.NAME=VALUE` is replaced by its value (a `!shell` alias by its shell
 * text). Undefined when the command is not git or has no global options. For
 * deny and ask rules only: an unknown option is dropped too, and a word that
 * is an expansion where an option may stand, since what it expands to is not
 * known (more candidates only make those rules stricter).
 */
export function withoutGitGlobals(words: readonly Word[]): Word[][] | undefined {
  const h = words[0];
  if (!h || !h.literal) return undefined;
  const base = h.value.slice(h.value.lastIndexOf('/') + 1);
  if (base !== 'git') return undefined;
  const g = parseGitGlobals(words);
  if (g.verbAt === 1 || g.verbAt >= words.length) return undefined;
  const aliases = new Map<string, string>();
  for (const { option, setting } of g.settings) {
    if (option !== '-c' || !setting?.literal) continue;
    const m = /^alias\.([^=]+)=(.*)$/is.exec(setting.value);
    if (m) aliases.set(m[1]!.toLowerCase(), m[2]!);
  }
  const rest = g.rest;
  const out: Word[][] = [[{ ...h, raw: 'git', value: 'git' }, ...rest]];
  const verb = rest[0]!;
  const alias = verb.literal ? aliases.get(verb.value.toLowerCase()) : undefined;
  if (alias !== undefined) {
    const toWords = (text: string): Word[] =>
      text
        .trim()
        .split(/\s+/)
        .filter((x) => x.length > 0)
        .map((x) => ({ ...verb, raw: x, value: x }));
    out.push(alias.startsWith('!') ? [...toWords(alias.slice(1)), ...rest.slice(1)] : [{ ...h, raw: 'git', value: 'git' }, ...toWords(alias), ...rest.slice(1)]);
  }
  return out;
}

/** Every spelling of a command that deny and ask rules are matched against. */
export function denyCandidates(cmd: SimpleCommand): string[] {
  const out = new Set<string>();
  const assign = cmd.assignments.map((a) => a.raw).join(' ');
  if (cmd.argv.length === 0) {
    if (assign) out.add(assign);
    return [...out];
  }
  if (assign) out.add(`${assign} ${rawJoin(cmd.argv)}`);
  const { stages } = unwrapStages(cmd.argv, false);
  for (const stage of stages) {
    for (const s of [stage, withBaseName(stage), ...(withoutGitGlobals(stage) ?? [])]) {
      if (!s || s.length === 0) continue;
      out.add(rawJoin(s));
      out.add(valueJoin(s));
      out.add(canonicalJoin(s));
    }
  }
  return [...out];
}

export interface AllowCandidates {
  /** Matched by every kind of rule. */
  canonical: string[];
  /** Matched by exact rules only (the words as written). */
  exactOnly: string[];
}

/** The spellings allow rules see: safe wrappers and safe variables stripped only. */
export function allowCandidates(cmd: SimpleCommand): AllowCandidates {
  const canonical = new Set<string>();
  const exactOnly = new Set<string>();
  const assign = cmd.assignments.map((a) => a.raw).join(' ');
  const safeAssign = cmd.assignments.every((a) => SAFE_ENV_VARS.has(a.name));
  const prefixes = assign ? (safeAssign ? ['', `${assign} `] : [`${assign} `]) : [''];
  if (cmd.argv.length === 0) return { canonical: assign ? [assign] : [], exactOnly: [] };
  const { stages } = unwrapStages(cmd.argv, true);
  for (const stage of stages) {
    for (const p of prefixes) {
      canonical.add(p + canonicalJoin(stage));
      exactOnly.add(p + rawJoin(stage));
    }
  }
  return { canonical: [...canonical], exactOnly: [...exactOnly] };
}
