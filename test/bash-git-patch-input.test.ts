/**
 * Patches given to git am and git apply: with a Read deny rule (`Read(./.env)`)
 * `git am < fix.patch`, `git apply --stat < fix.patch` and `git am -3
 * patches/*.patch` were a safety ask under Bash(git:*), and in bypassPermissions
 * even with no rule at all (toolexec's own files count as denied): the
 * redirection was judged as a path git's own work-tree write might lead through
 * a link (a link maker's own arguments were not, its redirections were), and
 * the shell's glob of patch files was taken for a pathspec git expands itself.
 * The shell opens a command's redirection before the command runs, and am and
 * apply open their operands by the name given. The patch itself is still judged
 * as a read (`git am < .env` is denied), and a redirection of another command
 * after a work-tree writer (`git checkout x && cat < src/x`) still asks. Real
 * rule indexes, and git run for real.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashTests, BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';

bashTests();

function project(env: RuleEnv): void {
  fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
  fs.writeFileSync(path.join(env.ws, 'fix.patch'), 'diff --git a/a b/a\n');
  fs.mkdirSync(path.join(env.ws, 'patches'));
  fs.writeFileSync(path.join(env.ws, 'patches', '0001-x.patch'), 'From 1\n');
  fs.writeFileSync(path.join(env.ws, 'patches', '0002-y.patch'), 'From 2\n');
  fs.mkdirSync(path.join(env.ws, 'src'));
  fs.symlinkSync('../.env', path.join(env.ws, 'src', 'l'));
}

const everyday = [
  'git am < fix.patch',
  'git am -3 < fix.patch',
  'git apply --stat < fix.patch',
  'git apply --check < fix.patch',
  'npm test && git am < fix.patch',
  'git am < fix.patch | tail -1',
  'git am -3 patches/*.patch',
  'git apply patches/*.patch',
];

describe('patches given to git am and git apply', () => {
  it('are allowed under Bash(git:*) with Read deny rules, and in bypassPermissions', async () => {
    for (const [mode, allow] of [['default', ['Bash(git:*)', 'Bash(npm test:*)', 'Bash(tail:*)']], [BYPASS.defaultMode, []]] as const) {
      const env = ruleEnv({ allow: [...allow], deny: ['Read(./.env)', 'Read(**/.env)'], mode });
      project(env);
      for (const c of everyday) {
        const r = await env.check(c);
        // passthrough: nothing decides, and bypassPermissions then allows.
        expect(mode === 'default' ? ['allow'] : ['allow', 'passthrough'], `${mode}: ${c} ${JSON.stringify(r)}`).toContain(r.behavior);
      }
    }
    // Without any rule, bypassPermissions: they asked (safety) too, toolexec's own files counting as denied.
    const open = ruleEnv({ mode: BYPASS.defaultMode });
    project(open);
    for (const c of everyday) expect(['allow', 'passthrough'], c).toContain((await open.check(c)).behavior);
  });

  it('a patch that is the denied file, or leads to it, is still denied; reads after a work-tree writer still ask', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(cat:*)'], deny: ['Read(./.env)'], mode });
      project(env);
      for (const c of ['git am < .env', 'git am <.env', 'git am < ./.env', 'git apply < .env', 'git am .env', 'git am < src/l', 'git am .e*', 'git apply src/*']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule' });
      }
      for (const c of [
        // bash gives the redirection to cat alone, after the checkout may have put a link at src/x.
        'git checkout other && cat < src/x',
        'git checkout other | cat < src/x',
        'tar xf a.tar -C out && cat < out/x',
        'git am < fix.patch && cat < src/x',
        // The group's redirection is opened before both, but cat's argument is read after the checkout.
        '{ git checkout other; cat src/y; } < fix.patch',
        // A pathspec git expands itself is still unknown.
        "git add '*.env'",
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
    }
  });

  it('what the allowance rests on: git am reads the redirected patch, and applies it', () => {
    const repo = ruleEnv().ws;
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: repo, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'one\n');
    git('add', 'a.txt');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(repo, 'a.txt'), 'two\n');
    git('commit', '-qam', 'two');
    fs.writeFileSync(path.join(repo, 'fix.patch'), git('format-patch', '-1', '--stdout', 'HEAD'));
    git('reset', '-q', '--hard', 'HEAD~1');
    const r = spawnSync('bash', ['-c', 'git -c user.name=t -c user.email=t@e am < fix.patch'], { cwd: repo, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('two\n');
  });
});
