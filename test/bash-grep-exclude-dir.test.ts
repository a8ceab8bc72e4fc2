/**
 * grep -r with --exclude-dir: with Read(./.env) denied, `grep -rn TODO
 * --exclude-dir=node_modules .` was a safety ask (bypassPermissions too) when
 * a dependency ships a `.env` below node_modules, though grep never enters
 * node_modules. GNU grep's --exclude-dir (trailing slashes stripped, matched
 * with fnmatch against the base name of each directory it meets below an
 * operand) is now applied to the tree's listing. What it does not exclude
 * still asks: a pattern that names no directory (`./node_modules`,
 * `a/node_modules`, a different case), an operand that is itself the excluded
 * directory (listed whole), a link from elsewhere in the tree into an excluded
 * directory (grep -R follows it), a pattern the shell may expand, one grep
 * takes as a file name or as -e's pattern. Real trees and rule indexes, and
 * GNU grep run for real on the same commands.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBashParser } from '../src/bash/parser.js';
import { cleanupTmp } from './helpers.js';
import { BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';

beforeAll(async () => {
  await initBashParser();
});
afterAll(cleanupTmp);

/** A project whose only denied files lie below node_modules and vendor/cache. */
function project(env: RuleEnv): void {
  fs.mkdirSync(path.join(env.ws, 'node_modules', 'pkg'), { recursive: true });
  fs.writeFileSync(path.join(env.ws, 'node_modules', 'pkg', '.env'), 'KEY=hunter2\n');
  fs.mkdirSync(path.join(env.ws, 'vendor', 'cache'), { recursive: true });
  fs.writeFileSync(path.join(env.ws, 'vendor', 'cache', '.env'), 'KEY=hunter3\n');
  fs.mkdirSync(path.join(env.ws, 'src'));
  fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), 'KEY\n');
}

const run = (ws: string, command: string): string => spawnSync('bash', ['-c', command], { cwd: ws, encoding: 'utf8' }).stdout;

const skipped = [
  'grep -rn KEY --exclude-dir=node_modules --exclude-dir=vendor .',
  "grep -rn KEY --exclude-dir=node_modules --exclude-dir='vend*' .",
  'grep -rn KEY --exclude-dir=node_modules/ --exclude-dir=cache .',
  "grep -rn KEY --exclude-dir='node_*' --exclude-dir='c?che' .",
  'grep -rn KEY --exclude-dir node_modules --exclude-dir vendor .',
  // Options after the operand, as getopt_long permutes them; an unambiguous abbreviation.
  'grep -rn KEY . --exclude-dir=node_modules --exclude-dir=vendor',
  'grep -rn KEY --exclude-d=node_modules --exclude-dir=vendor .',
  'grep -Rn KEY --exclude-dir=node_modules --exclude-dir=vendor .',
];
const read = [
  // One of the two directories holding .env is entered.
  'grep -rn KEY --exclude-dir=node_modules .',
  // Patterns that match no base name: a path, another case, a near miss.
  'grep -rn KEY --exclude-dir=./node_modules --exclude-dir=vendor .',
  'grep -rn KEY --exclude-dir=node_modules --exclude-dir=vendor/cache .',
  'grep -rn KEY --exclude-dir=NODE_MODULES --exclude-dir=vendor .',
  'grep -rn KEY --exclude-dir=node_module --exclude-dir=vendor .',
  // The text of -e, and a file name after --.
  'grep -rn -e --exclude-dir=node_modules --exclude-dir=vendor .',
  'grep -rn KEY --exclude-dir=vendor -- . --exclude-dir=node_modules',
];

