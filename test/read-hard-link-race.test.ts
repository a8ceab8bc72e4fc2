/**
 * The Read tool's second look at the file it opened: a hard link to a denied
 * file is recognised by its identity, and that identity was taken by path
 * (`stat(realPath)`) after the open. Had another process put an ordinary file
 * at that name between the open and the stat (a background loop extracting
 * archives under Bash(tar:*)), the check saw the ordinary file while the
 * descriptor read .env. The identity is now taken from the descriptor
 * (/proc/self/fd/N). The interleaving is laid out step by step here with real
 * files and descriptors: open x (a name of .env), replace x, then judge.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertStillPermitted } from '../src/permissions/filesystem.js';
import { cleanupTmp } from './helpers.js';
import { BYPASS, ruleEnv } from './helpers-bash.js';

afterAll(cleanupTmp);

describe('Read judges the file it opened, not the name', () => {
  it('denies a descriptor on .env whose name was replaced by an ordinary file after the open', () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], mode: BYPASS.defaultMode });
    const ws = env.ws;
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
    fs.linkSync(path.join(ws, '.env'), path.join(ws, 'x'));
    fs.linkSync(path.join(ws, '.env'), path.join(ws, 'keep'));
    const x = path.join(ws, 'x');
    const fd = fs.openSync(x, 'r');
    try {
      // The open resolved x; now x is swapped for an ordinary file (one name, no rule).
      fs.writeFileSync(path.join(ws, 'plain'), 'plain\n');
      fs.renameSync(path.join(ws, 'plain'), x);
      expect(() => assertStillPermitted('read', 'Read', x, env.ctx, `/proc/self/fd/${fd}`)).toThrow(/hard link to .*\.env/);
      // The ordinary file itself, opened, is as before.
      const fd2 = fs.openSync(x, 'r');
      try {
        expect(() => assertStillPermitted('read', 'Read', x, env.ctx, `/proc/self/fd/${fd2}`)).not.toThrow();
      } finally {
        fs.closeSync(fd2);
      }
    } finally {
      fs.closeSync(fd);
    }
  });
});
