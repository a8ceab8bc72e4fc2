/**
 * `$HOME` in a path: `docker run -v $HOME/.npm:/root/.npm node:20 npm ci`,
 * `ls $HOME/.cache` or `cat "$HOME/.npmrc"` named files no check could
 * place (an expansion), so each was a safety ask in every mode and policy,
 * bypassPermissions too, where `~/.npm` was judged as the home directory's.
 * A word that is `$HOME` or `${HOME}` followed by plain path characters
 * (double quotes around it or not) is read as the home directory commands
 * run with, as `~/` is, when the line gives HOME no value (every other way
 * of giving it one is too complex to check already: arith.ts) and that home
 * is a plain path (no word splitting or pattern in it). Anything else in the
 * word keeps it an expansion.
 */
import type { BashAnalysis, Redirect, SimpleCommand, Word } from '../bash/types.js';

const HOME_WORD = /^(")?\$(?:HOME|\{HOME\})((?:\/[\w.@%+=:,/-]*)?)\1$/;
const PLAIN_HOME = /^\/[\w.@%+=:,/-]*$/;

export function withHomeExpanded(a: BashAnalysis, home: string | undefined): BashAnalysis {
  if (a.tooComplex !== undefined || home === undefined || !PLAIN_HOME.test(home)) return a;
  if (a.commands.some((c) => c.assignments.some((x) => x.name === 'HOME'))) return a;
  let changed = false;
  const word = (w: Word): Word => {
    if (w.literal) return w;
    const m = HOME_WORD.exec(w.raw);
    if (!m) return w;
    changed = true;
    return { raw: w.raw, value: home.replace(/\/$/, '') + m[2]!, literal: true, glob: false, tilde: false };
  };
  const redirects = new Map<Redirect, Redirect>();
  const redirect = (r: Redirect): Redirect => {
    let out = redirects.get(r);
    if (!out) {
      out = r.target ? { ...r, target: word(r.target) } : r;
      redirects.set(r, out);
    }
    return out;
  };
  const commands = a.commands.map(
    (c): SimpleCommand => ({
      ...c,
      argv: c.argv.map(word),
      redirects: c.redirects.map(redirect),
      ...(c.findRoots ? { findRoots: c.findRoots.map(word) } : {}),
    }),
  );
  const all = a.redirects.map(redirect);
  return changed ? { ...a, commands, redirects: all } : a;
}
