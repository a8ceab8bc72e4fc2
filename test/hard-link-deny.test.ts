/**
 * Hard links to a denied file: the same file under a name no rule covers.
 * With `Read(./.env)` denied, a hard link `x` made earlier (by an archive's
 * hard-link member, which cannot be judged before it is extracted, or by the
 * user) must not let Read or `cat x` print `.env`, nor `>> x` change it while
 * `Edit(./.env)` is denied. Real files, real links, the real service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hardLinkChecker, WALK_LIMIT } from '../src/permissions/hard-links.js';
import { tmpDir } from './helpers.js';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

/** `.env` (secret), `x` a hard link to it, `y`/`y2` two names of an ordinary file, `src/a.ts`. */
function plant(ws: string): void {
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  fs.linkSync(path.join(ws, '.env'), path.join(ws, 'x'));
  fs.writeFileSync(path.join(ws, 'y'), 'plain\n');
  fs.linkSync(path.join(ws, 'y'), path.join(ws, 'y2'));
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'export {};\n');
}

describe('Bash through a hard link to a denied file', () => {
  it('denies reading it, whatever the spelling of the deny rule and the mode', async () => {
    for (const deny of ['Read(./.env)', 'Read(.env)', 'Read(/.env)', 'Read(**/.env)']) {
      for (const mode of ['default', BYPASS.defaultMode, 'acceptEdits'] as const) {
        const env = ruleEnv({ deny: [deny], mode });
        plant(env.ws);
        for (const c of ['cat x', 'grep SECRET x', 'head -1 ./x', 'cp x z', 'cat y x']) {
          expect(await env.check(c), `${deny} ${mode}: ${c}`).toMatchObject({ behavior: 'deny', type: 'rule', detail: deny });
        }
      }
    }
  });

  it('denies writing it in place while an Edit deny rule covers it', async () => {
    const env = ruleEnv({ deny: ['Edit(./.env)'], mode: 'acceptEdits' });
    plant(env.ws);
    for (const c of ['echo A=1 >> x', 'tee -a x < /dev/null', 'printf x > x']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Edit(./.env)' });
    }
    expect(await env.check('echo A=1 >> y')).toMatchObject({ behavior: 'allow' });
  });

  it('leaves files with several names that no rule covers, and everyday commands, as they were', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'] });
    plant(env.ws);
    for (const c of ['cat y', 'cat y2', 'wc -l y y2', 'cat src/a.ts', 'ls', 'git status']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
  });

  it('asks when the walk for the denied files is cut short', async () => {
    const env = ruleEnv({ deny: ['Read(.env)'] });
    plant(env.ws);
    const many = path.join(env.ws, 'many');
    fs.mkdirSync(many);
    for (let i = 0; i <= WALK_LIMIT; i++) fs.writeFileSync(path.join(many, String(i)), '');
    expect(await env.check('cat y')).toMatchObject({ behavior: 'ask', type: 'safety' });
    // A file with one name is not looked at.
    expect(await env.check('cat src/a.ts')).toMatchObject({ behavior: 'allow' });
  });
});

describe('hardLinkChecker', () => {
  it('finds the denied name below a rule prefix, and nothing for a file with one name', () => {
    const ws = tmpDir();
    plant(ws);
    const rule = { raw: 'Read(./.env)' } as never;
    const entry = { rule, prefix: ws, matches: (p: string) => p === path.join(ws, '.env') };
    const check = hardLinkChecker([entry]);
    expect(check(path.join(ws, 'x'))).toEqual({ rule, other: path.join(ws, '.env') });
    expect(check(path.join(ws, 'y'))).toBeUndefined();
    expect(check(path.join(ws, 'src', 'a.ts'))).toBeUndefined();
    // The denied file itself is the rules' business, not a link's.
    expect(check(path.join(ws, '.env'))).toBeUndefined();
  });
});

describe('the Read tool through a hard link to a denied file', () => {
  it('is denied, and the secret is not shown', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    plant(t.workspace);
    const r = await run(t, 'Read', { file_path: path.join(t.workspace, 'x') });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Read(./.env)' } } });
    expect(r.text).not.toContain('hunter2');
    const ok = await run(t, 'Read', { file_path: path.join(t.workspace, 'y2') });
    expect(ok.text).toContain('plain');
  });
});

describe('Grep through a hard link to a denied file', () => {
  it.each(['rg', 'js'] as const)('does not search it (%s engine), and searches other files with several names', async (engine) => {
    const t = await openApp({ permissions: { deny: ['Read(./.env)'] }, grep: { engine } });
    plant(t.workspace);
    fs.writeFileSync(path.join(t.workspace, 'y'), 'SECRET lookalike\n');
    for (const output_mode of ['content', 'files_with_matches'] as const) {
      const r = await run(t, 'Grep', { pattern: 'SECRET', output_mode });
      expect(r.text).not.toContain('hunter2');
      expect(r.text).not.toMatch(/(^|\/)x(:|$)/m);
      expect(r.text).toContain('y');
    }
    const one = await run(t, 'Grep', { pattern: 'SECRET', path: path.join(t.workspace, 'x'), output_mode: 'content' });
    expect(one.text).not.toContain('hunter2');
  });
});

