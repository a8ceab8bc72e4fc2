/**
 * The one reader of git's global options (src/bash/git-globals.ts), on the
 * words the bash analyser makes, and against what git itself does with the
 * same options (a real git, a real repository).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseGitGlobals } from '../src/bash/git-globals.js';
import { analyseBashSync } from '../src/bash/parser.js';
import type { Word } from '../src/bash/types.js';
import { gitWhere } from '../src/permissions/bash-git.js';
import { tmpDir } from './helpers.js';
import { bashTests } from './helpers-bash.js';

bashTests();

function argvOf(command: string): Word[] {
  const a = analyseBashSync(command);
  expect(a?.commands).toHaveLength(1);
  return a!.commands[0]!.argv;
}

const values = (ws: ReadonlyArray<Word | undefined>): Array<string | undefined> => ws.map((w) => w?.value);

describe('parseGitGlobals', () => {
  it('finds the subcommand past options with a value, separate or attached', () => {
    const cases: Array<[string, string[]]> = [
      ['git status -s', ['status', '-s']],
      ['git -C sub -c color.ui=never status', ['status']],
      ['git --git-dir x --work-tree=y log', ['log']],
      ['git --namespace n --super-prefix p/ --attr-source HEAD diff', ['diff']],
      ['git --config-env core.pager=P --config-env=a.b=C log', ['log']],
      ['git --shallow-file f push origin', ['push', 'origin']],
      ['git -p -P --no-pager --bare --literal-pathspecs --no-optional-locks --no-lazy-fetch show', ['show']],
      ['git --exec-path=bin foo', ['foo']],
      ['git -- status', ['status']],
      ['git', []],
      ['git -C', []],
    ];
    for (const [c, rest] of cases) expect(values(parseGitGlobals(argvOf(c)).rest), c).toEqual(rest);
  });

  it('returns the -C values in order, the last --git-dir and --work-tree, and the settings', () => {
    const g = parseGitGlobals(argvOf("git -C a -C '' --git-dir=x --git-dir y -C b --work-tree w -c k=v --config-env=a.b=E --config-env c.d=F status"));
    expect(values(g.chdirs)).toEqual(['a', '', 'b']);
    expect(g.gitDir?.value).toBe('y');
    expect(g.workTree?.value).toBe('w');
    expect(g.settings.map((s) => [s.option, s.setting?.value])).toEqual([
      ['-c', 'k=v'],
      ['--config-env', 'a.b=E'],
      ['--config-env', 'c.d=F'],
    ]);
    expect(g.unknown).toEqual([]);
    expect(g.expansions).toEqual([]);
  });

  it('flags what it cannot model: expansions, unknown options, forms git rejects, no subcommand', () => {
    expect(parseGitGlobals(argvOf('git $X status')).expansions.map((w) => w.raw)).toEqual(['$X']);
    expect(values(parseGitGlobals(argvOf('git $X status')).rest)).toEqual(['status']);
    // git knows no `-Cdir`, `-ckey=v` or `--shallow-file=`: unknown options (git stops with a usage error).
    expect(parseGitGlobals(argvOf('git -Csub -ck=v --shallow-file=f --bogus status')).unknown).toEqual(['-Csub', '-ck=v', '--shallow-file=f', '--bogus']);
    expect(parseGitGlobals(argvOf('git -Csub status')).chdirs).toEqual([]);
    expect(parseGitGlobals(argvOf('git -- status')).unknown).toEqual(['--']);
    for (const c of ['git --help status', 'git -h', 'git --version', 'git -v', 'git --exec-path', 'git --list-cmds=main', 'git --html-path']) {
      expect(parseGitGlobals(argvOf(c)).noSubcommand, c).toBeDefined();
    }
    expect(parseGitGlobals(argvOf('git --exec-path=d x')).noSubcommand).toBeUndefined();
    expect(parseGitGlobals(argvOf('git --exec-path=d x')).execPath?.value).toBe('d');
    // A value missing at the end.
    expect(parseGitGlobals(argvOf('git -c')).settings).toEqual([{ option: '-c', setting: undefined }]);
  });

  it('gitWhere: -C in turn, --git-dir and --work-tree from the last, --bare where it stands, and what it cannot tell', () => {
    const base = '/w';
    const where = (c: string) => gitWhere(parseGitGlobals(argvOf(c)), base);
    expect(where("git -C a -C '' -C ../b status")).toMatchObject({ dirs: ['/w', '/w/a', '/w/a', '/w/b'], run: '/w/b', gitDir: undefined, unknown: false });
    expect(where('git --git-dir=.git --work-tree w -C sub status')).toMatchObject({ run: '/w/sub', gitDir: '/w/sub/.git', workTree: '/w/sub/w' });
    expect(where('git -C sub --bare -C .. status')).toMatchObject({ run: '/w', gitDir: '/w/sub' });
    // GIT_DIR already set stays; a later --git-dir replaces it.
    expect(where('git --git-dir=x --bare status').gitDir).toBe('/w/x');
    expect(where('git --bare --git-dir=x status').gitDir).toBe('/w/x');
    for (const c of ['git -C "$D" status', 'git --git-dir=$G status', 'git $X status', 'git -C']) {
      expect(where(c).unknown, c).toBe(true);
    }
  });

  it('agrees with git on where the options end and where git runs', () => {
    const ws = tmpDir('toolexec-git-globals-');
    execFileSync('git', ['init', '-q', ws]);
    fs.mkdirSync(path.join(ws, 'a', 'b'), { recursive: true });
    execFileSync('git', ['init', '-q', path.join(ws, 'a')]);
    // `git … rev-parse --show-prefix`: the subcommand git ran and where it ran (relative to the repository's top).
    for (const c of ['git -C a rev-parse --show-toplevel', "git -C a -C '' -C b rev-parse --show-toplevel", 'git -C a -C .. rev-parse --show-toplevel', 'git --shallow-file x -C a/b rev-parse --show-toplevel', 'git -c k.v=1 -C a rev-parse --show-toplevel']) {
      const argv = argvOf(c);
      const g = parseGitGlobals(argv);
      expect(g.rest[0]?.value, c).toBe('rev-parse');
      const real = execFileSync('git', argv.slice(1).map((w) => w.value), { cwd: ws, encoding: 'utf8' }).trim();
      const run = gitWhere(g, ws).run;
      expect(real, c).toBe(execFileSync('git', ['-C', run, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim());
    }
    // `..` after a link goes up from its target (chdir), and --git-dir is read from where the last -C leads.
    fs.symlinkSync('a/b', path.join(ws, 'l'));
    for (const c of ['git -C l/.. rev-parse --absolute-git-dir', 'git --git-dir=.git -C a rev-parse --absolute-git-dir', 'git --git-dir .git -C l -C ../.. rev-parse --absolute-git-dir', 'git -C a --git-dir=../.git rev-parse --absolute-git-dir']) {
      const argv = argvOf(c);
      const real = execFileSync('git', argv.slice(1).map((w) => w.value), { cwd: ws, encoding: 'utf8' }).trim();
      const where = gitWhere(parseGitGlobals(argv), ws);
      const gitDir = where.gitDir ?? path.join(execFileSync('git', ['-C', where.run, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' }).trim(), '.git');
      expect(fs.realpathSync(gitDir), c).toBe(real);
    }
  });
});
