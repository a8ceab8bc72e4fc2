/**
 * The listing of a tree a recursive read reaches is kept between checks.
 * With Read(./.env) denied, `rg TODO` or `grep -rn TODO .` at the root of a
 * project listed every directory of it again on every check (about 2,200
 * directory reads for a 32,000-entry project), though nothing had changed.
 * Now a directory is read again only when it changed (its identity, mtime or
 * ctime), or was listed within a clock tick of its last change, as the walk
 * for hard links to denied files keeps its own (hard-links.ts). Counted in
 * directory reads (the real fs.readdirSync, spied on and called through), not
 * in time. The hostile side: a denied file (or a link to one) added after a
 * listing was kept is found, in a directory whose mtime was set back, in one
 * changed in the same clock tick as its listing, and one swapped for another.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashTests, BYPASS, countListings, HOUR_AGO, plantDirs, ruleEnv, settle, settleDirs } from './helpers-bash.js';

bashTests();
afterEach(() => {
  vi.restoreAllMocks();
});

/** `src/d0`…`src/d29`, each with a file holding TODO, no .env anywhere; every directory last changed over a second ago. */
async function plant(ws: string): Promise<string[]> {
  const dirs = plantDirs(ws, 'src', 30, 'index.ts', '// TODO\n');
  await settleDirs(dirs);
  return dirs;
}

describe('the listing of a tree a recursive read reaches, kept between checks', () => {
  it('lists a directory again only when it changed', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    const dirs = await plant(env.ws);
    const listings = countListings();
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'allow' });
    const first = listings.n;
    for (const d of dirs) expect(listings.of(d), d).toBeGreaterThan(0);
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'allow' });
    expect(await env.check('grep -rln TODO src')).toMatchObject({ behavior: 'allow' });
    expect(listings.n).toBe(first);
    // A file added to one directory: that directory alone is read again.
    const d7 = path.join(env.ws, 'src', 'd7');
    const before = dirs.map((d) => listings.of(d));
    fs.writeFileSync(path.join(d7, 'more.ts'), '');
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'allow' });
    dirs.forEach((d, i) => {
      if (d === d7) expect(listings.of(d), d).toBeGreaterThan(before[i]!);
      else expect(listings.of(d), d).toBe(before[i]);
    });
  });

  it('finds a denied file, or a link to one, added to a directory after its listing was kept', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    await plant(env.ws);
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'allow' });
    fs.writeFileSync(path.join(env.ws, 'src', 'd3', '.env'), 'KEY=hunter2\n');
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'ask', type: 'safety' });
    fs.rmSync(path.join(env.ws, 'src', 'd3', '.env'));
    fs.writeFileSync(path.join(env.ws, '.env'), 'KEY=hunter2\n');
    expect(await env.check('grep -rn TODO src')).toMatchObject({ behavior: 'allow' });
    fs.symlinkSync('../../.env', path.join(env.ws, 'src', 'd4', 'notes.txt'));
    expect(await env.check('grep -rn TODO src')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('lists again a directory whose mtime was set back after a denied file was added (touch -r)', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    await plant(env.ws);
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'allow' });
    const d5 = path.join(env.ws, 'src', 'd5');
    const before = fs.statSync(d5).mtimeMs;
    const ref = path.join(tmpDir('toolexec-tree-ref-'), 'ref');
    execFileSync('sh', ['-c', `touch -r src/d5 ${ref} && echo KEY=1 > src/d5/.env && touch -r ${ref} src/d5`], { cwd: env.ws });
    expect(fs.statSync(d5).mtimeMs).toBe(before);
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('lists again a directory listed in the clock tick of its last change', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    await plant(env.ws);
    const fresh = path.join(env.ws, 'src', 'fresh');
    fs.mkdirSync(fresh);
    const now = new Date();
    fs.utimesSync(fresh, now, now);
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'allow' });
    // A change a coarse file-system clock leaves at the same mtime (and, set back by hand, ctime within the tick).
    fs.writeFileSync(path.join(fresh, '.env'), 'KEY=1\n');
    fs.utimesSync(fresh, now, now);
    expect(await env.check('grep -rn TODO .')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('lists again a directory swapped for another under the same name', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    await plant(env.ws);
    // The replacement holds .env and is made an hour old first: only its identity differs.
    const other = path.join(env.ws, 'other');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, '.env'), 'KEY=1\n');
    fs.utimesSync(other, HOUR_AGO, HOUR_AGO);
    expect(await env.check('grep -rn TODO src')).toMatchObject({ behavior: 'allow' });
    const d2 = path.join(env.ws, 'src', 'd2');
    fs.rmSync(d2, { recursive: true });
    fs.renameSync(other, d2);
    fs.utimesSync(d2, HOUR_AGO, HOUR_AGO);
    expect(await env.check('grep -rn TODO src')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });
});
