/**
 * The walk for the denied files with several names is kept between checks.
 * Since `Read(./.env)` matches `.env` at any depth, every check that met a
 * file with several names (a pnpm dependency's file, hard linked from the
 * store) listed the whole working directory again: 3,800 directory listings
 * a check in a 35,000-entry pnpm project, and past 20,000 entries every Read
 * or `cat` of such a file was a safety ask, in bypassPermissions too. Now a
 * directory is listed again only when it changed; what a check could not
 * list in time the next one goes on with. Counted in directory reads (the
 * real fs.readdirSync, spied on and called through), not in time. Each fix's
 * hostile side: a denied file that gains a name outside every listed
 * directory, in a listed directory, or in the same clock tick as the listing
 * is still found.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WALK_LIMIT } from '../src/permissions/hard-links.js';
import { tmpDir } from './helpers.js';
import { bashTests, countListings, HOUR_AGO, plantDirs, ruleEnv, settle, settleDirs } from './helpers-bash.js';

bashTests();
afterEach(() => {
  vi.restoreAllMocks();
});

/** `.env`, `y`/`y2` two names of an ordinary file, and `pkg/d0`…`pkg/d39` with a file each; every directory last modified an hour ago and changed over a second ago. */
async function plant(ws: string): Promise<string[]> {
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  fs.writeFileSync(path.join(ws, 'y'), 'plain\n');
  fs.linkSync(path.join(ws, 'y'), path.join(ws, 'y2'));
  const dirs = plantDirs(ws, 'pkg', 40, 'index.js', '');
  await settleDirs(dirs);
  return dirs;
}

describe('the walk for denied files with several names, kept between checks', () => {
  it('lists a directory again only when it changed', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: 'bypassPermissions' });
    const dirs = await plant(env.ws);
    const listings = countListings();
    expect(await env.check('cat y')).toMatchObject({ behavior: 'allow' });
    const first = listings.n;
    expect(first).toBeGreaterThanOrEqual(dirs.length);
    expect(await env.check('cat y2')).toMatchObject({ behavior: 'allow' });
    expect(await env.check('cat y')).toMatchObject({ behavior: 'allow' });
    expect(listings.n).toBe(first);
    // A file added to one directory: that directory alone is listed again.
    fs.writeFileSync(path.join(env.ws, 'pkg', 'd7', 'more.js'), '');
    expect(await env.check('cat y')).toMatchObject({ behavior: 'allow' });
    expect(listings.n).toBe(first + 1);
  });

  it('still finds a denied file that gains a name outside every directory it listed, or in one of them', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: 'bypassPermissions' });
    await plant(env.ws);
    expect(await env.check('cat y')).toMatchObject({ behavior: 'allow' });
    // No listed directory changes: .env's link count does.
    const outside = tmpDir('toolexec-walk-outside-');
    fs.linkSync(path.join(env.ws, '.env'), path.join(outside, 'x'));
    expect(await env.check(`cat ${path.join(outside, 'x')}`)).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
    // A second denied file, linked from a directory listed an hour after its last change.
    const inner = path.join(env.ws, 'pkg', 'd3', '.env');
    fs.writeFileSync(inner, 'B=2\n');
    fs.linkSync(inner, path.join(env.ws, 'pkg', 'd9', 'z'));
    expect(await env.check('cat pkg/d9/z')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
    // A denied name given to a file that had several already: only the directory's listing shows it.
    fs.linkSync(path.join(env.ws, 'y'), path.join(env.ws, 'pkg', 'd5', '.env'));
    expect(await env.check('cat y2')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
  });

  it('lists again a directory whose mtime was set back after a name was added (touch -r)', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(touch:*)', 'Bash(ln:*)'], mode: 'acceptEdits' });
    await plant(env.ws);
    expect(await env.check('cat y')).toMatchObject({ behavior: 'allow' });
    const d5 = path.join(env.ws, 'pkg', 'd5');
    const before = fs.statSync(d5).mtimeMs;
    // A denied name given to a file that had several already, then the directory's mtime put back, by the real touch.
    const ref = path.join(tmpDir('toolexec-walk-ref-'), 'ref');
    execFileSync('sh', ['-c', `touch -r pkg/d5 ${ref} && ln y pkg/d5/.env && touch -r ${ref} pkg/d5`], { cwd: env.ws });
    expect(fs.statSync(d5).mtimeMs).toBe(before);
    expect(await env.check('cat y2')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
  });

  it('lists again a directory listed in the clock tick of its last change', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: 'bypassPermissions' });
    await plant(env.ws);
    const fresh = path.join(env.ws, 'fresh');
    fs.mkdirSync(fresh);
    const now = new Date();
    fs.utimesSync(fresh, now, now);
    expect(await env.check('cat y')).toMatchObject({ behavior: 'allow' });
    // A denied name given to a file that had several already (no denied file's link count moves),
    // in a change a coarse file-system clock leaves at the same mtime.
    fs.linkSync(path.join(env.ws, 'y'), path.join(fresh, '.env'));
    fs.utimesSync(fresh, now, now);
    expect(await env.check('cat y2')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
  });

  it('goes on from where a check past WALK_LIMIT stopped, and asks no more once it is through', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: 'bypassPermissions' });
    await plant(env.ws);
    const many = path.join(env.ws, 'many');
    fs.mkdirSync(many);
    for (let i = 0; i < WALK_LIMIT; i++) fs.writeFileSync(path.join(many, String(i)), '');
    fs.mkdirSync(path.join(many, 'sub'));
    fs.linkSync(path.join(env.ws, '.env'), path.join(many, 'sub', 'x'));
    for (const d of [env.ws, many, path.join(many, 'sub')]) fs.utimesSync(d, HOUR_AGO, HOUR_AGO);
    await settle();
    expect(await env.check('cat y')).toMatchObject({ behavior: 'ask', type: 'safety' });
    const listings = countListings();
    expect(await env.check('cat y')).toMatchObject({ behavior: 'allow' });
    expect(await env.check('cat many/sub/x')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
    // The 20,000-entry directory was listed once, by the first check.
    expect(listings.of(many)).toBe(0);
  });
});
