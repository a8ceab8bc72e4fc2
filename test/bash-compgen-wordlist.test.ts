/**
 * `compgen -W WORDLIST` expands its word list as shell words, so a command
 * substitution in it runs: with Read(./.env) denied, `compgen -W '$(cat .env)' S`
 * ran in bypassPermissions (compgen is a command of names only, its
 * arguments not judged) and printed .env's lines starting with S. The list
 * is now read as shell text: what it runs is judged, and the command is too
 * complex to allow on its own. A plain word list is as before. Real rule
 * indexes and the real service running bash.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('compgen -W', () => {
  it('judges the commands its word list runs', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(compgen:*)'], mode });
      for (const c of ["compgen -W '$(cat .env)' S", "compgen -W '`cat .env`' S", "compgen -aW '$(cat .env)' S"]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny', detail: 'Read(./.env)' });
      }
      expect(await env.check("compgen -W '$(id)' S"), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/compgen -W expands/) });
      expect(await env.check("compgen -W 'alpha beta' a"), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it("compgen -W '$(cat .env)' S does not print .env in bypassPermissions", async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const r = await run(t, 'Bash', { command: "compgen -W '$(cat .env)' S" });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });
});
