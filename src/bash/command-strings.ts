/**
 * Options by which a program that is no wrapper runs a command given on its
 * command line: tar's `--to-command`, `-I`, `--checkpoint-action=exec=`;
 * rsync's `-e`; ssh's `-o ProxyCommand=`; scp's and sftp's `-S`; zip's `-TT`;
 * man's `-P`; sort's `--compress-program`. `tar --to-command='rm -rf x' -xf
 * a.tar` ran rm past `Bash(rm:*)` in bypassPermissions. The command is
 * analysed as a script (deny rules see it); one that is not literal, or an
 * option that runs what no word of the line holds, cannot be checked.
 *
 * Options are found generously: a word that may be such an option is taken
 * for one (an abbreviation, any letter of a cluster), which only makes a
 * command ask more, never less.
 */
import type { Word } from './types.js';
import { wordTail } from './words.js';

export interface CommandString {
  /** The option as written. */
  option: string;
  /** The command it runs, when a literal word holds it. */
  script: string | undefined;
}

/** Long options (with their value) whose value a program runs, by program; `exec=` marks tar's checkpoint actions. */
const LONG: Readonly<Record<string, readonly string[]>> = {
  tar: ['--to-command', '--use-compress-program', '--info-script', '--new-volume-script', '--rsh-command', '--rmt-command', '--checkpoint-action'],
  rsync: ['--rsh'],
  zip: ['--unzip-command'],
  man: ['--pager', '--html'],
  sort: ['--compress-program'],
};

/** Short options whose value a program runs, and the short options before which a cluster ends (they take a value of their own). */
const SHORT: Readonly<Record<string, { runs: string; valued: string }>> = {
  tar: { runs: 'IF', valued: 'bCfgHKLNTVX' },
  rsync: { runs: 'e', valued: 'BfMT@' },
  scp: { runs: 'S', valued: 'cDFiJloPX' },
  sftp: { runs: 'SD', valued: 'BbcFiJloPRs' },
  man: { runs: 'PH', valued: 'CELMmpRSsex' },
};

/** ssh's configuration keys (`-o KEY=VALUE`, any case) that run a local command; PermitLocalCommand runs the one a configuration file holds. */
const SSH_RUNS = new Set(['proxycommand', 'localcommand', 'knownhostscommand', 'permitlocalcommand']);
const SSH_FAMILY = new Set(['ssh', 'scp', 'sftp']);
const TAR_FAMILY = new Set(['tar', 'gtar']);

function literal(w: Word | undefined): string | undefined {
  return w?.literal ? w.value : undefined;
}

/** Whether `given` may be `long` as getopt_long reads it: the name, or a prefix of it (one a program finds ambiguous only errs). */
function mayBe(given: string, long: string): boolean {
  return given.length >= 4 && long.startsWith(given);
}

/** The commands the options of `name` (after every wrapper) run; `words`: its arguments. */
export function commandStrings(name: string, words: readonly Word[]): CommandString[] {
  const program = TAR_FAMILY.has(name) ? 'tar' : name;
  const long = Object.hasOwn(LONG, program) ? LONG[program]! : [];
  const short = Object.hasOwn(SHORT, program) ? SHORT[program] : undefined;
  const ssh = SSH_FAMILY.has(program);
  if (long.length === 0 && !short && !ssh) return [];
  const out: CommandString[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.literal) {
      // An expansion may be any option, the value included (`x='--to-command=rm -rf y'; tar xf a.tar $x`);
      // not one after a literal start that is no dash (`./$f`, `a-$x`).
      if (!/^[A-Za-z0-9_./~+,:@%]/.test(w.raw)) out.push({ option: w.raw, script: undefined });
      continue;
    }
    const v = w.value;
    if (v === '--') break;
    // tar's old style (`tar cIf PROG a.tar`): the letters' values are the next words, in order.
    if (program === 'tar' && i === 0 && !v.startsWith('-') && /[IF]/.test(v)) {
      out.push({ option: v, script: undefined });
      continue;
    }
    if (v.startsWith('--')) {
      const eq = v.indexOf('=');
      const given = eq === -1 ? v : v.slice(0, eq);
      const hit = long.find((l) => mayBe(given, l));
      if (!hit) continue;
      // man's --html takes its browser attached only.
      const value = eq !== -1 ? wordTail(w, eq + 1) : hit === '--html' ? undefined : words[i + 1];
      if (hit === '--html' && value === undefined) continue;
      let script = literal(value);
      if (hit === '--checkpoint-action') {
        // Only `exec=COMMAND` runs one; `dot`, `echo`, `sleep=N` do not.
        if (script !== undefined && !/^exec=/.test(script)) continue;
        script = script?.slice(5);
      }
      out.push({ option: given, script });
      continue;
    }
    if (!v.startsWith('-') || v.length < 2) continue;
    // zip's -TT is one option of two letters (`-TT CMD`, `-TTCMD`).
    if (program === 'zip' && v.startsWith('-TT')) {
      out.push({ option: '-TT', script: v.length > 3 ? v.slice(3) : literal(words[i + 1]) });
      continue;
    }
    for (let j = 1; j < v.length; j++) {
      const c = v[j]!;
      if (ssh && c === 'o') {
        const value = j < v.length - 1 ? v.slice(j + 1) : literal(words[i + 1]);
        if (value === undefined) out.push({ option: `-o`, script: undefined });
        else {
          const m = /^\s*([A-Za-z]+)\s*(?:=\s*|\s+)?([\s\S]*)$/.exec(value);
          const key = m?.[1]?.toLowerCase() ?? '';
          if (SSH_RUNS.has(key)) out.push({ option: `-o ${m![1]}`, script: key === 'permitlocalcommand' ? undefined : m![2] });
        }
        break;
      }
      if (short?.runs.includes(c)) {
        // man's -H takes its browser attached only.
        if (program === 'man' && c === 'H' && j === v.length - 1) break;
        out.push({ option: `-${c}`, script: j < v.length - 1 ? v.slice(j + 1) : literal(words[i + 1]) });
        break;
      }
      if (short?.valued.includes(c)) break;
    }
  }
  return out;
}
