/**
 * Whether a name matches a pattern whose only special characters are `*` (any run of characters)
 * and `?` (any one character), in O(pattern × name) steps: back to the last `*` on a mismatch.
 * A regular expression of `.*` or `[^/]*` runs backtracks without end: an ignore line
 * `*.*.*.*.*.*.*.*.*.*.*.*.zz` against a directory named `a.a.…a.b` (81 characters) held the event
 * loop 128 s, and `grep -r x src --exclude='*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'` with a file named of 60
 * a's in src never answered; every request of the service waited.
 */
export function starMatch(pattern: string, name: string, question = false): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      resume = n;
    } else if (c !== undefined && (c === name[n] || (question && c === '?'))) {
      p++;
      n++;
    } else if (star !== -1) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
