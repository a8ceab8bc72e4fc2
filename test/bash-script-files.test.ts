/**
 * Files named inside sed scripts and awk programs (src/bash/script-files.ts):
 * with `Bash(sed:*)` or `Bash(awk:*)` allowed, `sed 'r .env' x` and awk's
 * `getline < ".env"` read a file that a Read deny rule names, and `s///w`
 * writes one an Edit deny rule names, though no argument names it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { awkProgramFiles, sedScriptFiles } from '../src/bash/script-files.js';
import { execute, makeApp, textOf, use } from './helpers.js';
import { bashTests, ruleEnv } from './helpers-bash.js';

bashTests();

describe('sed scripts', () => {
  it('finds the files of r, R, w, W and of the w flag of s, wherever the command stands', () => {
    expect(sedScriptFiles('r .env')).toEqual({ reads: ['.env'], writes: [], opaque: false });
    expect(sedScriptFiles('1R  /etc/shadow')).toEqual({ reads: ['/etc/shadow'], writes: [], opaque: false });
    expect(sedScriptFiles('/x/,$w out.txt')).toEqual({ reads: [], writes: ['out.txt'], opaque: false });
    expect(sedScriptFiles('s/a/b/gw out')).toEqual({ reads: [], writes: ['out'], opaque: false });
    expect(sedScriptFiles('s|a/b|c|2w out')).toEqual({ reads: [], writes: ['out'], opaque: false });
    expect(sedScriptFiles('p\nr a b')).toEqual({ reads: ['a b'], writes: [], opaque: false });
    expect(sedScriptFiles('/k/{p;r .env\n}')).toEqual({ reads: ['.env'], writes: [], opaque: false });
    expect(sedScriptFiles('0~3!W log')).toEqual({ reads: [], writes: ['log'], opaque: false });
    // GNU sed's special files are not files.
    expect(sedScriptFiles('w /dev/stdout')).toEqual({ reads: [], writes: [], opaque: false });
  });

  it('ends a label where GNU sed 4.9 does (whitespace, `;`, `}`, `#`): a command after it on the line is seen', () => {
    expect(sedScriptFiles(':a w out')).toEqual({ reads: [], writes: ['out'], opaque: false });
    expect(sedScriptFiles('bx r .env\n:x')).toEqual({ reads: ['.env'], writes: [], opaque: false });
    expect(sedScriptFiles('bx\tw out\n:x')).toEqual({ reads: [], writes: ['out'], opaque: false });
  });

  it('takes only the exact special names for standard streams: /dev/stdin/.env is a file below the directory read as standard input', () => {
    expect(sedScriptFiles('r /dev/stdin/.env')).toEqual({ reads: ['/dev/stdin/.env'], writes: [], opaque: false });
    expect(sedScriptFiles('s/a/b/w /dev/stdout/out')).toEqual({ reads: [], writes: ['/dev/stdout/out'], opaque: false });
    expect(sedScriptFiles('r /dev/stdin')).toEqual({ reads: [], writes: [], opaque: false });
  });

  it('reads no file from what only looks like a command: regexes, replacements, texts, labels', () => {
    for (const s of [
      's/r .env/w out/',
      'y/rw/wr/',
      ':a;N;$!ba;s/\\n/ /g',
      '/r .env/d',
      '\\%w out%p',
      '/a/I,+2{s|a|b|g;p}',
      '1i\\\nr .env',
      '$a w out',
      'bend;:end',
      '# r .env',
      's/a/b/3;q5',
      '=;l 40;F;z',
    ]) {
      expect(sedScriptFiles(s), s).toEqual({ reads: [], writes: [], opaque: false });
    }
  });

  it('is opaque where it runs a program or is not understood', () => {
    for (const s of ['e id', '1e', 's/x/id/e', 's/x/y', 'y/ab/c', '/unterminated', 'v 4.2;p', 'k', '\\\nfoo']) {
      expect(sedScriptFiles(s).opaque, s).toBe(true);
    }
  });
});

describe('awk programs', () => {
  it('is opaque where the program redirects, pipes, runs a command or loads code', () => {
    for (const p of [
      'BEGIN { while ((getline l < ".env") > 0) print l }',
      '{ print > "out" }',
      '{ printf "%s", $0 >> "out" }',
      '{ print | "sh" }',
      'BEGIN { "cat .env" | getline x; print x }',
      'BEGIN { system("id") }',
      '@include "lib.awk"',
      'BEGIN { print |& "cmd" }',
    ]) {
      expect(awkProgramFiles(p).opaque, p).toBe(true);
    }
  });

  it('is opaque where the redirection hides behind a string, a regex or a line break, or the program fills ARGV itself', () => {
    for (const p of [
      'BEGIN { print "};" > "out" }',
      'BEGIN { print ";" > "out" }',
      '$0 ~ /;/ { print $0 > "out" }',
      'BEGIN { print "a",\n"b" > "out" }',
      'BEGIN { print "a" \\\n > "out" }',
      'BEGIN { ARGV[1] = ".env"; ARGC = 2 } { print }',
      'BEGIN { split(".env", ARGV); ARGC = 2 } { print }',
      'BEGIN { f = "system"; @f("id") }',
    ]) {
      expect(awkProgramFiles(p).opaque, p).toBe(true);
    }
  });

  it('leaves a message to standard error or output by its exact special name, and a pipe to sort that only orders lines, alone', () => {
    for (const p of [
      '{ print "bad line: " $0 > "/dev/stderr" }',
      'NR > 1 { printf "%s\\n", $1 >> "/dev/stdout"; n++ }',
      'BEGIN { FS = "," } { a[$1] += $2 } END { for (k in a) print k, a[k] | "sort" }',
      '{ c[$1]++ } END { for (k in c) print c[k], k | "sort -rn" }',
      '{ print | "sort -t, -k2,2n -u" }',
    ]) {
      expect(awkProgramFiles(p).opaque, p).toBe(false);
    }
    // Anything more is a file or a program: a name built on the special one, another file beside it, sort writing or running something.
    for (const p of [
      '{ print > "/dev/stderr" ".env" }',
      '{ print > "/dev/stderr" $1 }',
      '{ print > "/dev/stderr/../out" }',
      '{ print > "/dev/stderr"; print > "out" }',
      '{ print > "/dev/stderr" \\\n ".x" }',
      '{ print | "sort -o out" }',
      '{ print | "sort --compress-program=sh" }',
      '{ print | "sort -T /tmp" }',
      '{ print | "sort; sh" }',
      '{ print | "sort" ".x" }',
      '{ print | "sort" | "sh" }',
      '{ print | "sorted" }',
    ]) {
      expect(awkProgramFiles(p).opaque, p).toBe(true);
    }
  });

  it('leaves comparisons and logical operators alone', () => {
    for (const p of ['{ print $1 }', '$3 > 100', 'a || b { n++ } END { print n }', 'NR > 1 && $2 ~ /x/']) {
      expect(awkProgramFiles(p).opaque, p).toBe(false);
    }
  });
});

describe('rules', () => {
  const env = () => ruleEnv({ allow: ['Bash(sed:*)', 'Bash(awk:*)'], deny: ['Read(./.env)', 'Edit(./out)'] });

  it('a Read deny rule holds against a file read by the script', async () => {
    const e = env();
    for (const cmd of ["sed 'r .env' notes.txt", "sed -n '1R .env' notes.txt", "sed -e p -e 'r .env' notes.txt", "sed --expression='$r ./.env' notes.txt"]) {
      expect(await e.check(cmd), cmd).toMatchObject({ behavior: 'deny', detail: 'Read(./.env)' });
    }
  });

  it('a label ends at whitespace, and standard streams are special only by their exact names', async () => {
    const e = env();
    expect(await e.check("sed -n ':a w out' notes.txt")).toMatchObject({ behavior: 'deny', detail: 'Edit(./out)' });
    expect(await e.check("sed -n 'bx r .env\n:x' notes.txt")).toMatchObject({ behavior: 'deny', detail: 'Read(./.env)' });
    // Standard input is the workspace directory: /dev/stdin/.env is ./.env.
    expect((await e.check("sed 'r /dev/stdin/.env' notes.txt < .")).behavior).not.toBe('allow');
    expect((await e.check("sed 'w /dev/stdout/out' notes.txt 1< .")).behavior).not.toBe('allow');
  });

  it('an awk program that writes through a print whose statement the check cannot delimit, or reads through ARGV, asks', async () => {
    const e = env();
    for (const cmd of ["awk 'BEGIN { print \"};\" > \"out\" }'", "awk 'BEGIN { print \"a\",\n\"b\" > \"out\" }'", "awk 'BEGIN { ARGV[1] = \".env\"; ARGC = 2 } { print }'"]) {
      expect((await e.check(cmd)).behavior, cmd).toBe('ask');
    }
  });

  it('an Edit deny rule alone holds against a script whose writes cannot be listed (awk print >, sed e, a script file), and gawk options that write or load', async () => {
    const e = ruleEnv({ allow: ['Bash(sed:*)', 'Bash(awk:*)', 'Bash(gawk:*)'], deny: ['Edit(./out)'] });
    for (const cmd of ["awk '{ print > \"out\" }' notes.txt", "sed '1e touch out' notes.txt", 'sed -f x.sed notes.txt', "gawk -dout 'BEGIN {}'", "gawk --dump-variables=out 'BEGIN {}'", "gawk -l ./ext 'BEGIN {}'"]) {
      expect(await e.check(cmd), cmd).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    for (const cmd of ["awk '{ print $1 }' notes.txt", "sed -n 's/a/b/p' notes.txt"]) {
      expect((await e.check(cmd)).behavior, cmd).toBe('allow');
    }
  });

  it('gawk, mawk and gsed are judged as awk and sed', async () => {
    const e = ruleEnv({ allow: ['Bash(gawk:*)', 'Bash(mawk:*)', 'Bash(gsed:*)'], deny: ['Read(./.env)'] });
    expect(await e.check("gsed 'r .env' notes.txt")).toMatchObject({ behavior: 'deny', detail: 'Read(./.env)' });
    expect(await e.check("gawk '{ print }' .env")).toMatchObject({ behavior: 'deny', detail: 'Read(./.env)' });
    expect((await e.check("mawk 'BEGIN { getline l < \".env\"; print l }'")).behavior).toBe('ask');
    expect((await e.check("gawk '{ print $1 }' notes.txt")).behavior).toBe('allow');
  });

  it('an Edit deny rule holds against a file written by the script', async () => {
    const e = env();
    for (const cmd of ["sed 's/a/b/w out' notes.txt", "sed -n '/x/w out' notes.txt"]) {
      expect(await e.check(cmd), cmd).toMatchObject({ behavior: 'deny', detail: 'Edit(./out)' });
    }
    // Outside the workspace: not the rule's to allow.
    expect((await e.check("sed 's/a/b/w /etc/cron.d/job' notes.txt")).behavior).toBe('ask');
  });

  it('a script from a file, a program that runs one, or an awk program that redirects asks while Read deny rules exist', async () => {
    const e = env();
    for (const cmd of [
      'sed -f script.sed notes.txt',
      "sed 's/x/id/e' notes.txt",
      "awk 'BEGIN { while ((getline l < \".env\") > 0) print l }'",
      "awk '{ print > \"o\" }' notes.txt",
      'awk -f prog.awk notes.txt',
    ]) {
      expect((await e.check(cmd)).behavior, cmd).toBe('ask');
    }
  });

  it('plain scripts and programs stay allowed by the rule, and --sandbox scripts too', async () => {
    const e = env();
    for (const cmd of [
      "sed -n 's/a/b/p' notes.txt",
      "sed ':a;N;$!ba;s/\\n/ /g' notes.txt",
      "awk '$3 > 100 { print $1 }' notes.txt",
      "sed --sandbox 's/a/b/' notes.txt",
      `awk 'NF < 3 { print "short: " $0 > "/dev/stderr" }' notes.txt`,
      `awk -F, '{ s[$1] += $2 } END { for (k in s) print s[k], k | "sort -rn" }' notes.txt`,
    ]) {
      expect((await e.check(cmd)).behavior, cmd).toBe('allow');
    }
  });
});

describe('end to end', () => {
  it('POST /execute: sed allowed by a rule does not print a denied file through `r`', async () => {
    const t = await makeApp({ permissions: { allow: ['Bash(sed:*)'], deny: ['Read(./.env)'] } });
    try {
      fs.writeFileSync(path.join(t.workspace, '.env'), 'API_KEY=sk-live-123\n');
      fs.writeFileSync(path.join(t.workspace, 'notes.txt'), 'hello\n');
      const { status, body } = await execute(t.app, { tool_uses: [use('Bash', { command: "sed 'r .env' notes.txt" })] });
      expect(status).toBe(200);
      const text = textOf(body.tool_results[0]!.content);
      expect(text).not.toContain('sk-live-123');
      expect(body.executions[0]!.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Read(./.env)' } });
    } finally {
      await t.close();
    }
  });
});

describe('interpreters, editors and pagers', () => {
  it("their literal arguments are judged against Read deny rules: Bash(perl:*) does not let `perl -ne print .env` past Read(./.env)", async () => {
    const e = ruleEnv({ allow: ['Bash(perl:*)', 'Bash(python3:*)', 'Bash(node:*)', 'Bash(vim:*)', 'Bash(bash:*)'], deny: ['Read(./.env)', 'Read(./secrets/**)'] });
    for (const cmd of ['perl -ne print .env', "python3 -c 'import sys; print(open(sys.argv[1]).read())' .env", 'python3 secrets/dump.py', 'node -e 1 ./.env', 'vim .env', 'bash .env', 'python3.12 x.py .env', 'node --require=./.env x.js', 'python3 tool.py --config=.env']) {
      expect(await e.check(cmd), cmd).toMatchObject({ behavior: 'deny', type: 'rule' });
    }
  });

  it('and against nothing else: code, words and files elsewhere stay with the allow rule', async () => {
    const e = ruleEnv({ allow: ['Bash(python3:*)', 'Bash(node:*)'], deny: ['Read(./.env)'] });
    for (const cmd of ["python3 -c 'print(1)'", 'python3 tool.py /var/log/syslog', 'node build.js --out .env.example', "node -e 'console.log(\"/etc/passwd\")'"]) {
      expect((await e.check(cmd)).behavior, cmd).toBe('allow');
    }
  });
});

describe('a command too complex to check, under Read or Edit deny rules only', () => {
  it('asks as a safety ask, which bypassPermissions and a whole-tool allow rule cannot skip (a heredoc that hides a substitution)', async () => {
    const hidden = 'cat <<EOF\n${x:-\'$(id)\'}\nEOF';
    for (const deny of [['Read(./.env)'], ['Edit(./leak)']]) {
      for (const opts of [{ mode: 'bypassPermissions' as const }, { allow: ['Bash'] }]) {
        const e = ruleEnv({ ...opts, deny });
        expect(await e.check(hidden), `${deny} ${JSON.stringify(opts)}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
    }
    // Without any deny or ask rule, as in Claude Code, the mode decides.
    expect(await ruleEnv({ mode: 'bypassPermissions' }).check(hidden)).toMatchObject({ behavior: 'ask', type: 'tool' });
  });
});
