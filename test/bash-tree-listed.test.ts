/**
 * Readers of whole trees under a rule that may match inside them by name: with
 * `Read(**\/.env)` (or a bare `.env`) denied, `grep -r TODO src`, `rg TODO src`,
 * `tar czf src.tgz src`, `zip -r b.zip src` and `cp -r src build/` were a
 * safety ask in every mode, bypassPermissions too, though src held no such
 * file: the directory was judged by what the rule could match below it (and
 * `grep -r` was never read-only while Read deny rules existed). The
 * tree is now listed (as it already was for links, up to TREE_LIMIT entries)
 * and asks when something in it is denied, when it is too large to list, when
 * it does not exist yet, or when another program of the line that no table
 * models may move files into it (`rename config src/cfg config && grep -r DB
 * src`). Real trees, rule indexes, and the real service running grep.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { TREE_LIMIT } from '../src/permissions/tree-reach.js';
import { bashServiceTests, BYPASS, ruleEnv, type RuleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

const DENY = ['Read(./.env)', 'Read(**/.env)'];
const ALLOW = ['Bash(grep:*)', 'Bash(rg:*)', 'Bash(tar:*)', 'Bash(zip:*)', 'Bash(head:*)', 'Bash(cp:*)', 'Bash(rename:*)', 'Bash(mv:*)', 'Bash(git:*)', 'Bash(npm test:*)'];

function project(ws: string): void {
  fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
  fs.mkdirSync(path.join(ws, 'config'));
  fs.writeFileSync(path.join(ws, 'config', '.env'), 'DB=hunter3\n');
  fs.mkdirSync(path.join(ws, 'src', 'lib'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'index.ts'), '// TODO: x\n');
  fs.writeFileSync(path.join(ws, 'src', 'lib', 'util.ts'), 'export const DB = 1;\n');
  fs.writeFileSync(path.join(ws, 'src', '.env.example'), 'SECRET=\n');
  fs.mkdirSync(path.join(ws, 'test'));
  fs.writeFileSync(path.join(ws, 'test', 'a.test.ts'), '// TODO\n');
}

const everyday = ['grep -r TODO src', 'grep -rn TODO src/ test', 'rg TODO src', 'rg -l DB src test', 'tar czf src.tgz src', 'zip -r b.zip src', 'grep -rn TODO src | head -5', 'cp -r src build/'];

