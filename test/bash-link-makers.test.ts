/**
 * Links made in a command line by other programs than ln -s and mv: an
 * archive holding a symlink (`tar xf a.tar && cat l`, unzip), cp or rsync
 * copying a link as a link (`cp -P sl l && cat l/.env`), ln or link making a
 * hard link to a symlink, cp -r copying a relative link to where it leads
 * to .env, git checking out a tracked symlink (`git checkout
 * -- l; cat l`). With Read(/.env) denied, the read through the new link was
 * judged by where its path led before the line ran (nowhere) and printed .env,
 * under Bash(tar:*) or Bash(git:*), in acceptEdits and in bypassPermissions.
 * Paths below what such a command writes (anywhere, for git) are now unknown
 * locations in the line's other commands. Real rule indexes, real archives and
 * repositories, and the real service running the commands.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashServiceTests, BYPASS, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('links other programs make in the same line', () => {
  it('make paths below what they write unknown locations while Read deny rules exist', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(tar:*)', 'Bash(git:*)', 'Bash(unzip:*)', 'Bash(cp:*)', 'Bash(rsync:*)'], deny: ['Read(/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.symlinkSync('.', path.join(env.ws, 'sl'));
      fs.mkdirSync(path.join(env.ws, 'src'));
      fs.writeFileSync(path.join(env.ws, '.gitignore'), '');
      fs.mkdirSync(path.join(env.ws, 'd'));
      // A relative link that leads out of the workspace where it is, and to .env once copied one level down.
      fs.symlinkSync('../../.env', path.join(env.ws, 'src', 'y'));
      for (const c of [
        'tar xf a.tar && cat l',
        'tar -xf a.tar -C out; cat out/l',
        'cat l & tar xf a.tar; wait',
        'unzip a.zip && cat l',
        'cp -P sl l && cat l/.env',
        'cp -d sl l && cat l/.env',
        'mkdir d && cp -r src d/ && cat d/src/y',
        'rsync -a x/ y/ && cat y/l',
        'ln sl l && cat l/.env',
        'link sl l && cat l/.env',
        'git checkout HEAD -- l; cat l',
        'git apply p.diff && cat l',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
      // The maker alone, and a line with no such maker, as before.
      expect(await env.check('tar xf a.tar'), mode).toMatchObject({ behavior: 'allow' });
      expect(await env.check('git status; cat sl/x'), mode).toMatchObject({ behavior: 'allow' });
      if (mode !== 'default') expect(await env.check('cp .gitignore d/ && cat d/.gitignore'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('tar xf of an archive holding a symlink to .env, then cat, does not print it', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(tar:*)'], deny: ['Read(/.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const stage = tmpDir('toolexec-link-makers-');
    fs.symlinkSync('.env', path.join(stage, 'l'));
    execFileSync('tar', ['cf', path.join(t.workspace, 'a.tar'), '-C', stage, 'l']);
    const r = await run(t, 'Bash', { command: 'tar xf a.tar && cat l' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
    expect(r.chain.some((s) => /unknown read target: l/.test(s.detail))).toBe(true);
  });

  it('git subcommands that only list leave the line\'s paths known', async () => {
    // `git stash list && cat README.md` asked (safety) under Bash(git:*) and in bypassPermissions:
    // stash, worktree, submodule and bisect were work-tree writers whatever their subcommand.
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(env.ws, 'README.md'), '# r\n');
      for (const c of ['git stash list && cat README.md', 'git worktree list --porcelain; cat README.md', 'git submodule status && cat README.md', 'git bisect log; cat README.md']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
      for (const c of ['git stash && cat l', 'git stash pop; cat l', 'git stash list x; cat l', 'git worktree add w && cat w/l', 'git submodule update && cat l', 'git checkout -b feat && cat l', 'git -c color.ui=never stash apply && cat l']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
    }
  });

  it('git clone puts links in the clone only, and cd into it reads nothing', async () => {
    // `git clone URL && cd y && npm test` asked (safety) under Bash(git:*) and in bypassPermissions: a
    // clone made every path of the line unknown, the cd's own directory included.
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(npm test)'], deny: ['Read(/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(env.ws, 'README.md'), '# r\n');
      for (const c of [
        'git clone https://example.com/o/y.git && cd y && npm test',
        'git clone --depth 1 https://example.com/o/y.git z; cat README.md',
        'git clone git@example.com:o/y.git/ && cat README.md',
        'tar xf a.tar -C out && cd out',
      ]) {
        // The rest of the line (npm test, tar, cd with git) may be the user's call, but no safety question.
        const r = await env.check(c);
        expect(r, `${mode}: ${c}`).not.toMatchObject({ type: 'safety' });
      }
      for (const c of [
        'git clone https://example.com/o/y.git && cat y/l',
        'git clone https://example.com/o/y.git z && cd z && cat l',
        'git clone https://example.com/o/y.git && cd y/l && cat x',
        'git clone https://example.com/o/y.git && grep -R SECRET y',
        'git clone https://example.com/o/y.git . && cat l',
        'git clone -c core.worktree=.. https://example.com/o/y.git && cat l',
        'git clone --config=core.worktree=.. https://example.com/o/y.git && cat l',
        'git -C sub clone https://example.com/o/y.git && cat l',
        'git clone --bare https://example.com/o/y.git && cat l',
        'git clone https://example.com && cat l',
        'git clone --unknown-option https://example.com/o/y.git && cat l',
      ]) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^unknown read target/) });
      }
    }
  });

  it('a clone holding a symlink to .env, then cd into it and cat, does not print it', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(/.env)'] } });
    const ws = t.workspace;
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
    const origin = tmpDir('toolexec-link-makers-origin-');
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: origin });
    git('init', '-q');
    fs.symlinkSync('../.env', path.join(origin, 'l'));
    git('add', 'l');
    git('commit', '-q', '-m', 'l');
    const r = await run(t, 'Bash', { command: `git clone -q ${origin} y && cd y && cat l` });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });

  it('a tree read at or above where an archive is extracted goes through its links', async () => {
    // `tar xf a.tar -C out && grep -R SECRET out` was allowed: only paths strictly below out were
    // unknown, while grep -R reads out itself and follows the link the archive put in it.
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(tar:*)', 'Bash(grep:*)', 'Bash(unzip:*)'], deny: ['Read(/.env)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.mkdirSync(path.join(env.ws, 'out', 'sub'), { recursive: true });
      for (const c of ['tar xf a.tar -C out && grep -R SECRET out', 'unzip a.zip -d out && grep -r SECRET out', 'tar xf a.tar -C out/sub; grep -R SECRET out', 'grep -R SECRET out & tar xf a.tar -C out/sub']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'unknown read target: out' });
      }
      // With no operand, grep -R and rg -L read the working directory's tree (out/l -> /etc/shadow, a rule no name below it meets).
      const far = ruleEnv({ allow: ['Bash(tar:*)', 'Bash(grep:*)', 'Bash(rg:*)'], deny: ['Read(//etc/shadow)'], mode });
      fs.mkdirSync(path.join(far.ws, 'out'));
      for (const c of ['tar xf a.tar -C out && cd out && grep -R SECRET', 'tar xf a.tar -C out; rg -L SECRET']) {
        expect(await far.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: 'unknown read target: .' });
      }
      // Listing the directory reads no file through the links, nor does find; a tree elsewhere is as before.
      expect(await env.check('tar xf a.tar -C out && ls out'), mode).toMatchObject({ behavior: 'allow' });
      expect(await env.check('tar xf a.tar -C out; grep -R SECRET src'), mode).toMatchObject({ behavior: 'allow' });
      fs.mkdirSync(path.join(env.ws, 'src'));
      expect(await env.check('tar xf a.tar -C out && grep -R SECRET src'), mode).toMatchObject({ behavior: 'allow' });
    }
  });

  it('tar xf -C out of an archive holding a symlink to .env, then grep -R out, does not print it', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(tar:*)', 'Bash(grep:*)'], deny: ['Read(/.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    fs.mkdirSync(path.join(t.workspace, 'out'));
    const stage = tmpDir('toolexec-link-makers-');
    fs.symlinkSync('../.env', path.join(stage, 'l'));
    execFileSync('tar', ['cf', path.join(t.workspace, 'a.tar'), '-C', stage, 'l']);
    const r = await run(t, 'Bash', { command: 'tar xf a.tar -C out && grep -R SECRET out' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
    expect(r.chain.some((s) => /unknown read target: out/.test(s.detail))).toBe(true);
  });

  it('git checkout of a tracked symlink to .env, then cat, does not print it under Bash(git:*)', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)'], deny: ['Read(/.env)'] } });
    const ws = t.workspace;
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: ws });
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=hunter2\n');
    git('init', '-q');
    fs.symlinkSync('.env', path.join(ws, 'l'));
    git('add', 'l');
    git('commit', '-q', '-m', 'l');
    fs.unlinkSync(path.join(ws, 'l'));
    const r = await run(t, 'Bash', { command: 'git checkout -- l; cat l' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });
});