describe('grep -r --exclude-dir', () => {
  it('a tree whose denied files lie only in directories grep does not enter is read', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Read(./.env)'], mode });
      project(env);
      for (const c of skipped) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
    }
  });

  it('a pattern of many * is matched in steps bounded by its length: the check answers', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: 'default' });
    project(env);
    // As regular expressions these backtracked without end against the 60-character names (the check never answered).
    const name = 'a'.repeat(60);
    fs.mkdirSync(path.join(env.ws, 'src', name));
    fs.writeFileSync(path.join(env.ws, 'src', name, name), 'KEY\n');
    const many = `${'*a'.repeat(14)}*b`;
    for (const c of [`grep -rn KEY --exclude-dir=node_modules --exclude-dir=vendor --exclude-dir='${many}' .`, `grep -rn KEY --exclude-dir=node_modules --exclude-dir=vendor --exclude='${many}' .`]) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
    expect(await env.check(`grep -rn KEY --exclude-dir='${many}' .`)).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('patterns that do not leave out every directory holding one ask as before', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    project(env);
    for (const c of read) expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('an operand that is the excluded directory, an unquoted pattern, or a link from elsewhere into an excluded directory asks', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    project(env);
    // The operand is listed whole (grep 3.8 skips it, an older one reads it).
    expect(await env.check('grep -rn KEY --exclude-dir=node_modules --exclude-dir=vendor node_modules')).toMatchObject({ behavior: 'ask', type: 'safety' });
    // The shell may expand it to a planted name: `--exclude-dir=vend*` is then another pattern.
    expect(await env.check('grep -rn KEY --exclude-dir=node_modules --exclude-dir=vend* .')).toMatchObject({ behavior: 'ask', type: 'safety' });
    // grep -R follows src/l (a name no pattern excludes) into node_modules and reads pkg/.env there.
    fs.symlinkSync('../node_modules', path.join(env.ws, 'src', 'l'));
    for (const c of ['grep -Rn KEY --exclude-dir=node_modules --exclude-dir=vendor .', 'grep -rn KEY --exclude-dir=node_modules --exclude-dir=vendor .']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    expect(run(env.ws, 'grep -Rn KEY --exclude-dir=node_modules --exclude-dir=vendor .')).toContain('hunter2');
  });

  it('what the model rests on: GNU grep reads no .env for the allowed commands, and does for the others', () => {
    const env = ruleEnv();
    project(env);
    for (const c of skipped) expect(run(env.ws, c), c).not.toContain('hunter');
    for (const c of read.slice(0, 5)) expect(run(env.ws, c), c).toContain('hunter');
  });
});

/**
 * fnmatch's `?` is one character of the locale (one byte in the C locale) and the name is bytes;
 * the listing's names are UTF-16 strings. `--exclude-dir='a??'` matched `a😀` in the listing (two
 * code units) while grep, in C.UTF-8 (one character) as in C (four bytes), enters it: with
 * Read(./.env) denied in bypassPermissions, `grep -rn KEY --exclude-dir='a??' .` was allowed and
 * printed a😀/.env. A directory whose name is not all ASCII, where bytes, characters and code
 * units are the same, is now walked whatever the patterns say.
 */
describe('grep -r --exclude-dir and names that are not ASCII', () => {
  it('walks a directory whose name a pattern matches only as UTF-16', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    fs.mkdirSync(path.join(env.ws, 'a😀'));
    fs.writeFileSync(path.join(env.ws, 'a😀', '.env'), 'KEY=hunter2\n');
    const c = "grep -rn KEY --exclude-dir='a??' .";
    for (const lang of ['C.UTF-8', 'C']) {
      expect(spawnSync('bash', ['-c', c], { cwd: env.ws, encoding: 'utf8', env: { ...process.env, LC_ALL: lang } }).stdout, lang).toContain('hunter2');
    }
    expect(await env.check(c)).toMatchObject({ behavior: 'ask', type: 'safety' });
    // An ASCII name the same pattern matches is still left out.
    fs.renameSync(path.join(env.ws, 'a😀'), path.join(env.ws, 'abc'));
    expect(await env.check(c)).toMatchObject({ behavior: 'allow' });
    expect(run(env.ws, c)).not.toContain('hunter');
  });
});