describe('tree readers under a rule that may match inside by name', () => {
  it('read a tree holding no denied file, in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ALLOW, deny: DENY, mode });
      project(env.ws);
      for (const c of everyday) expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
    }
  });

  it('a search of such a tree is read-only, as without deny rules; find, which would list denied names, is not', async () => {
    for (const mode of ['default', 'acceptEdits'] as const) {
      const env = ruleEnv({ deny: DENY, mode });
      project(env.ws);
      for (const c of ['grep -r TODO src', 'grep -rn TODO src test', 'rg -l DB src', 'grep -R TODO src | head -5']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow', type: 'tool' });
      }
      expect((await env.check("find src -name '*.ts'")).behavior).toBe('passthrough');
      // A tree holding the file still asks (safety), as above.
      expect(await env.check('grep -r DB config')).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
  });

  it('ask when the tree holds a denied file, a link to one, or cannot be listed before the line runs', async () => {
    for (const mode of ['default', BYPASS.defaultMode] as const) {
      const env: RuleEnv = ruleEnv({ allow: ALLOW, deny: [...DENY, 'Read(./src/private/**)'], mode });
      project(env.ws);
      const safety = async (c: string): Promise<void> => {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety' });
      };
      // Below it, at any depth.
      fs.mkdirSync(path.join(env.ws, 'src', 'deep', 'er'), { recursive: true });
      fs.writeFileSync(path.join(env.ws, 'src', 'deep', 'er', '.env'), 'K=1\n');
      // rg skips hidden names unless told otherwise (bash-rg-hidden.test.ts).
      for (const c of ['grep -r K src', 'rg -uu K src', 'tar czf s.tgz src', 'cp -r src build/', 'grep -r K .', 'grep -r DB config']) await safety(c);
      fs.rmSync(path.join(env.ws, 'src', 'deep'), { recursive: true });
      await expect(env.check('grep -r K src')).resolves.toMatchObject({ behavior: 'allow' });
      // A directory a rule covers, even empty.
      fs.mkdirSync(path.join(env.ws, 'src', 'private'));
      await safety('grep -r K src');
      fs.rmSync(path.join(env.ws, 'src', 'private'), { recursive: true });
      // Links: a hard link, a symbolic link to the file, and one to a directory holding it (grep -R follows).
      fs.linkSync(path.join(env.ws, '.env'), path.join(env.ws, 'src', 'h.txt'));
      await safety('grep -r SECRET src');
      fs.rmSync(path.join(env.ws, 'src', 'h.txt'));
      fs.symlinkSync('../.env', path.join(env.ws, 'src', 'l'));
      await safety('grep -R SECRET src');
      fs.rmSync(path.join(env.ws, 'src', 'l'));
      fs.symlinkSync('../config', path.join(env.ws, 'src', 'cfg'));
      await safety('grep -R DB src');
      fs.rmSync(path.join(env.ws, 'src', 'cfg'));
      // Not there yet, or filled by another program of the line before the read.
      for (const c of [
        'grep -r DB build/new',
        'rename config src/cfg config && grep -r DB src',
        'npm test && grep -r DB src',
        'mv config src/cfg && grep -r DB src',
        'cp -r config src/ && grep -r DB src',
        'tar xf a.tar -C src && grep -r DB src',
        'git checkout other && grep -r DB src',
      ]) {
        await safety(c);
      }
    }
  });

  it("read a pnpm node_modules through its links to directories inside the tree by what lies there", async () => {
    // node_modules/a → .pnpm/a@1/node_modules/a: the tree's own directory, walked and judged where it lies.
    // Under ./.env (any depth) every such link asked, 'grep -rn TODO --include=*.ts .' included.
    const env = ruleEnv({ allow: ALLOW, deny: DENY, mode: BYPASS.defaultMode });
    project(env.ws);
    fs.rmSync(path.join(env.ws, 'config'), { recursive: true });
    const pkg = path.join(env.ws, 'node_modules', '.pnpm', 'a@1.0.0', 'node_modules', 'a');
    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, 'index.ts'), '// TODO\n');
    fs.symlinkSync('.pnpm/a@1.0.0/node_modules/a', path.join(env.ws, 'node_modules', 'a'));
    for (const c of ["grep -rn TODO --include='*.ts' .", 'grep -Rn TODO node_modules', 'rg -L TODO node_modules']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'allow' });
    }
    // A denied file where the link leads is found there; a link to a directory outside the tree still asks.
    fs.writeFileSync(path.join(pkg, '.env'), 'K=1\n');
    for (const c of ['grep -Rn TODO node_modules', 'rg -L --hidden TODO node_modules']) {
      expect(await env.check(c), c).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
    fs.rmSync(path.join(pkg, '.env'));
    fs.mkdirSync(path.join(env.ws, 'config'));
    fs.writeFileSync(path.join(env.ws, 'config', '.env'), 'DB=hunter3\n');
    fs.symlinkSync('../../config', path.join(env.ws, 'node_modules', '.pnpm', 'cfg'));
    expect(await env.check('grep -Rn DB node_modules')).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringContaining('recursive read through a link') });
  });

  it('asks for a tree larger than it lists', async () => {
    const env = ruleEnv({ deny: DENY, mode: BYPASS.defaultMode });
    const big = path.join(env.ws, 'big');
    fs.mkdirSync(big);
    for (let i = 0; i <= TREE_LIMIT; i++) fs.writeFileSync(path.join(big, `f${i}`), '');
    // Both rules may match inside by name: ./.env is unanchored, as Claude Code reads it.
    expect(await env.check('grep -r TODO big')).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'recursive read under a Read deny rule: Read(./.env)' });
  });

  it('end to end in bypassPermissions: src is searched, a tree holding the file is refused', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: DENY, headless: 'deny' } });
    project(t.workspace);
    const ok = await run(t, 'Bash', { command: 'grep -rn TODO src' });
    expect(ok.exec).toMatchObject({ status: 'succeeded' });
    expect(ok.text).toContain('src/index.ts:1:// TODO: x');
    fs.mkdirSync(path.join(t.workspace, 'src', 'conf'));
    fs.copyFileSync(path.join(t.workspace, 'config', '.env'), path.join(t.workspace, 'src', 'conf', '.env'));
    const refused = await run(t, 'Bash', { command: 'grep -rn DB src' });
    expect(refused.exec).toMatchObject({ status: 'denied' });
    expect(refused.text).not.toContain('hunter3');
  });
});
