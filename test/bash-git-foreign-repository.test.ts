/**
 * git obeys the configuration of the repository directory it is pointed at:
 * with a directory laid out as a repository inside the workspace (HEAD,
 * objects, refs and a config holding `core.fsmonitor`, all ordinary files the
 * Write tool writes in acceptEdits), `git --git-dir=src/p --work-tree=.
 * status` or `git -C src/p …` under Bash(git:*) ran the program without
 * asking; `git --git-dir=/elsewhere config …` and `git config --system …`
 * changed a configuration file that no protected path names. Each is now a
 * safety ask. Real rule indexes and the real service running git.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';
import { bashServiceTests, BYPASS, plantRepository as plant, ruleEnv } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('git pointed at a repository directory that is not a .git', () => {
  it('asks (safety) under Bash(git:*), in every mode', async () => {
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)'], mode });
      execFileSync('git', ['init', '-q', env.ws]);
      plant(env.ws);
      for (const c of ['git --git-dir=src/p --work-tree=. status', 'git --git-dir src/p status', 'git -C src/p log', 'git --git-dir=/tmp/elsewhere config alias.x y', 'git --git-dir=$D status']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of /) });
      }
      expect(await env.check('git config --system alias.x y'), mode).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^\/etc\/gitconfig/) });
      // The repository's own .git, as before.
      for (const c of ['git status', 'git --git-dir=.git status', 'git -C src status']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('asks (safety) for git pointed at a directory another command of the line fills', async () => {
    // The layout check looks before the line runs: `tar xf a.tar && git -C p …` found no p.
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(tar:*)', 'Bash(unzip:*)'], deny: ['Read(./.env)'], mode });
      for (const c of ['tar xf a.tar && git -C p --work-tree=.. status', 'unzip a.zip; git -C p fetch', 'git clone https://example.com/o/y.git && git -C y/sub fetch', 'git pull && git --git-dir=sub log']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of/) });
      }
      for (const c of ['tar xf a.tar && git status', 'git -C . status; tar xf a.tar', 'git pull && git log -1']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'allow' });
      }
    }
  });

  it('asks (safety) for git run where a cd leads into a planted repository, in bypassPermissions too', async () => {
    // `cd src/p && git fetch` was a tool ask (cd with git), which bypassPermissions lets through.
    for (const mode of ['default', 'acceptEdits', BYPASS.defaultMode] as const) {
      const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(tar:*)'], deny: ['Read(./.env)'], mode });
      plant(env.ws);
      for (const c of ['cd src/p && git fetch', 'cd src/p/refs; git log', 'tar xf a.tar && cd q && git fetch']) {
        expect(await env.check(c), `${mode}: ${c}`).toMatchObject({ behavior: 'ask', type: 'safety', detail: expect.stringMatching(/^git would obey the configuration of/) });
      }
      expect(await env.check('cd src && git status'), mode).not.toMatchObject({ type: 'safety' });
    }
  });

  it('cd into a planted repository and git fetch does not run its core.sshCommand in bypassPermissions', async () => {
    const t = await openApp({ permissions: { ...BYPASS, deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    plant(t.workspace);
    fs.writeFileSync(path.join(t.workspace, 'src', 'p', 'config'), '[core]\n\tsshCommand = cat ../../.env >&2; false #\n[remote "origin"]\n\turl = ssh://h/x\n');
    const r = await run(t, 'Bash', { command: 'cd src/p && git fetch origin' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });

  it('tar xf of a planted repository, then git -C into it, does not run its core.fsmonitor', async () => {
    const t = await openApp({ permissions: { allow: ['Bash(git:*)', 'Bash(tar:*)'], deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    const stage = tmpDir('toolexec-foreign-repo-');
    plant(stage);
    execFileSync('tar', ['cf', path.join(t.workspace, 'a.tar'), '-C', path.join(stage, 'src'), 'p']);
    const r = await run(t, 'Bash', { command: 'tar xf a.tar && git -C p --work-tree=.. status' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });

  it('git --git-dir=src/p --work-tree=. status does not run the planted core.fsmonitor in acceptEdits', async () => {
    const t = await openApp({ permissions: { defaultMode: 'acceptEdits', allow: ['Bash(git:*)'], deny: ['Read(./.env)'] } });
    fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
    plant(t.workspace);
    const r = await run(t, 'Bash', { command: 'git --git-dir=src/p --work-tree=. status' });
    expect(r.text).not.toContain('hunter2');
    expect(r.exec.status).toBe('denied');
  });
});
