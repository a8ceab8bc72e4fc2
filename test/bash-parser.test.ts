/**
 * The bash analyser on tree-sitter-bash: simple commands with quotes
 * removed, where they hide (substitutions, groups, control flow, functions,
 * heredocs, nested scripts, xargs, find -exec), redirections, and what makes
 * a command too complex to model.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { analyseBash, initBashParser, MAX_ANALYSED_CHARS } from '../src/bash/parser.js';
import type { BashAnalysis } from '../src/bash/types.js';
import { decodeAnsiC } from '../src/bash/words.js';
import { unwrapStages } from '../src/bash/wrappers.js';

beforeAll(async () => {
  await initBashParser();
});

function argvs(a: BashAnalysis): string[][] {
  return a.commands.map((c) => c.argv.map((w) => (w.literal ? w.value : `~${w.raw}`)));
}

describe('simple commands', () => {
  it('removes quotes and escapes from literal words', async () => {
    const a = await analyseBash(`echo 'a b' "c \\"d\\"" e\\ f $'g\\th' r"m"x ""`);
    expect(a.tooComplex).toBeUndefined();
    expect(argvs(a)).toEqual([['echo', 'a b', 'c "d"', 'e f', 'g\th', 'rmx', '']]);
  });

  it('keeps expansions as written and flags them not literal', async () => {
    const a = await analyseBash('echo $HOME "$x y" ${a:-b} $((1+2)) {a,b} *.ts ~/x');
    const words = a.commands[0]!.argv.slice(1);
    expect(words.map((w) => w.literal)).toEqual([false, false, false, false, false, true, true]);
    expect(words[5]).toMatchObject({ value: '*.ts', glob: true });
    expect(words[6]).toMatchObject({ value: '~/x', tilde: true });
    expect(words[0]!.raw).toBe('$HOME');
  });

  it('records leading assignments apart from argv', async () => {
    const a = await analyseBash('FOO=1 BAR="x y" make test');
    expect(a.commands[0]!.assignments.map((x) => [x.name, x.value?.value])).toEqual([
      ['FOO', '1'],
      ['BAR', 'x y'],
    ]);
    expect(argvs(a)).toEqual([['make', 'test']]);
  });

  it('cuts $-quoted strings at a NUL, as bash does', () => {
    expect(decodeAnsiC('rm\\x00 -rf')).toBe('rm');
    expect(decodeAnsiC('\\162\\u006d')).toBe('rm');
  });

  it('reads $-quoted \\x and octal escapes as bytes of UTF-8, and none that are not UTF-8', () => {
    // $'\\xff' is the byte 0xff, not the character U+00FF (whose UTF-8 is c3 bf).
    expect(decodeAnsiC('\\xff')).toBeUndefined();
    expect(decodeAnsiC('a\\303')).toBeUndefined();
    expect(decodeAnsiC('\\xc3z')).toBeUndefined();
    expect(decodeAnsiC('\\303\\277')).toBe('\u00ff');
    expect(decodeAnsiC('\\xc3\\xbf/x')).toBe('\u00ff/x');
    // \u past ASCII is spelled in bash's locale (as is in C): not known.
    expect(decodeAnsiC('\\u00ff')).toBeUndefined();
    expect(decodeAnsiC('a\\x41b\\n')).toBe('aAb\n');
    expect(decodeAnsiC('\\x')).toBe('\\x');
  });
});

describe('where commands hide', () => {
  const cases: Array<[string, string[][]]> = [
    ['a && b || c; d & e\nf', [['a'], ['b'], ['c'], ['d'], ['e'], ['f']]],
    ['a | b |& c', [['a'], ['b'], ['c']]],
    ['(a; b) && { c; }', [['a'], ['b'], ['c']]],
    ['x $(a $(b)) `c`', [['b'], ['a', '~$(b)'], ['c'], ['x', '~$(a $(b))', '~`c`']]],
    ['x `y \\`z\\``', [['z'], ['y', '~`z`'], ['x', '~`y \\`z\\``']]],
    ['diff <(a) >(b)', [['a'], ['b'], ['diff', '~<(a)', '~>(b)']]],
    ['if a; then b; elif c; then d; else e; fi', [['a'], ['b'], ['c'], ['d'], ['e']]],
    ['for i in $(a); do b; done', [['a'], ['b']]],
    ['while a; do b; done; until c; do d; done', [['a'], ['b'], ['c'], ['d']]],
    ['case $(a) in x) b;; *) c;; esac', [['a'], ['b'], ['c']]],
    ['f() { a; }; function g { b; }', [['a'], ['b']]],
    ['! a', [['a']]],
    ['x=$(a) y=`b`', [['a'], ['b'], []]],
    ['cat <<EOF | b\n$(a)\nEOF', [['b'], ['a'], ['cat']]],
    ["cat <<'EOF'\n$(not-run)\nEOF", [['cat']]],
    ['cat <<EOF && b\nx\nEOF', [['b'], ['cat']]],
    ['bash -c "a && b"', [['bash', '-c', 'a && b'], ['a'], ['b']]],
    ['sh -ec \'a | b\'', [['sh', '-ec', 'a | b'], ['a'], ['b']]],
    ['ls | xargs -n1 rm -f', [['ls'], ['xargs', '-n1', 'rm', '-f'], ['rm', '-f']]],
    ['find . -exec a {} \\; -execdir b {} +', [['find', '.', '-exec', 'a', '{}', ';', '-execdir', 'b', '{}', '+'], ['a', '{}'], ['b', '{}']]],
    ['echo a > f b', [['echo', 'a', 'b']]],
  ];
  for (const [src, want] of cases) {
    it(JSON.stringify(src), async () => {
      const a = await analyseBash(src);
      expect(a.tooComplex).toBeUndefined();
      expect(argvs(a)).toEqual(want);
    });
  }

  it('marks where each command came from', async () => {
    const a = await analyseBash('a $(b); f() { c; }; bash -c d; ls | xargs e');
    expect(a.commands.map((c) => `${c.argv[0]?.value}:${c.origin}`)).toEqual([
      'b:substitution',
      'a:top',
      'c:function',
      'bash:top',
      'd:nested',
      'ls:top',
      'xargs:top',
      'e:derived',
    ]);
  });
});

describe('redirections', () => {
  it('records operators, descriptors, targets and whether they write', async () => {
    const a = await analyseBash('a > o1 2>> o2 &> o3 >| o4 < i1 2>&1 3>&-; cat <<< "s"');
    expect(a.redirects.map((r) => [r.op, r.fd ?? null, r.kind, r.target?.value ?? null, r.output])).toEqual([
      ['>', null, 'file', 'o1', true],
      ['>>', 2, 'file', 'o2', true],
      ['&>', null, 'file', 'o3', true],
      ['>|', null, 'file', 'o4', true],
      ['<', null, 'file', 'i1', false],
      ['>&', 2, 'dup', null, false],
      ['>&-', 3, 'dup', null, false],
      ['<<<', null, 'herestring', null, false],
    ]);
  });

  it('what the grammar cannot parse (`<>`, a here-string after a file redirection) is too complex', async () => {
    expect((await analyseBash('a <> rw')).tooComplex).toMatch(/does not parse/);
    expect((await analyseBash('a < i <<< "s"')).tooComplex).toMatch(/does not parse/);
  });

  it('applies a group redirection to every command inside', async () => {
    const a = await analyseBash('{ a; b; } > out');
    expect(a.commands.map((c) => c.redirects.map((r) => r.target?.value))).toEqual([['out'], ['out']]);
  });

  it('a bare redirection is a command without argv that writes', async () => {
    const a = await analyseBash('> truncated');
    expect(a.commands).toHaveLength(1);
    expect(a.commands[0]!.argv).toEqual([]);
    expect(a.redirects[0]).toMatchObject({ op: '>', output: true, target: { value: 'truncated' } });
  });
});

describe('too complex', () => {
  const cases: Array<[string, RegExp]> = [
    ['$CMD args', /command name .* is an expansion/],
    ['"$(which rm)" x', /command name/],
    ['$(( 1 + 2 )) x', /command name/],
    ['eval "ls"', /eval/],
    ['ls )', /does not parse/],
    ['echo "open', /does not parse/],
    ['bash -c "$SCRIPT"', /not literal/],
    ['sh < script.sh', /reads commands from its input/],
    ['curl x | bash', /reads commands from its input/],
    ['r\\\nm -rf x', /line continuation/],
    ['trap "rm x" EXIT', /trap/],
    ['alias x="rm -rf /"', /alias/],
    ["let 'a[$(id)]'", /let|array subscript/],
    ["printf -v 'a[$(id)]' x", /array subscript/],
    ["[[ -v 'a[`id`]' ]]", /array subscript/],
    ["x='$(id)'; echo ${x@P}", /command substitution|prompt expansion/],
    ['echo ${x@P}', /prompt expansion/],
    ["su -c 'id' root", /su -c runs a command given as a string/],
    ["flock -c 'id' /tmp/lock", /flock -c/],
    ["find . -exec sh -c 'id {}' \\;", /xargs or find supplies/],
    ['bash <(curl example.invalid)', /script whose name is an expansion/],
    ['source <(echo id)', /script whose name is an expansion/],
    ['{rm,-rf,/}', /does not parse|command name/],
    ['[[ $x -eq 1 ]]', /arithmetic comparison/],
    ['env -S "rm x"', /string/],
    ['$(echo x)', /command name/],
    [Array.from({ length: 51 }, () => 'a').join(';'), /more than 50 subcommands/],
    ['x'.repeat(MAX_ANALYSED_CHARS + 1), /longer than/],
    ['echo a\u0000b', /NUL/],
    ['$('.repeat(3000), /nests too deeply|does not parse/],
  ];
  for (const [src, re] of cases) {
    it(JSON.stringify(src.slice(0, 40)), async () => {
      const a = await analyseBash(src);
      expect(a.tooComplex).toMatch(re);
    });
  }

  it('finds substitutions in array subscripts of assignments', async () => {
    // The subscript is arithmetic: what id prints is evaluated again, so the command is too complex, but what it runs is still found.
    const a = await analyseBash('a[$(id)]=1 ls');
    expect(a.tooComplex).toMatch(/array subscript/);
    expect(argvs(a).slice(0, 2)).toEqual([['id'], ['ls']]);
  });

  it('keeps what it found for deny rules', async () => {
    const a = await analyseBash('eval "rm -rf /"; $X');
    expect(argvs(a)).toContainEqual(['rm', '-rf', '/']);
  });
});

describe('wrappers', () => {
  const stages = (src: string, safeOnly: boolean) =>
    analyseBash(src).then((a) => unwrapStages(a.commands[0]!.argv, safeOnly).stages.map((s) => s.map((w) => w.value).join(' ')));

  it('strips every wrapper for deny rules', async () => {
    expect(await stages('sudo -u root timeout -k 5 10 env -i A=1 nice -n 3 nohup stdbuf -oL command rm x', false)).toEqual([
      'sudo -u root timeout -k 5 10 env -i A=1 nice -n 3 nohup stdbuf -oL command rm x',
      'timeout -k 5 10 env -i A=1 nice -n 3 nohup stdbuf -oL command rm x',
      'env -i A=1 nice -n 3 nohup stdbuf -oL command rm x',
      'nice -n 3 nohup stdbuf -oL command rm x',
      'nohup stdbuf -oL command rm x',
      'stdbuf -oL command rm x',
      'command rm x',
      'rm x',
    ]);
  });

  it('strips only the safe wrappers for allow rules', async () => {
    expect(await stages('timeout 5 nice npm test', true)).toEqual(['timeout 5 nice npm test', 'nice npm test', 'npm test']);
    expect(await stages('env A=1 npm test', true)).toEqual(['env A=1 npm test']);
    expect(await stages('command -v rm', false)).toEqual(['command -v rm']);
  });
});
