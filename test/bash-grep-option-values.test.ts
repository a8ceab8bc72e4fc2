/**
 * grep's --include/--exclude as grep's getopt reads them: with Read(./.env)
 * denied, `grep -rn -e --exclude=.env -e SECRET .` (or `--label --exclude=.env`,
 * `--exclude-dir --exclude=.env`) was auto-allowed as read-only in default mode
 * and printed .env, since the filter took every word spelling --exclude=… for
 * the option, where grep takes it for the value of -e, --label or
 * --exclude-dir and excludes nothing; and `POSIXLY_CORRECT=1 grep -r SECRET .
 * --exclude=.env` (bypassPermissions) printed it too, as getopt then stops at
 * the first operand and the word is a file name. The filter now reads grep's
 * options with the same table the path model uses (values taken, abbreviations
 * resolved), and an option past the first operand counts only in a line that
 * cannot give grep POSIXLY_CORRECT. Real rule indexes, GNU grep run for real,
 * and the real service.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

function project(ws: string): void {
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), '// SECRET is read from the environment\n');
}

const DENY = ['Read(./.env)'];
/** Words that spell an exclusion grep does not make. */
const misread = [
  'grep -rn -e --exclude=.env -e SECRET .',
  'grep -rn --regexp --exclude=.env -e SECRET .',
  'grep -r --label --exclude=.env SECRET .',
  'grep -rn --exclude-dir --exclude=.env SECRET .',
  'grep -rn --group-separator --exclude=.env SECRET .',
];
const posix = [
  'POSIXLY_CORRECT=1 grep -r SECRET . --exclude=.env',
  'env POSIXLY_CORRECT=1 grep -r SECRET . --exclude=.env',
  'export POSIXLY_CORRECT=1; grep -r SECRET . --exclude=.env',
  'set -a; POSIXLY_CORRECT=1; grep -r SECRET . --exclude=.env',
  'export "POSIX"LY_CORRECT=1 && grep -r SECRET . --exclude=.env',
  'source ./vars.sh; grep -r SECRET . --exclude=.env',
];

describe("grep's options read as grep reads them", () => {
  it('a word that is the value of another option, or a file name under POSIXLY_CORRECT, excludes nothing', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(grep:*)'], deny: DENY, mode });
      project(env.ws);
      for (const c of [...misread, ...posix]) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      // The everyday forms stay allowed.
      for (const c of ['grep -rn SECRET --exclude=.env .', "grep -rn SECRET --include='*.ts' .", 'grep -rn -e SECRET --exclude .env .', 'grep -rn -m 5 --exclude=.env SECRET .', 'grep -rn SECRET --exclude=.env . | head -3']) {
        expect((await env.check(c)).behavior, `${mode}: ${c}`).toBe('allow');
      }
    }
  });

  it('what it rests on: GNU grep prints .env for each of them', () => {
    const env = ruleEnv();
    project(env.ws);
    fs.writeFileSync(path.join(env.ws, 'vars.sh'), 'export POSIXLY_CORRECT=1\n');
    for (const c of [...misread, ...posix]) expect(spawnSync('bash', ['-c', c], { cwd: env.ws, encoding: 'utf8' }).stdout, c).toContain('hunter2');
  });

  it('through the service: refused, not printed', async () => {
    let t = await openApp({ permissions: { deny: DENY, allow: ['Bash(grep:*)'], headless: 'deny' } });
    project(t.workspace);
    const r = await run(t, 'Bash', { command: misread[0]! });
    expect(r.exec).toMatchObject({ status: 'denied' });
    expect(r.text).not.toContain('hunter2');
    // openApp closes the first app before it opens the second.
    t = await openApp({ permissions: { ...BYPASS, deny: DENY, headless: 'deny' } });
    project(t.workspace);
    const p = await run(t, 'Bash', { command: posix[0]! });
    expect(p.exec).toMatchObject({ status: 'denied' });
    expect(p.text).not.toContain('hunter2');
  });
});
