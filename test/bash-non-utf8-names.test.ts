/**
 * Names that are not UTF-8. A directory named by the single byte 0xff holding `x`, a symbolic
 * link to the workspace's .env (`ln -s ../.env $'\xff'/x`, allowed: the link's target is judged
 * where the line runs): with Read(./.env) denied in bypassPermissions,
 * - `cat $'\xff'/x` was allowed and printed .env: $'\xff' was read as the character U+00FF, whose
 *   UTF-8 (c3 bf) names no file, so the check found nothing there; bash opens the byte 0xff.
 *   A $'…' word whose \x or octal bytes are not UTF-8 is now not a literal (unknown: asks).
 * - `cat ?/x` (or with a star for the name) was allowed and printed it: the glob's expansion built the path from
 *   the name readdir gives back, U+FFFD in place of the byte; a match with U+FFFD now asks.
 * - `grep -Rn SECRET --exclude=.env .` was allowed and printed it: the tree's listing gets the
 *   name back from readdir as U+FFFD, and the walk found nothing below it. A name read back with
 *   U+FFFD now makes the tree unknown (asks).
 * (`mkdir $'\xff' && ln -s ../.env $'\xff'/x` was how a line laid it out.) The real service runs bash, cat and grep.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BYPASS, bashServiceTests, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('a directory whose name is not UTF-8', () => {
  it('hides no link to a denied file from a read through it nor from a tree walk', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    fs.mkdirSync(path.join(t.workspace, 'src'));
    fs.writeFileSync(path.join(t.workspace, 'src', 'a.ts'), 'SECRET\n');
    // As a checkout or an archive lays it out (a line making it with $'\\xff' now asks).
    const ff = Buffer.concat([Buffer.from(`${t.workspace}/`), Buffer.from([0xff])]);
    fs.mkdirSync(ff);
    fs.symlinkSync('../.env', Buffer.concat([ff, Buffer.from('/x')]));
    for (const command of ["cat $'\\xff'/x", "cat $'\\377'/x", 'grep -Rn SECRET --exclude=.env .', 'grep -rn SECRET --exclude=.env -R .', 'cat ?/x', 'cat */x', 'head -5 [^a]/*']) {
      const r = await run(t, 'Bash', { command });
      expect(r.text, command).not.toContain('hunter2');
      expect(r.exec.status, command).not.toBe('succeeded');
    }
    // Names that are UTF-8 are judged as before.
    const fine = await run(t, 'Bash', { command: "mkdir $'\\303\\251t\\303\\251' && echo ok > $'\\xc3\\xa9t\\xc3\\xa9'/n && cat $'\\303\\251t\\303\\251'/n && grep -rn SECRET src" });
    expect(fine.exec.status, fine.text).toBe('succeeded');
    expect(fs.readFileSync(path.join(t.workspace, 'été', 'n'), 'utf8')).toBe('ok\n');
  });
});

describe('a denied file below a directory whose name is not UTF-8', () => {
  it('leaves the hard-link walk unsettled: another name of it asks', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    const ff = Buffer.concat([Buffer.from(`${env.ws}/`), Buffer.from([0xff])]);
    fs.mkdirSync(ff);
    fs.writeFileSync(Buffer.concat([ff, Buffer.from('/.env')]), 'SECRET=hunter2\n');
    fs.mkdirSync(path.join(env.ws, 'src'));
    fs.linkSync(Buffer.concat([ff, Buffer.from('/.env')]), path.join(env.ws, 'src', 'n'));
    fs.writeFileSync(path.join(env.ws, 'src', 'a.ts'), 'x\n');
    // What bash reads: the secret, under a name no rule covers.
    expect(spawnSync('cat', ['src/n'], { cwd: env.ws, encoding: 'utf8' }).stdout).toBe('SECRET=hunter2\n');
    for (const c of ['cat src/n', 'grep -rn SECRET src']) expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    expect(await env.check('cat src/a.ts')).not.toMatchObject({ type: 'safety' });
  });
});
