/**
 * Archivers that take the files to read from a list: with Read(./.env) denied,
 * `echo .env | tar -cf - -T -` (or `tar -cf - -T list`, `--files-from`,
 * `zip -0 - -@ < list`, `rsync --files-from=list . out/`) was allowed under
 * Bash(tar:*) (and in bypassPermissions) and printed .env into the archive on
 * stdout, as the list file was judged as a read but not the names in it; a
 * `find src -name list -exec tar -cf - -T {} \;` did the same through find's
 * tree read. The names a list gives are now unknown locations (a safety ask
 * while Read deny rules exist); -X (patterns to exclude) is as before. Real
 * rule indexes, real tar and zip, and the real service.
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
  fs.writeFileSync(path.join(ws, 'src', 'list.txt'), '.env\n');
}

const ALLOW = ['Bash(tar:*)', 'Bash(zip:*)', 'Bash(rsync:*)', 'Bash(echo:*)', 'Bash(find:*)'];
const listed = [
  'echo .env | tar -cf - -T -',
  'tar -cf - -T src/list.txt',
  'tar cfT - src/list.txt',
  'tar -cf - --files-from=src/list.txt',
  'tar -cf - --files=src/list.txt',
  'zip -0 - -@ < src/list.txt',
  'echo .env | zip -0 - -@',
  'find src -name list.txt -exec tar -cf - -T {} \\;',
];

describe('archivers reading names from a list', () => {
  it('the listed names are unknown locations', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ALLOW, deny: ['Read(./.env)'], mode });
      project(env.ws);
      for (const c of [...listed, 'rsync --files-from=src/list.txt . out/']) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      // Names on the line, and -X's patterns, are judged as before.
      for (const c of ['tar -cf - src', 'tar -cf - -X src/list.txt src']) expect((await env.check(c)).behavior, `${mode}: ${c}`).toBe('allow');
    }
  });

  it('what it rests on: tar and zip put .env in the archive they print', () => {
    const env = ruleEnv();
    project(env.ws);
    for (const c of listed) expect(spawnSync('bash', ['-c', c], { cwd: env.ws, encoding: 'latin1' }).stdout, c).toContain('hunter2');
  });

  it('through the service: refused, not printed', async () => {
    const t = await openApp({ permissions: { deny: ['Read(./.env)'], allow: ALLOW, headless: 'deny' } });
    project(t.workspace);
    const r = await run(t, 'Bash', { command: listed[0]! });
    expect(r.exec).toMatchObject({ status: 'denied' });
    expect(r.text).not.toContain('hunter2');
  });
});
