/**
 * A command named by a path runs the file there: `./ls`, `bin/cat`,
 * `/tmp/x/echo`, `~/bin/git` are whatever the Write tool, an archive or a
 * cloned repository put there. They were judged by their base name, so
 * `./cat x` ran a planted program as a read-only command without asking (in
 * the default mode), `./mkdir d` as a file command in acceptEdits, and
 * `./timeout 5 ls` as the safe wrapper. Deny rules still match them by base
 * name. Real files, and the real service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { bashTests, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

bashTests();

describe('a command named by a path outside the system program directories', () => {
  it('is not read-only, a safe wrapper or an acceptEdits file command', async () => {
    const env = ruleEnv({ allow: ['Bash(git status:*)'] });
    for (const c of ['./ls', './cat x', 'bin/cat x', './echo hi', '/tmp/x/echo hi', '~/bin/git status', '../git status', './git status', '/usr/bin/../bin/ls', './timeout 5 ls', 'xargs ./cat', 'ls | ./grep x']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'passthrough' });
    }
    for (const c of ['ls', '\\ls', '/bin/ls', '/usr/bin/git status', '/usr/local/bin/cat x', '/usr/bin/timeout 5 ls', 'git status', 'timeout 5 ls']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
    const edits = ruleEnv({ mode: 'acceptEdits' });
    for (const c of ['./mkdir d', 'bin/touch f', './sed -i s/a/b/ f']) expect(await edits.check(c), c).toMatchObject({ behavior: 'passthrough' });
    for (const c of ['mkdir d', '/bin/mkdir d', 'touch f']) expect(await edits.check(c), c).toMatchObject({ behavior: 'allow' });
  });

  it('still meets deny rules by its base name', async () => {
    const env = ruleEnv({ deny: ['Bash(rm:*)'], allow: ['Bash'] });
    for (const c of ['./rm -rf x', 'bin/rm x', '/tmp/rm x', './timeout 5 rm x']) expect(await env.check(c), c).toMatchObject({ behavior: 'deny' });
  });

  it('end to end in the default mode: a planted ./cat does not run unasked', async () => {
    const t = await makeApp({});
    try {
      const cat = path.join(t.workspace, 'cat');
      fs.writeFileSync(cat, '#!/bin/sh\necho pwned > pwned.txt\n', { mode: 0o755 });
      fs.writeFileSync(path.join(t.workspace, 'x'), 'x\n');
      const r = await run(t, 'Bash', { command: './cat x' });
      expect(r.exec.status).toBe('denied');
      expect(fs.existsSync(path.join(t.workspace, 'pwned.txt'))).toBe(false);
      // The program of that name still runs as read-only.
      const ok = await run(t, 'Bash', { command: 'cat x' });
      expect(ok.text).toContain('x');
    } finally {
      await t.close();
    }
  });
});
