/**
 * find -exec over a tree: `find src -name '*.ts' -exec grep -l TODO {} +` and
 * `find src -exec wc -l {} \;` were a safety ask in bypassPermissions even with
 * no rule at all (toolexec's own files counting as denied), and with Read deny
 * rules, as `{}` was a file no check can know. The names find gives lie in its
 * starting points' trees: reading them is now judged as a read of those trees,
 * as `grep -r TODO src` is (listed; an ask when one holds a denied file or a
 * link out). A name built on the braces (`{}.bak`), a write (`rm {}`), a
 * starting point that is an expansion and `-files0-from` stay unknown. Real
 * trees and rule indexes, and find run for real.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashTests, BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';

bashTests();

function project(env: RuleEnv): void {
  fs.writeFileSync(path.join(env.ws, '.env'), 'KEY=hunter2\n');
  fs.mkdirSync(path.join(env.ws, 'config'));
  fs.writeFileSync(path.join(env.ws, 'config', '.env'), 'KEY=hunter3\n');
  fs.mkdirSync(path.join(env.ws, 'src', 'lib'), { recursive: true });
  fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), '// TODO\n');
  fs.writeFileSync(path.join(env.ws, 'src', 'lib', 'b.ts'), 'KEY\n');
  fs.mkdirSync(path.join(env.ws, 'test'));
  fs.writeFileSync(path.join(env.ws, 'test', 'c.ts'), '// TODO\n');
}

const everyday = [
  "find src -name '*.ts' -exec grep -l TODO {} +",
  "find src -name '*.ts' -exec wc -l {} \\;",
  'find src test -type f -exec grep -Hn TODO {} +',
  "find -L src -exec cat '{}' +",
  "find src -name '*.ts' -execdir grep -n TODO {} +",
];

describe('find -exec reading what find names', () => {
  it('is a read of find\'s trees: allowed in bypassPermissions, with or without Read deny rules', async () => {
    for (const deny of [[], ['Read(./.env)', 'Read(**/.env)']]) {
      const env = ruleEnv({ deny, mode: BYPASS.defaultMode });
      project(env);
      for (const c of everyday) expect(['allow', 'passthrough'], `${deny.length}: ${c}`).toContain((await env.check(c)).behavior);
    }
  });

  it('a tree holding the denied file or a link to it, a built name, a write or an unknown start still ask or deny', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(find:*)'], deny: ['Read(./.env)', 'Read(**/.env)'], mode });
      project(env);
      for (const c of ['find . -name .env -exec cat {} \\;', "find . -name '*.ts' -exec cat {} +", 'find config -exec cat {} \\;', 'find src -exec cp {} {}.bak \\;', 'find src -exec rm {} \\;', 'find $D -exec cat {} \\;', 'find src -files0-from list -exec cat {} +', 'find src -exec cat {}/../../.env \\;', "find src -exec sh -c 'cat $1' _ {} \\;"]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
      expect(await env.check('find .env -exec cat {} \\;'), mode).toMatchObject({ behavior: 'deny' });
      fs.symlinkSync('../.env', path.join(env.ws, 'src', 'l'));
      expect(await env.check('find src -exec cat {} +'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^recursive read/) });
    }
  });

  it('what it rests on: find names only files below its starting points, and cat follows a link among them', () => {
    const env = ruleEnv();
    project(env);
    const run = (c: string): string => spawnSync('bash', ['-c', c], { cwd: env.ws, encoding: 'utf8' }).stdout;
    expect(run('find src -exec cat {} +')).not.toContain('hunter');
    fs.symlinkSync('../.env', path.join(env.ws, 'src', 'l'));
    expect(run('find src -exec cat {} +')).toContain('hunter2');
  });
});
