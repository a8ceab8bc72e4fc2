/**
 * `cd DIR && …`: what follows runs in DIR or not at all. With Read(./.env)
 * denied, `cd src && grep -rn TODO .` was a safety ask in every mode,
 * bypassPermissions too, though src held no .env: every path after a cd was
 * resolved from both the line's starting directory and the cd's target, so
 * `.` was also the project root, which holds .env. A line that is one list
 * joined by `&&` alone, whose first command is its only cd, now resolves the
 * rest from the target only; `;`, `||`, a second cd, or a cd that may fail
 * into nothing keep both. Real trees and rule indexes; the real service runs
 * the command end to end.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

const DENY = ['Read(./.env)', 'Read(**/.env)', 'Edit(./.env)'];

function project(ws: string): void {
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  fs.mkdirSync(path.join(ws, 'config'));
  fs.writeFileSync(path.join(ws, 'config', '.env'), 'DB=hunter3\n');
  fs.mkdirSync(path.join(ws, 'src', 'lib'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'index.ts'), '// TODO: x\n');
  fs.writeFileSync(path.join(ws, 'src', 'lib', 'util.ts'), '// TODO: y\n');
}

describe('cd DIR && …', () => {
  it('reads DIR, not the directory the line starts in, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: DENY, mode });
      project(env.ws);
      for (const c of ['cd src && grep -rn TODO .', 'cd src && grep -rn TODO', '(cd src && grep -rn TODO .)', 'cd src && grep -rn TODO . | head -5', 'cd src && rg -n TODO && ls lib']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('still judges from both where the cd may fail and the rest run anyway, or the line moves again', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ deny: DENY, mode });
      project(env.ws);
      for (const c of [
        'cd src; grep -rn TODO .',
        'cd src || grep -rn TODO .',
        'cd src && grep -rn TODO . || grep -rn K .',
        'cd src && cd .. && grep -rn K .',
        'cd src && bash -c "cd .. && grep -rn K ."',
        'cd config && grep -rn DB .',
        'cd missing && grep -rn DB .',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      }
      for (const c of ['cd src && cat ../.env', 'cd src && grep -rn TODO . ; cat .env', 'cd src && ln -s ../.env x && cat x', 'cd src && rm ../.env', 'cd config && cat .env']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'deny' });
      }
    }
  });

  it('end to end in bypassPermissions: src is searched, the secret is not', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: DENY, headless: 'deny' } });
    project(t.workspace);
    const ok = await run(t, 'Bash', { command: 'cd src && grep -rn TODO .' });
    expect(ok.exec).toMatchObject({ status: 'succeeded' });
    expect(ok.text).toContain('./index.ts:1:// TODO: x');
    expect(ok.text).toContain('./lib/util.ts:1:// TODO: y');
    const refused = await run(t, 'Bash', { command: 'cd src; grep -rn SECRET ..' });
    expect(refused.exec).toMatchObject({ status: 'denied' });
    expect(refused.text).not.toContain('hunter2');
  });
});
