/**
 * Files read-only commands read through an option or on their own, which
 * Read deny rules must reach (a review of the read-only tables): `pgrep -F`,
 * `git ls-files -X`. On real rule indexes and workspaces.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initBashParser } from '../src/bash/parser.js';
import { cleanupTmp } from './helpers.js';
import { BYPASS, ruleEnv } from './helpers-bash.js';

beforeAll(async () => {
  await initBashParser();
});
afterAll(cleanupTmp);

describe('pgrep, pkill and pidwait read their pid file', () => {
  it('denies -F / --pidfile on a Read-denied file, in every spelling and mode', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Read(./.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=1\n');
      for (const c of ['pgrep -F .env', 'pgrep -lF .env x', 'pgrep -F.env', 'pgrep --pidfile=.env', 'pgrep --pidf .env', 'pkill -F .env', 'pkill -9 -F .env', 'pkill -SIGHUP --pidfile .env', 'pidwait -F .env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
      }
    }
  });

  it('asks for a pid file outside the working directories; keeps everyday pgrep read-only', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'] });
    expect(await env.check('pgrep -F /etc/hostname')).toMatchObject({ behavior: 'ask', type: 'working_dir' });
    for (const c of ['pgrep node', 'pgrep -f "node server.js"', 'pgrep -a -u root sshd', 'pgrep -x bash', 'pgrep -P 1 -n']) {
      expect((await env.check(c)).behavior, c).toBe('allow');
    }
    // pkill still needs approval, as before (not read-only), and its signal is not taken for an option.
    expect((await env.check('pkill -9 node')).behavior).toBe('passthrough');
  });
});

describe('git ls-files -X', () => {
  it('is --exclude-from: a read whose patterns file is not checked, so not read-only while Read deny rules exist', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'] });
    for (const c of ['git ls-files -X .env', 'git ls-files -o -i -X.env', 'git ls-files -oiX .env']) {
      expect((await env.check(c)).behavior, c).toBe('ask');
    }
    expect((await env.check('git ls-files -o --exclude-standard')).behavior).toBe('allow');
  });
});
