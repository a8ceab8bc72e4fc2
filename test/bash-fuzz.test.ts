/**
 * Properties of the Bash permission check over generated commands: a denied
 * command stays denied however it is wrapped, nested or chained; no input,
 * however odd, makes the analysis or the check throw; and a command that
 * is allowed as read-only is one whose every part the analyser saw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyseBash } from '../src/bash/parser.js';
import { isReadOnlyAnalysis } from '../src/bash/read-only.js';
import { bashTests, ruleEnv } from './helpers-bash.js';

bashTests();

const WRAPPERS = ['timeout 5', 'nice -n 5', 'nohup', 'env FOO=1', 'FOO=1', 'command', 'stdbuf -o0', 'time', 'sudo', 'exec', 'builtin', 'env -i A=b', 'xargs', 'noglob'];
const CONTEXTS: Array<(p: string) => string> = [
  (p) => p,
  (p) => `echo hi; ${p}`,
  (p) => `echo hi\n${p}`,
  (p) => `true && ${p}`,
  (p) => `false || ${p}`,
  (p) => `ls | ${p}`,
  (p) => `${p} &`,
  (p) => `( ${p} )`,
  (p) => `{ ${p}; }`,
  (p) => `$( ${p} )`,
  (p) => `echo "$( ${p} )"`,
  // Nesting inside backticks needs \\, \` and \$ escaped, as bash expects.
  (p) => `echo \`${p.replace(/[\\`$]/g, '\\$&')}\``,
  (p) => `cat <( ${p} )`,
  (p) => `if true; then ${p}; fi`,
  (p) => `for i in 1; do ${p}; done`,
  (p) => `while false; do ${p}; done`,
  (p) => `case a in a) ${p};; esac`,
  (p) => `f() { ${p}; }; f`,
  (p) => `x=$( ${p} )`,
  (p) => `${p} > /dev/null 2>&1`,
  (p) => `! ${p}`,
  (p) => `bash -c '${p.replace(/'/g, `'\\''`)}'`,
];

describe('deny rules under composition', () => {
  it('rm stays denied through any stack of wrappers and contexts', async () => {
    const env = ruleEnv({ deny: ['Bash(rm:*)'], allow: ['Bash'] });
    const payload = fc
      .tuple(fc.constantFrom('rm -rf /', 'rm x', '/bin/rm -f y', 'r"m" -r z', "\\rm q"), fc.array(fc.constantFrom(...WRAPPERS), { maxLength: 3 }))
      .map(([cmd, ws]) => [...ws, cmd].join(' '));
    const composed = fc
      .tuple(payload, fc.array(fc.integer({ min: 0, max: CONTEXTS.length - 1 }), { minLength: 1, maxLength: 3 }))
      .map(([p, ctxs]) => ctxs.reduce((acc, i) => CONTEXTS[i]!(acc), p));
    await fc.assert(
      fc.asyncProperty(composed, async (cmd) => {
        const r = await env.check(cmd);
        expect(r.behavior, cmd).toBe('deny');
      }),
      { numRuns: 400 },
    );
  });
});

describe('arbitrary input', () => {
  it('never throws and always answers one of the four behaviours', async () => {
    const env = ruleEnv({ deny: ['Bash(rm:*)', 'Read(./.env)'], allow: ['Bash(git:*)'] });
    const shellish = fc.array(
      fc.oneof(
        fc.constantFrom(' ', ';', '&&', '||', '|', '&', '$(', ')', '`', '(', '{', '}', '<', '>', '>>', '<<', 'EOF', '\n', '"', "'", '\\', '$', '${', '*', '~', '#', 'rm', 'ls', 'cd', 'git', 'eval', '-rf', '/', '.env', '=', 'x'),
        fc.string({ maxLength: 6 }),
        fc.string({ unit: 'binary', maxLength: 4 }),
      ),
      { maxLength: 40 },
    );
    await fc.assert(
      fc.asyncProperty(shellish, async (parts) => {
        const cmd = parts.join('');
        const r = await env.check(cmd);
        expect(['allow', 'deny', 'ask', 'passthrough']).toContain(r.behavior);
        // Anything that contains rm as a word and is allowed must have been seen by the analyser in full.
        if (r.behavior === 'allow') {
          const a = await analyseBash(cmd);
          expect(a.tooComplex).toBeUndefined();
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a read-only verdict implies a fully modelled command', async () => {
    // Arbitrary strings are seldom read-only (4 in 300): read-only commands with words the
    // analyser may not model (or that do not parse) put the implication to the test.
    const readOnlyish = fc
      .tuple(
        fc.constantFrom('ls', 'cat notes.txt', 'echo hi', 'grep -n x', 'wc -l', 'head', 'pwd'),
        fc.array(
          fc.oneof(
            fc.constantFrom('-l', 'a.txt', '$x', '"$y"', '${!x}', '${x@P}', '$((x))', '${a[$i]}', '$(ls)', '`pwd`', '*', '~', '\\\n', '|', ';', '&&', 'ls', 'cat', '(', ')', '{', 'x=1', 'IFS=:', '<(ls)', '{a,b}', '#'),
            fc.string({ maxLength: 4 }),
          ),
          { maxLength: 6 },
        ),
      )
      .map(([c, rest]) => [c, ...rest].join(' '));
    let readOnly = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ maxLength: 60 }), readOnlyish, readOnlyish.map((c) => Array(51).fill(c).join('; '))), async (cmd) => {
        const a = await analyseBash(cmd);
        if (isReadOnlyAnalysis(a)) {
          readOnly++;
          expect(a.tooComplex, cmd).toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
    expect(readOnly).toBeGreaterThan(0);
  });
});
