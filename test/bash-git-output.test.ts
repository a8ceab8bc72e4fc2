/**
 * git writes where `--output` (log, diff, show; any abbreviation git
 * accepts), `format-patch -o` or `archive -o` says: an allow rule such as
 * `Bash(git log:*)` must not let those writes past protected paths
 * (`.claude/settings.json` holds hooks, `.git/hooks` runs programs), Edit
 * deny rules or the working directories. (The service, which has files of
 * its own, already asked for the option as an unknown read; an Edit deny
 * rule on the target was not seen, nor was the target without such files.)
 */
import { describe, expect, it } from 'vitest';
import { bashTests, ruleEnv } from './helpers-bash.js';

bashTests();

const ALLOW = ['Bash(git log:*)', 'Bash(git diff:*)', 'Bash(git show:*)', 'Bash(git format-patch:*)', 'Bash(git archive:*)'];

describe('git output options', () => {
  it('are protected writes under allow rules', async () => {
    const env = ruleEnv({ allow: ALLOW });
    for (const c of [
      'git log -1 --format=x --output=.claude/settings.json',
      'git log --output .claude/settings.json',
      'git log --outp=.vscode/settings.json',
      'git diff --output=.git/hooks/pre-commit',
      'git show --output .git/config HEAD',
      'git format-patch -o .git/hooks HEAD~1',
      'git format-patch --output-directory=.claude HEAD~1',
      'git archive -o .claude/x.tar HEAD',
    ]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
  });

  it('meet Edit deny rules and the working directories; other git commands are as before', async () => {
    const env = ruleEnv({ allow: ALLOW, deny: ['Edit(./src/**)'] });
    expect(await env.check('git log --output=src/x.ts')).toMatchObject({ behavior: 'deny', detail: 'Edit(./src/**)' });
    expect(await env.check('git format-patch -o/tmp/patches HEAD~1')).toMatchObject({ behavior: 'ask', type: 'working_dir' });
    for (const c of ['git log --oneline', 'git diff', 'git format-patch -1 --stdout', 'git log --output=out.txt']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow', type: 'rule' });
    }
  });
});
