/**
 * grep -r with --include/--exclude: with Read(./.env) denied, `grep -rn
 * API_URL --include='*.ts' .` and `grep -rn TODO --exclude=.env .` were a
 * safety ask in every mode, bypassPermissions too, as a recursive read of a
 * directory holding .env, though grep reads only the files whose base name the
 * patterns let through. Those patterns are now applied to the tree's listing as
 * GNU grep applies them (the last that matches decides; a name none matches is
 * read unless the first is an --include). Patterns outside the modelled forms
 * (brackets, braces, an ambiguous abbreviation, --exclude-from, an expansion, an unquoted
 * --exclude the shell may expand) leave every file counted. Real trees and rule
 * indexes, and GNU grep run for real on the same patterns.
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
  fs.mkdirSync(path.join(env.ws, 'src'));
  fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), 'KEY\n');
  fs.writeFileSync(path.join(env.ws, 'README.md'), 'KEY\n');
}

const grep = (ws: string, command: string): string => spawnSync('bash', ['-c', command], { cwd: ws, encoding: 'utf8' }).stdout;

const filtered = [
  "grep -rn KEY --include='*.ts' .",
  'grep -rn KEY --include=*.ts .',
  "grep -rn KEY --include '*.ts' --include '*.md' .",
  'grep -rn KEY --exclude=.env .',
  "grep -rn KEY --exclude='*.env' --exclude-dir=node_modules .",
  "grep -rn KEY --exclude .env --include '*.ts' .",
  // An unambiguous abbreviation is the option, as getopt_long takes it.
  "grep -rn KEY --inc='*.ts' .",
];
const unfiltered = [
  "grep -rn KEY --include='*.ts' --include='.e*' .",
  "grep -rn KEY --exclude='*' --include=.env .",
  "grep -rn KEY --exclude=x --include='*.ts' .",
  "grep -rn KEY --include='[.]env' .",
  "grep -rn KEY --include='*.{ts,env}' .",
  "grep -rn KEY --in='*.ts' .",
  'grep -rn KEY --exclude=*.env .',
  "grep -rn KEY --include='*.ts' --exclude-from=list .",
  'grep -rn KEY --include="$P" .',
  "grep -rn KEY -- --include='*.ts' .",
];

describe('grep -r --include/--exclude', () => {
  it('a tree holding the denied file is read when the patterns leave it out', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Read(./.env)', 'Read(**/.env)'], mode });
      project(env);
      for (const c of filtered) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
    }
  });

  it('patterns that let it through, or that are not modelled, ask as before', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Read(./.env)', 'Read(**/.env)'], mode });
      project(env);
      for (const c of unfiltered) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
  });

  it('what the model rests on: GNU grep reads no .env for the allowed patterns, and does for the first three others', () => {
    const env = ruleEnv();
    project(env);
    for (const c of filtered) expect(grep(env.ws, c), c).not.toContain('hunter');
    for (const c of unfiltered.slice(0, 3)) expect(grep(env.ws, c), c).toContain('hunter');
  });
});
