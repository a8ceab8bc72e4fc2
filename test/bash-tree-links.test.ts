/**
 * Readers of whole trees and the links inside them: with Read(/.env)
 * denied, `grep -R SECRET src` printed `.env` through `src/l` → `../.env`
 * in bypassPermissions (or under Bash(grep:*)), since only the deny rules'
 * prefixes were compared with `src`. A symbolic link in the tree to a denied
 * file or to a directory a rule reaches, or a hard link in it to a denied
 * file, now makes the read a safety ask. Real trees, and the real service.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeApp } from './helpers.js';
import { bashTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

bashTests();

const READERS = ['grep -R SECRET src', 'grep -r SECRET src', 'rg -L SECRET src', 'zip -r out.zip src', 'tar -chf out.tar src', 'cp -rL src copy'];

function tree(ws: string, plant: (src: string) => void): void {
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  const src = path.join(ws, 'src');
  fs.mkdirSync(path.join(src, 'deep'), { recursive: true });
  fs.writeFileSync(path.join(src, 'a.ts'), 'export {};\n');
  plant(src);
}

describe('links inside a tree read whole', () => {
  const plants: Array<[string, (src: string) => void]> = [
    ['a symlink to the denied file', (src) => fs.symlinkSync('../../.env', path.join(src, 'deep', 'l'))],
    ['a symlink to a directory holding it', (src) => fs.symlinkSync('..', path.join(src, 'up'))],
    ['a hard link to it', (src) => fs.linkSync(path.join(src, '..', '.env'), path.join(src, 'deep', 'h'))],
  ];
  it.each(plants)('%s makes the read a safety ask, in bypassPermissions and under an allow rule', async (_name, plant) => {
    for (const opts of [{ mode: BYPASS.defaultMode }, { allow: ['Bash(grep:*)', 'Bash(rg:*)', 'Bash(zip:*)', 'Bash(tar:*)', 'Bash(cp:*)'] }]) {
      const env = ruleEnv({ deny: ['Read(/.env)'], ...opts });
      tree(env.ws, plant);
      for (const c of READERS) {
        expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^recursive read through a link/) });
      }
    }
  });

  it('a tree without such links is as before', async () => {
    const env = ruleEnv({ deny: ['Read(/.env)'], allow: ['Bash(grep:*)'] });
    tree(env.ws, (src) => {
      fs.symlinkSync('a.ts', path.join(src, 'alias.ts'));
      fs.writeFileSync(path.join(src, 'b.ts'), '');
      fs.linkSync(path.join(src, 'b.ts'), path.join(src, 'deep', 'b2.ts'));
    });
    expect(await env.check('grep -R SECRET src')).toMatchObject({ behavior: 'allow', type: 'rule' });
  });

  it('grep -R does not print .env in bypassPermissions', async () => {
    const t = await makeApp({ permissions: { ...BYPASS, deny: ['Read(/.env)'] } });
    try {
      tree(t.workspace, plants[0]![1]);
      const r = await run(t, 'Bash', { command: 'grep -R SECRET src' });
      expect(r.text).not.toContain('hunter2');
      expect(r.exec.status).toBe('denied');
    } finally {
      await t.close();
    }
  });
});
