/**
 * git diff's summaries: with a Read deny rule, `git diff --stat HEAD~1`, `git
 * diff --name-only` and `git diff --cached --name-status` were a safety ask
 * under Bash(git:*) and in bypassPermissions, as every git diff was counted as
 * printing tracked contents. A summary prints names and counts only; with
 * every other option known to add no contents it is now judged as any git
 * command. A patch option (-p, -U, --word-diff), an external diff, textconv or
 * the pickaxe (-S/-G, whose answer tells what files hold) still asks. Real
 * rule indexes, and git run for real to show what a summary prints.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';

bashTests();

describe('git diff summaries', () => {
  it('are allowed under Bash(git:*) with Read deny rules, and in bypassPermissions', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(grep:*)'], deny: ['Read(./.env)', 'Read(**/.env)'], mode });
      for (const c of [
        'git diff --stat',
        'git diff --stat HEAD~1',
        'git diff --name-only',
        'git diff --name-only | grep src',
        'git diff --cached --name-status',
        'git diff --numstat main...HEAD -- src/',
        'git diff --shortstat --staged',
        'git diff -M --stat=120 HEAD~3 HEAD',
        'git diff --quiet',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('a patch, an external diff or textconv, or the pickaxe still asks', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)'], mode });
      for (const c of ['git diff', 'git diff --stat -p', 'git diff --stat --patch', 'git diff --stat -U3', 'git diff --stat --word-diff', 'git diff --stat --ext-diff', 'git diff --stat --textconv', 'git diff --name-only -S SECRET', 'git diff --name-only -GSECRET', 'git diff --stat "$OPT"', 'git show --stat HEAD']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
    }
  });

  it('what the allowance rests on: a summary prints names and counts, not contents', () => {
    const dir = tmpDir('toolexec-diff-summary-');
    const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', ...args], { cwd: dir, encoding: 'utf8' });
    git('init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(dir, 'conf.txt'), 'SECRET=one\n');
    git('add', '-A');
    git('commit', '-qm', 'one');
    fs.writeFileSync(path.join(dir, 'conf.txt'), 'SECRET=hunter2\n');
    for (const args of [['--stat'], ['--name-only'], ['--name-status'], ['--numstat'], ['--shortstat'], ['--stat', 'HEAD']]) {
      const out = git('diff', ...args);
      expect(out, args.join(' ')).not.toContain('hunter2');
      expect(out, args.join(' ')).not.toContain('SECRET');
    }
    expect(git('diff')).toContain('hunter2');
  });
});
