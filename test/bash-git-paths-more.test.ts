/**
 * git forms the last round's git checks missed, with Read(/.env),
 * Edit(/.env) and Read(./.git/config) denied, under Bash(git:*):
 * `git ls-remote --get-url` and `git remote -vv` printed the remote URL from
 * .git/config (a token in it); `git mv .env x` moved the denied file to a
 * name no rule covers (then `cat x` printed it), `git rm .env` deleted it;
 * `git add '*.env'` (a pathspec git expands itself, or `:(icase).ENV`,
 * `:/.env`) staged it for a push; `git checkout-index --prefix=.git/hooks/ -a`
 * wrote tracked files into the hooks directory, where `git commit` runs them.
 * Real rule indexes and repositories, and the real service running git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

const DENY = ['Read(/.env)', 'Edit(/.env)', 'Read(./.git/config)'];

describe('more git paths', () => {
  it('are judged by the deny rules and protected paths, under Bash(git:*) and in bypassPermissions', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: DENY, mode });
      execFileSync('git', ['init', '-q', env.ws]);
      fs.mkdirSync(path.join(env.ws, 'src'));
      for (const c of ['git ls-remote --get-url origin', 'git remote -vv', 'git mv .env x', 'git mv -k -- .env x', 'git rm .env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny' });
      }
      for (const c of ["git add '*.env'", "git add ':(icase).ENV'", "git add ':/.env'"]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
      expect(await env.check('git checkout-index --prefix=.git/hooks/ -a'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^\.git\//) });
      // Ordinary forms, as before.
      for (const c of ['git remote', 'git add .', 'git add :/', 'git add src/a.ts', 'git mv src/a.ts src/b.ts', 'git rm --cached .env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
      // Every tracked file written out, .env among them: the rule Edit(/.env) reaches into the work tree (bash-git-tree-rewrite.test.ts).
      expect(await env.check('git checkout-index -a'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'git rewrite of a work tree under an Edit deny rule: Edit(/.env)' });
    }
  });

  it('git ls-remote --get-url does not print the token in .git/config', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: DENY } });
    execFileSync('git', ['init', '-q', t.workspace]);
    execFileSync('git', ['remote', 'add', 'origin', 'https://u:tok-hunter2@example.invalid/x.git'], { cwd: t.workspace });
    const r = await run(t, 'Bash', { command: 'git ls-remote --get-url origin' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });

  it('git mv .env x does not run, so cat x cannot print .env', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: DENY } });
    const ws = t.workspace;
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
    execFileSync('git', ['init', '-q', ws]);
    execFileSync('git', ['add', '.env'], { cwd: ws });
    const r = await run(t, 'Bash', { command: 'git mv .env x' });
    expect(r.exec.status).toBe('denied');
    expect(fs.existsSync(path.join(ws, '.env'))).toBe(true);
    // Had it moved, the next call would read it under a name no rule covers.
    const next = await run(t, 'Bash', { command: 'cat x' });
    expect(next.text).not.toContain('hunter2');
  });
});
