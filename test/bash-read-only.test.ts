/**
 * The Bash tool's isReadOnly / isConcurrencySafe on a table of commands,
 * and the conservative answer before the parser is initialised.
 */
import { describe, expect, it } from 'vitest';
import { initBashParser, isBashParserReady } from '../src/bash/parser.js';
import { bashTool } from '../src/tools/bash.js';

describe('before the parser is initialised', () => {
  // This must stay the first test of the file: nothing else initialises the parser before it.
  it('answers false (conservative), then the real answer once initialised', async () => {
    expect(isBashParserReady()).toBe(false);
    expect(bashTool.isReadOnly({ command: 'ls' })).toBe(false);
    expect(bashTool.isConcurrencySafe({ command: 'ls' })).toBe(false);
    await initBashParser();
    expect(bashTool.isReadOnly({ command: 'ls' })).toBe(true);
    expect(bashTool.isConcurrencySafe({ command: 'ls' })).toBe(true);
  });
});

const READ_ONLY = [
  // Abbreviated long options that resolve to harmless ones stay read-only.
  "sed --quiet --expr='s/a/b/' notes.txt",
  "sed -n --expression=p notes.txt",
  "sed --posix -n p notes.txt",
  'ps -F ax',
  'ps -ef',
  'sort -r f',
  'ls -la',
  // An option's value is not an output file.
  'xxd -l 64 f',
  'uniq -f 1 f',
  'cat a | grep x | wc -l',
  'git status',
  'git log --oneline -5',
  'git diff HEAD~1 -- src',
  'git show HEAD:README.md',
  'git branch',
  'git branch -a --list "feat*"',
  'git remote -v',
  'git --no-pager log',
  'git config --get user.name',
  'git stash list',
  "sed -n '1,5p' f",
  "sed -e 's/a/b/g' -e '/x/d' f",
  'sort -u f',
  'echo hello world',
  "echo 'single $quoted'",
  'pwd',
  "find . -name '*.ts' -type f",
  'ls > /dev/null 2>&1',
  'ls 2>/dev/null | head',
  'ps aux',
  'ps -ef',
  'ps -e',
  'ps axo pid,user,comm',
  'ps -C sleep -o pid',
  'date',
  'date +%s',
  'ls | xargs cat',
  'ls | xargs -0 grep -l x',
  'gh pr view 12',
  'gh issue list --state open',
  'timeout 5 ls',
  'nice -n 5 cat f',
  'LANG=C sort f',
  'x=1; echo ok',
  'rg foo src',
  'tree -L 2',
  'file x.bin',
  'test -f x && echo yes',
  '[ -d src ] || echo no',
  'jq .name package.json',
  'wc -l < f',
  'cat <<EOF\nliteral\nEOF',
  'grep -c x <<< "abc"',
  'true; false; :',
  'command -v node',
  'which node && type ls',
  'uniq f',
  'cd src && ls',
  'diff a b; cmp a b',
  'du -sh . && df -h',
  'head -n 20 f | tail -n 5',
  'stat -c %s f',
  '(ls; pwd)',
  '{ ls; pwd; }',
  'ls $(pwd)',
  'f() { ls; }',
];

const NOT_READ_ONLY = [
  'rm x',
  'ls > out',
  'ls >> out',
  'ls &> out',
  'ls | tee out',
  'echo $HOME',
  'echo "$HOME"',
  'echo `id`',
  'echo $(rm x)',
  "sed -i 's/a/b/' f",
  "sed -n 's/a/b/w out' f",
  "sed 'e ls' f",
  'sed -f script.sed f',
  'sort -o out f',
  'sort --output=out f',
  'git commit -m x',
  'git branch -D x',
  'git branch new-branch',
  'git tag v1',
  'git -c core.pager=evil log',
  'git push',
  'git log --output=x',
  // Files git does not track: their paths are not checked (review F2).
  'git diff --no-index /dev/null .env',
  'git grep --no-index -h SECRET',
  'git grep --untracked SECRET',
  'git blame --contents .env f',
  'git config --file .env --list',
  'git diff --ext-diff',
  'git config user.name x',
  'git stash',
  'find . -delete',
  'find . -exec rm {} \\;',
  'find . -fprint out',
  'ls | xargs rm',
  'xargs sh -c "ls"',
  'date -s 2020-01-01',
  'date 0101000020',
  'tree -o out',
  'rg --pre cat x',
  'gh pr create',
  'gh api repos/x/y',
  'PATH=/tmp ls',
  'LD_PRELOAD=x.so ls',
  'eval ls',
  '$CMD',
  'bash -c ls',
  'ls )',
  'ls & rm x',
  'f() { ls; }; f',
  'npm test',
  'echo x >> f',
  'cat f | sh',
  'uniq a b',
  'xxd a b',
  'printf -v x hi',
  'hostname newname',
  'env FOO=1 ls',
  'sudo ls',
  'export PATH=/tmp',
  'PATH=/tmp/evil',
  'awk 1 f',
  'touch x',
  'mkdir x',
  'cp a b',
  '(( i++ ))',
  'exec > out',
  '> out',
  // ps's BSD `e` shows other processes' environments, and /proc/PID/environ is one (review F3).
  'ps e',
  'ps eww -o args= -p $PPID',
  'ps aux e',
  'ps -o pid,args e',
  'ps -eww e -o args | grep -o TOOLEXEC_TOKEN',
  'ps $opts',
  'cat /proc/1/environ',
  'cat /proc/$PPID/environ',
  'cat /proc/*/environ',
  'f=/proc/1/environ; cat $f',
  "tr '\\0' '\\n' < /proc/$PPID/environ",
  'head -c 100 /proc/$PPID/cmdline',
  // Long options abbreviated as getopt_long and git accept them (second review, N1, N2, N5).
  "echo a | sed --expr='1e touch /tmp/x' -e p",
  "sed --expr='1e touch /tmp/x' -n p notes.txt",
  "sed --e='1e id' notes.txt",
  "sed --in 's/hello/bye/' notes.txt",
  "sed -i.bak 's/a/b/' notes.txt",
  "sed -ni.bak p notes.txt",
  "sed --in='/tmp/bk_*' -n p notes.txt",
  "sed --fi=script.sed notes.txt",
  "sed --bogus p notes.txt",
  "git grep --open-files-in-pag='touch /tmp/x;' -e bye -- notes.txt",
  "seq 1 3 | sort -S 1K --compress-prog=sh",
  'sort --out=x f',
  "date --se='2001-01-01'",
  'file --comp x',
  // -F takes no value: it hid the `e` after it (N3).
  'ps -F e -p 1',
  'ps -F e ax',
  'ps -L e',
  // git run elsewhere may obey that repository's config (fourth review H3).
  'git -C sub status',
  'git --git-dir=x/.git log',
];

describe('read-only commands', () => {
  for (const command of READ_ONLY) {
    it(`${JSON.stringify(command)} is read-only and concurrency-safe`, async () => {
      await initBashParser();
      expect(bashTool.isReadOnly({ command })).toBe(true);
      expect(bashTool.isConcurrencySafe({ command })).toBe(true);
    });
  }
});

describe('commands that write or run something else', () => {
  for (const command of NOT_READ_ONLY) {
    it(`${JSON.stringify(command)} is not read-only`, async () => {
      await initBashParser();
      expect(bashTool.isReadOnly({ command })).toBe(false);
      expect(bashTool.isConcurrencySafe({ command })).toBe(false);
    });
  }
});
