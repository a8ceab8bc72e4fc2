/**
 * A denied file given a second name and then replaced under its denied one
 * has a single name again: the hard-link check looked only at files with
 * several names, so with Read(./.env) denied under Bash(tar:*), extracting
 * an archive whose member `N` is a hard link to `.env` and whose next member
 * is a regular `.env` (GNU tar links N to the secret, then unlinks .env and
 * writes the new one) left the secret under N alone, and 'cat N' printed it.
 * The denied files are now met by identity before an extractor runs, and a
 * file that was one is judged as it, whatever its link count. Real tar, a
 * real archive.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { execute, makeApp, textOf, use } from './helpers.js';
import { bashTests, ruleEnv } from './helpers-bash.js';
import { linkThenReplace } from './helpers-tar.js';

bashTests();

describe('a denied file replaced under its denied name after gaining another', () => {
  for (const mode of ['default', 'acceptEdits'] as const) {
    it(`is still denied under its new name alone (${mode})`, async () => {
      const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], mode });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(env.ws, 'a.tar'), linkThenReplace());
      expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
      execFileSync('tar', ['-xf', 'a.tar'], { cwd: env.ws });
      // The secret now has one name, N; .env is another file.
      expect(fs.readFileSync(path.join(env.ws, 'N'), 'utf8')).toBe('SECRET=hunter2\n');
      expect(fs.statSync(path.join(env.ws, 'N')).nlink).toBe(1);
      expect(await env.check('cat N')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
      expect(await env.check('grep -n SECRET N')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
      // The new .env is denied by name, and a file never denied is read as before.
      expect(await env.check('cat .env')).toMatchObject({ behavior: 'deny' });
      fs.writeFileSync(path.join(env.ws, 'other'), 'x\n');
      expect(await env.check('cat other')).toMatchObject({ behavior: 'allow' });
    });
  }

  it('is found in a tree read that holds it (grep -r), where no denied file has several names any more', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(tar:*)', 'Bash(grep:*)'], mode: 'default' });
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    fs.mkdirSync(path.join(env.ws, 'd'));
    fs.writeFileSync(path.join(env.ws, 'd', 'a.txt'), 'hello\n');
    fs.writeFileSync(path.join(env.ws, 'a.tar'), linkThenReplace('d/N'));
    expect(await env.check('grep -rn SECRET d')).toMatchObject({ behavior: 'allow' });
    expect(await env.check('tar -xf a.tar')).toMatchObject({ behavior: 'allow' });
    execFileSync('tar', ['-xf', 'a.tar'], { cwd: env.ws });
    expect(execFileSync('grep', ['-rn', 'SECRET', 'd'], { cwd: env.ws, encoding: 'utf8' })).toContain('hunter2');
    expect(await env.check('grep -rn SECRET d')).toMatchObject({ behavior: 'ask', type: 'safety' });
  });

  it('through the service: each call a separate POST, as a model makes them', async () => {
    const t = await makeApp({ permissions: { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' } });
    try {
      fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(t.workspace, 'a.tar'), linkThenReplace());
      const run = async (command: string) => (await execute(t.app, { session_id: 'm', tool_uses: [use('Bash', { command })] })).body;
      const x = await run('tar -xf a.tar');
      expect(x.executions[0]!.status).toBe('succeeded');
      expect(fs.readFileSync(path.join(t.workspace, 'N'), 'utf8')).toBe('SECRET=hunter2\n');
      const cat = await run('cat N');
      expect(cat.executions[0]!.decision).toMatchObject({ behavior: 'deny' });
      expect(textOf(cat.tool_results[0]!.content)).not.toContain('hunter2');
      const read = await execute(t.app, { session_id: 'm', tool_uses: [use('Read', { file_path: path.join(t.workspace, 'N') })] });
      expect(read.body.executions[0]!.decision).toMatchObject({ behavior: 'deny' });
      expect(textOf(read.body.tool_results[0]!.content)).not.toContain('hunter2');
      const grep = await execute(t.app, { session_id: 'm', tool_uses: [use('Grep', { pattern: 'SECRET', output_mode: 'content' })] });
      expect(textOf(grep.body.tool_results[0]!.content)).not.toContain('hunter2');
    } finally {
      await t.close();
    }
  });

  it('through the service, when a rule added after the extraction makes the session a new rule index', async () => {
    const t = await makeApp({ permissions: { deny: ['Read(./.env)'], allow: ['Bash(tar:*)'], headless: 'deny' } });
    try {
      fs.writeFileSync(path.join(t.workspace, '.env'), 'SECRET=hunter2\n');
      fs.writeFileSync(path.join(t.workspace, 'a.tar'), linkThenReplace());
      const run = async (command: string) => (await execute(t.app, { session_id: 'r', tool_uses: [use('Bash', { command })] })).body;
      expect((await run('tar -xf a.tar')).executions[0]!.status).toBe('succeeded');
      // An approval's "always" (here added directly): every index is made anew, and its walk never met N as .env.
      const rule = await t.app.inject({ method: 'POST', url: '/permissions/rules', payload: { behavior: 'allow', rule: 'Bash(make:*)', scope: 'always' } });
      expect(rule.statusCode).toBeLessThan(300);
      const cat = await run('cat N');
      expect(cat.executions[0]!.decision).toMatchObject({ behavior: 'deny' });
      expect(textOf(cat.tool_results[0]!.content)).not.toContain('hunter2');
    } finally {
      await t.close();
    }
  });

  it('is met before a container client copies a tar stream in (docker cp), the link and replacement made here by hand', async () => {
    const env = ruleEnv({ deny: ['Read(./.env)'], allow: ['Bash(docker:*)'], mode: 'default' });
    fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=hunter2\n');
    expect(await env.check('docker cp c:/out/. .')).toMatchObject({ behavior: 'allow' });
    // What docker's untar does with a member N linked to .env, then a member .env.
    fs.linkSync(path.join(env.ws, '.env'), path.join(env.ws, 'N'));
    fs.unlinkSync(path.join(env.ws, '.env'));
    fs.writeFileSync(path.join(env.ws, '.env'), 'PLAIN=1\n');
    expect(await env.check('cat N')).toMatchObject({ behavior: 'deny', type: 'rule', detail: 'Read(./.env)' });
  });
});
