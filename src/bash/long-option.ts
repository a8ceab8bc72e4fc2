/**
 * Long options as git's parse-options (and getopt_long) read them: any
 * unambiguous prefix of a long option names it (`git config --fil=F`,
 * `git rebase --ex=CMD`, `sed --in`), with or without `=VALUE` attached.
 * The callers that ask "is this word option X" share this one reading, each
 * with the shortest prefix it takes for X (`min`, dashes counted): the
 * shorter prefixes are ambiguous among a verb's options and git refuses them,
 * and where a caller takes a shorter one it sees more, never less.
 */

/** The name of a long option as written, without an attached `=VALUE`. */
export function longOptionName(a: string): string {
  const eq = a.indexOf('=');
  return eq === -1 ? a : a.slice(0, eq);
}

/**
 * Whether `a` (an argument as written) is one of the long options `names`:
 * the whole name, or a prefix of one at least `min` characters long, with or
 * without `=VALUE`.
 */
export function isLongOption(a: string, names: readonly string[], min = 4): boolean {
  if (!a.startsWith('--')) return false;
  const given = longOptionName(a);
  return given.length >= min && names.some((n) => n.startsWith(given));
}
