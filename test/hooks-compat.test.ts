/**
 * Hooks written for Claude Code run unchanged: one built with cc-hooks-ts
 * (an independent hook library from npm), scripts in the style of Claude
 * Code's hooks documentation (a Python Bash validator that exits 2, JSON
 * decisions, a formatter, PermissionRequest hooks), and the protocol's
 * corners: continue:false, systemMessage, legacy decisions, matcher forms,
 * `if`, de-duplication, parallel runs, output caps, garbage, crashes, the
 * environment, per-hook timeouts; and http hooks against a real local
 * server. Every call goes through POST /execute with the real Bash, Read and Write
 * tools where one fits.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { HooksConfig } from '../src/config/schema.js';
import { cleanupTmp, makeApp, probeTool, tmpDir, type TestApp } from './helpers.js';
import { fixture, json, lastAudit, localServer, pre, printing, run, script, type LocalServer } from './helpers-hooks.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

describe('a hook built with cc-hooks-ts (run with plain node)', () => {
  const command = `node ${fixture('cc-hooks-ts-bash-guard.mjs')}`;

  it('denies `rm -rf` with its JSON reason; nothing is removed', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] }, hooks: pre(command, 'Bash') });
    fs.mkdirSync(path.join(t.workspace, 'build'));
    fs.writeFileSync(path.join(t.workspace, 'build', 'keep'), 'x');
    for (const cmd of ['rm -rf build', 'rm -fr build', 'rm -r -f build']) {
      const r = await run(t, 'Bash', { command: cmd });
      expect(r.exec).toMatchObject({ status: 'denied', error_class: 'permission', decision: { behavior: 'deny', reason: { type: 'hook', detail: command } } });
      expect(r.text).toBe(`cc-hooks-ts guard: recursive forced removal is not allowed (${cmd})`);
    }
    expect(fs.existsSync(path.join(t.workspace, 'build', 'keep'))).toBe(true);
    expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'hook', reason_detail: command });
  });

  it('blocks `sudo` through its blockingError (exit 2, reason on stderr)', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] }, hooks: pre(command, 'Bash') });
    const r = await run(t, 'Bash', { command: 'sudo id' });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'hook' } } });
    expect(r.text).toBe(`PreToolUse:Bash hook error: [${command}]: cc-hooks-ts guard: sudo is not available to agents`);
    expect(r.messages).toMatchObject([{ event: 'PreToolUse', kind: 'blocking_error', exitCode: 2 }]);
  });

  it('rewrites `echo` (updatedInput) and allows it; the rewritten command is what runs', async () => {
    t = await makeApp({ hooks: pre(command, 'Bash') });
    const r = await run(t, 'Bash', { command: 'echo hi' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'hook', detail: command } } });
    expect(r.text.trim()).toBe('hi [checked by cc-hooks-ts]');
  });

  it('says nothing about other commands: the library accepted toolexec’s stdin (no non-blocking error)', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(touch:*)'] }, hooks: pre(command, 'Bash') });
    const r = await run(t, 'Bash', { command: 'touch made' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'Bash(touch:*)' } } });
    expect(r.messages).toEqual([]);
    expect(fs.existsSync(path.join(t.workspace, 'made'))).toBe(true);
  });
});

describe('scripts in the style of Claude Code’s hooks documentation', () => {
  it('bash_command_validator (Python, exit 2, reasons on stderr) blocks grep and find -name, lets rg run', async () => {
    const command = `python3 ${fixture('bash_command_validator.py')}`;
    t = await makeApp({ hooks: pre(command, 'Bash') });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'needle\n');
    const g = await run(t, 'Bash', { command: 'grep -r needle .' });
    expect(g.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'hook', detail: command } } });
    expect(g.text).toBe(`PreToolUse:Bash hook error: [${command}]: • Use 'rg' (ripgrep) instead of 'grep' for better performance and features`);
    const f = await run(t, 'Bash', { command: "find . -name '*.txt'" });
    expect(f.exec.status).toBe('denied');
    expect(f.text).toContain("instead of 'find -name'");
    const ok = await run(t, 'Bash', { command: 'rg needle a.txt' });
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'tool', detail: 'Read-only command is allowed' } } });
    expect(ok.text.trim()).toBe('needle');
    // The docs' regex spares grep in a pipeline.
    expect((await run(t, 'Bash', { command: 'cat a.txt | grep needle' })).exec.status).toBe('succeeded');
  });

  describe('a hook printing hookSpecificOutput JSON (pretooluse_policy.py, matcher Read|Bash)', () => {
    const command = `python3 ${fixture('pretooluse_policy.py')}`;
    const start = async () => {
      t = await makeApp({ permissions: { allow: ['Bash(npm --version)'] }, hooks: pre(command, 'Read|Bash') });
      fs.writeFileSync(path.join(t.workspace, 'README.md'), '# docs\n');
      fs.writeFileSync(path.join(t.workspace, '.env'), 'TOKEN=secret\n');
      fs.writeFileSync(path.join(t.workspace, '.hidden'), '');
      return t;
    };

    it('allow with a reason (audited as the hook), deny with the reason the model sees', async () => {
      const app = await start();
      const md = await run(app, 'Read', { file_path: path.join(app.workspace, 'README.md') });
      expect(md.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'hook', detail: command } } });
      expect(md.text).toContain('# docs');
      const env = await run(app, 'Read', { file_path: path.join(app.workspace, '.env') });
      expect(env.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'hook', detail: command } } });
      expect(env.text).toBe(`Reading ${path.join(app.workspace, '.env')} is not allowed: it holds secrets`);
      expect(env.text).not.toContain('TOKEN=secret');
    });

    it('ask forces the prompt (no approver: denied headless, the chain shows the hook)', async () => {
      const app = await start();
      const r = await run(app, 'Bash', { command: 'git push origin main' });
      expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'headless' } } });
      expect(r.chain).toContainEqual({ layer: 'hooks', outcome: 'ask', detail: command });
    });

    it('updatedInput replaces the command; additionalContext is appended to the result', async () => {
      const app = await start();
      const ls = await run(app, 'Bash', { command: 'ls' });
      expect(ls.exec.status).toBe('succeeded');
      expect(ls.text).toContain('.hidden');
      const npm = await run(app, 'Bash', { command: 'npm --version' });
      expect(npm.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule' } } });
      expect(npm.text).toMatch(/^\d+\.\d+\.\d+/);
      expect(npm.text).toContain('This project uses npm workspaces; run tests from the root.');
    });
  });

  it('a PostToolUse formatter (Python, no jq) reads tool_input.file_path and rewrites the file after Write', async () => {
    const command = `python3 ${fixture('format_on_write.py')}`;
    t = await makeApp({ permissions: { allow: ['Write', 'Read'] }, hooks: { PostToolUse: [{ matcher: 'Edit|Write', hooks: [{ type: 'command', command }] }] } });
    const file = path.join(t.workspace, 'notes.txt');
    const w = await run(t, 'Write', { file_path: file, content: 'one   \ntwo\t\n\n\n' });
    expect(w.exec.status).toBe('succeeded');
    expect(fs.readFileSync(file, 'utf8')).toBe('one\ntwo\n');
    expect(w.text).toContain('formatted notes.txt');
    // Read does not match `Edit|Write`: the formatter does not run.
    fs.writeFileSync(file, 'three   \n');
    expect((await run(t, 'Read', { file_path: file })).messages).toEqual([]);
    expect(fs.readFileSync(file, 'utf8')).toBe('three   \n');
  });

  it('PermissionRequest hooks: behavior allow runs an ask-call unasked, deny carries its message, silence asks a person', async () => {
    const command = `python3 ${fixture('permission_request.py')}`;
    t = await makeApp({ hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command }] }] } });
    fs.writeFileSync(path.join(t.workspace, 'package.json'), JSON.stringify({ name: 'w', version: '1.0.0', scripts: { test: 'echo tests-ran' } }));
    const ok = await run(t, 'Bash', { command: 'npm test' });
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'hook', detail: command } } });
    expect(ok.text).toContain('tests-ran');
    expect(ok.chain).toContainEqual({ layer: 'hooks', outcome: 'allow', detail: `PermissionRequest: ${command}` });
    const no = await run(t, 'Bash', { command: 'curl http://127.0.0.1:9/' });
    expect(no.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'hook', detail: command } } });
    expect(no.text).toBe('No network from this agent: curl is denied by policy');
    const quiet = await run(t, 'Bash', { command: 'touch x' });
    expect(quiet.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(fs.existsSync(path.join(t.workspace, 'x'))).toBe(false);
    expect(t.app.toolexec.audit.query({ limit: 3 }).map((a) => a.reason_type)).toEqual(['headless', 'hook', 'hook']);
  });

  it('PermissionRequest updatedPermissions: addRules becomes a session rule, setMode the session’s mode (a settings-file destination is applied to the session only, said in the chain and the log); stdin carries the suggested rule as permission_suggestions', async () => {
    const dir = tmpDir();
    const stdin = path.join(dir, 'stdin.json');
    const out = path.join(dir, 'out.json');
    fs.writeFileSync(
      out,
      JSON.stringify({
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: {
            behavior: 'allow',
            updatedPermissions: [
              { type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch:*' }], behavior: 'allow', destination: 'localSettings' },
              { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
              { type: 'setMode', mode: 'bypassPermissions', destination: 'session' },
              { type: 'addDirectories', directories: ['/elsewhere'], destination: 'session' },
              { type: 'addRules', rules: [{ toolName: 'Bash' }], behavior: 'allow', destination: 'policySettings' },
            ],
          },
        },
      }),
    );
    // Answers once per session, as a hook that approves and remembers would be needed only once.
    const hook = script(dir, 'pr.sh', `cat > ${stdin}; cat ${out}`);
    const logged: string[] = [];
    const logStream = new Writable({
      write(chunk: Buffer | string, _enc, cb) {
        logged.push(String(chunk));
        cb();
      },
    });
    t = await makeApp({ hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook, once: true }] }] } }, { logger: undefined, logStream });
    const first = await run(t, 'Bash', { command: 'touch a' });
    expect(first.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'hook' } } });
    expect(first.chain).toContainEqual({ layer: 'hooks', outcome: 'allow', detail: 'PermissionRequest updatedPermissions: session allow rule Bash(touch:*) (destination localSettings: applied to this session only, no settings file written)' });
    const warned = logged.flatMap((l) => l.split('\n')).filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => Array.isArray(l.not_written));
    expect(warned).toEqual([expect.objectContaining({ session_id: 's', hook, not_written: [{ destination: 'localSettings', update: 'allow Bash(touch:*)' }] })]);
    expect(first.chain).toContainEqual({ layer: 'hooks', outcome: 'allow', detail: 'PermissionRequest updatedPermissions: session mode acceptEdits' });
    const ignored = first.messages.filter((m) => m.kind === 'non_blocking_error').map((m) => m.text);
    expect(ignored).toHaveLength(3);
    expect(ignored.join('\n')).toMatch(/bypassPermissions is not allowed/);
    expect(ignored.join('\n')).toMatch(/"addDirectories" is not supported/);
    expect(ignored.join('\n')).toMatch(/destination "policySettings" cannot be written/);
    const sent = JSON.parse(fs.readFileSync(stdin, 'utf8'));
    expect(sent.permission_suggestions).toEqual([{ type: 'addRules', rules: [{ toolName: 'Bash', ruleContent: 'touch a' }], behavior: 'allow', destination: 'localSettings' }]);
    // The hook does not run again (once); the session rule allows the next touch.
    const second = await run(t, 'Bash', { command: 'touch b' });
    expect(second.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'Bash(touch:*)' } } });
    expect(fs.existsSync(path.join(t.workspace, 'b'))).toBe(true);
    const rules = (await t.app.inject({ method: 'GET', url: '/permissions/rules?session_id=s' })).json();
    expect(rules.rules).toContainEqual(expect.objectContaining({ rule: 'Bash(touch:*)', behavior: 'allow', source: 'session' }));
    expect(t.app.toolexec.sessions.find('s')?.mode).toBe('acceptEdits');
    // Only that session: in another, the call asks again (and the hook, once per session, answers it there).
    expect((await run(t, 'Bash', { command: 'touch c' }, 'other')).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'hook' } } });
  });

  it('a PermissionRequest hook is not asked about calls that do not ask', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const hook = script(dir, 'pr.sh', `cat >/dev/null; echo ran >> ${log}`);
    t = await makeApp({ permissions: { allow: ['Bash(touch:*)'] }, hooks: { PermissionRequest: [{ hooks: [{ type: 'command', command: hook }] }] } });
    expect((await run(t, 'Bash', { command: 'touch y' })).exec.status).toBe('succeeded');
    expect(fs.existsSync(log)).toBe(false);
  });
});

describe('the JSON protocol’s other fields', () => {
  it('continue:false stops the call with its stopReason (PreToolUse) and is reported beside the result (PostToolUse)', async () => {
    const dir = tmpDir();
    const calls: unknown[] = [];
    const stop = printing(dir, 'stop', { continue: false, stopReason: 'the build is red' });
    t = await makeApp({ hooks: pre(stop) }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'hook', detail: 'continue:false' } } });
    expect(r.text).toBe('Execution stopped by PreToolUse hook: the build is red');
    expect(r.messages).toContainEqual(expect.objectContaining({ kind: 'stopped', text: 'the build is red' }));
    expect(calls).toEqual([]);
    await t.close();
    t = await makeApp({ hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: stop }] }] } }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    const post = await run(t, 'Probe', { value: 'y' });
    expect(post.exec.status).toBe('succeeded');
    expect(post.text).toBe('value=y\n\n<system-reminder>\nPostToolUse:Probe hook stopped continuation: the build is red\n</system-reminder>');
  });

  it('systemMessage is recorded for the user and changes nothing else', async () => {
    const dir = tmpDir();
    t = await makeApp({ hooks: pre(printing(dir, 'sys', { systemMessage: 'Deploy freeze until Monday' })) }, { extraTools: [probeTool({ permission: 'allow' })] });
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'tool' } } });
    expect(r.text).toBe('value=x');
    expect(r.messages).toMatchObject([{ event: 'PreToolUse', kind: 'system_message', text: 'Deploy freeze until Monday' }]);
  });

  it('legacy top-level decision: approve allows, block denies with its reason (PreToolUse) or reports it (PostToolUse)', async () => {
    const dir = tmpDir();
    const approve = printing(dir, 'approve', { decision: 'approve', reason: 'legacy ok' });
    const block = printing(dir, 'block', { decision: 'block', reason: 'legacy no' });
    t = await makeApp({ hooks: pre(approve) }, { extraTools: [probeTool({})] });
    expect((await run(t, 'Probe', { value: 'x' })).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'hook', detail: approve } } });
    await t.close();
    t = await makeApp({ hooks: pre(block) }, { extraTools: [probeTool({ permission: 'allow' })] });
    const b = await run(t, 'Probe', { value: 'x' });
    expect(b.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'hook', detail: block } } });
    expect(b.text).toBe('legacy no');
    await t.close();
    t = await makeApp({ hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: block }] }] } }, { extraTools: [probeTool({ permission: 'allow' })] });
    expect((await run(t, 'Probe', { value: 'x' })).text).toBe(`value=x\n\n<system-reminder>\nPostToolUse:Probe hook blocking error from command: "${block}": legacy no\n</system-reminder>`);
  });

  it('`{"decision":"allow"}` is not valid hook output: a non-blocking error, and the call is judged without it (pitfall 16)', async () => {
    const dir = tmpDir();
    t = await makeApp({ hooks: pre(printing(dir, 'bad', { decision: 'allow' })) }, { extraTools: [probeTool({})] });
    const r = await run(t, 'Probe', { value: 'x' });
    // Nothing allowed it: the call asks, and headless denies.
    expect(r.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(r.messages).toMatchObject([{ kind: 'non_blocking_error' }]);
    expect(r.messages[0]!.text).toContain('Hook JSON output is not valid: decision');
  });

  it('hookSpecificOutput for another event is ignored with a message', async () => {
    const dir = tmpDir();
    const wrong = printing(dir, 'wrong', { hookSpecificOutput: { hookEventName: 'PostToolUse', permissionDecision: 'deny' } });
    t = await makeApp({ hooks: pre(wrong) }, { extraTools: [probeTool({ permission: 'allow' })] });
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec.status).toBe('succeeded');
    expect(r.messages[0]!.text).toContain('hookEventName is "PostToolUse", expected "PreToolUse"');
  });

  it('JSON on a non-zero exit is not honoured (the documented rule, not 2.1.x code’s): exit 1 with an allow stays a non-blocking error', async () => {
    const dir = tmpDir();
    const allowButFail = printing(dir, 'allow1', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } }, 1);
    t = await makeApp({ hooks: pre(allowButFail) }, { extraTools: [probeTool({})] });
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(r.messages).toMatchObject([{ kind: 'non_blocking_error', exitCode: 1 }]);
  });
});

describe('matchers, `if`, de-duplication', () => {
  it('matcher forms: exact, a|b list, regex, *, empty, absent; case-sensitive; an invalid regex matches nothing', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const hook = (label: string) => script(dir, `${label}.sh`, `cat >/dev/null; echo "${label}" >> ${log}`);
    const groups: Array<[string | undefined, string]> = [
      ['Bash', 'exact'],
      ['Edit|Write', 'list'],
      ['mcp__.*', 'regex'],
      ['*', 'star'],
      ['', 'empty'],
      [undefined, 'absent'],
      ['bash', 'lowercase'],
      ['Notebook.*', 'notebook'],
      ['(', 'invalid'],
    ];
    const tools = ['Bash', 'Edit', 'Write', 'mcp__srv__do', 'Editor'].map((name) => probeTool({ name, permission: 'allow' }));
    t = await makeApp(
      { hooks: { PreToolUse: groups.map(([matcher, label]) => ({ ...(matcher === undefined ? {} : { matcher }), hooks: [{ type: 'command' as const, command: hook(label) }] })) } },
      { builtins: tools },
    );
    const ran = async (tool: string) => {
      fs.rmSync(log, { force: true });
      expect((await run(t!, tool, { value: 'v' })).exec.status).toBe('succeeded');
      return fs.readFileSync(log, 'utf8').trim().split('\n').sort();
    };
    const all = ['absent', 'empty', 'star'];
    expect(await ran('Bash')).toEqual([...all, 'exact'].sort());
    expect(await ran('Edit')).toEqual([...all, 'list'].sort());
    expect(await ran('Write')).toEqual([...all, 'list'].sort());
    expect(await ran('mcp__srv__do')).toEqual([...all, 'regex'].sort());
    // `Edit|Write` is an exact list: Editor is not Edit.
    expect(await ran('Editor')).toEqual(all);
  });

  it('`if` (permission-rule syntax) runs a Bash hook only when some subcommand matches', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const hook = script(dir, 'git.sh', `cat >/dev/null; echo git-hook >> ${log}`);
    t = await makeApp({ permissions: { allow: ['Bash'] }, hooks: pre(hook, 'Bash', { if: 'Bash(git *)' }) });
    const count = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0);
    await run(t, 'Bash', { command: 'git --version' });
    expect(count()).toBe(1);
    await run(t, 'Bash', { command: 'ls' });
    expect(count()).toBe(1);
    await run(t, 'Bash', { command: 'ls && git --version' });
    expect(count()).toBe(2);
    await run(t, 'Bash', { command: 'echo git' });
    expect(count()).toBe(2);
  });

  it('matchers written with a retired tool name (KillShell, BashOutputTool, Task) still match the renamed tool, exact, in a list or as a regex, as Claude Code\u2019s matchesPattern does', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const hook = (label: string) => script(dir, `${label}.sh`, `cat >/dev/null; echo "${label}" >> ${log}`);
    const groups: Array<[string, string]> = [
      ['KillShell', 'exact'],
      ['Read|BashOutputTool', 'list'],
      ['^Task$', 'regex'],
      ['^TaskStop$', 'current'],
    ];
    const tools = ['TaskStop', 'TaskOutput', 'Agent', 'Read'].map((name) => probeTool({ name, permission: 'allow' }));
    t = await makeApp(
      { hooks: { PreToolUse: groups.map(([matcher, label]) => ({ matcher, hooks: [{ type: 'command' as const, command: hook(label) }] })) } },
      { builtins: tools },
    );
    const ran = async (tool: string) => {
      fs.rmSync(log, { force: true });
      expect((await run(t!, tool, { value: 'v' })).exec.status).toBe('succeeded');
      return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').sort() : [];
    };
    expect(await ran('TaskStop')).toEqual(['current', 'exact']);
    expect(await ran('TaskOutput')).toEqual(['list']);
    expect(await ran('Agent')).toEqual(['regex']);
    expect(await ran('Read')).toEqual(['list']);
  });

  it('`if` narrows by content for every tool, as that tool\'s permission rules match: paths, domains, MCP servers', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const hook = (label: string, cond: string) => ({ type: 'command' as const, command: script(dir, `${label}.sh`, `cat >/dev/null; echo "${label}" >> ${log}`), if: cond });
    t = await makeApp(
      {
        permissions: { allow: ['Read', 'Edit', 'Write'] },
        hooks: {
          PreToolUse: [
            {
              hooks: [
                hook('env', 'Read(./.env)'),
                hook('anyread', 'Read'),
                hook('ts', 'Edit(*.ts)'),
                hook('src', 'Write(src/**)'),
                hook('web', 'WebFetch(domain:example.com)'),
                hook('srv', 'mcp__srv'),
                hook('srvcontent', 'mcp__srv__do(x)'),
              ],
            },
          ],
        },
      },
      { extraTools: [probeTool({ name: 'mcp__srv__do', permission: 'allow' }), probeTool({ name: 'mcp__other__do', permission: 'allow' })] },
    );
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, 'sub'));
    for (const f of ['.env', 'a.txt', 'sub/b.ts', 'c.txt']) fs.writeFileSync(path.join(ws, f), 'x\n');
    const ran = async (name: string, input: Record<string, unknown>): Promise<string[]> => {
      fs.rmSync(log, { force: true });
      await run(t!, name, input);
      return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').sort() : [];
    };
    expect(await ran('Read', { file_path: path.join(ws, 'a.txt') })).toEqual(['anyread']);
    expect(await ran('Read', { file_path: path.join(ws, '.env') })).toEqual(['anyread', 'env']);
    for (const f of ['c.txt', 'sub/b.ts']) await run(t, 'Read', { file_path: path.join(ws, f) });
    // A bare `*.ts` matches at any depth below the working directory.
    expect(await ran('Edit', { file_path: path.join(ws, 'sub/b.ts'), old_string: 'x', new_string: 'y' })).toEqual(['ts']);
    expect(await ran('Edit', { file_path: path.join(ws, 'c.txt'), old_string: 'x', new_string: 'y' })).toEqual([]);
    expect(await ran('Write', { file_path: path.join(ws, 'src/new.txt'), content: 'n' })).toEqual(['src']);
    expect(await ran('Write', { file_path: path.join(ws, 'other/new.txt'), content: 'n' })).toEqual([]);
    // PreToolUse runs before the permission decision: no allow rule, so nothing is fetched.
    expect(await ran('WebFetch', { url: 'https://example.com/x', prompt: 'p' })).toEqual(['web']);
    expect(await ran('WebFetch', { url: 'https://example.org/x', prompt: 'p' })).toEqual([]);
    expect(await ran('mcp__srv__do', { value: 'v' })).toEqual(['srv']);
    expect(await ran('mcp__other__do', { value: 'v' })).toEqual([]);
  });

  it('`if` names one tool, as in Claude Code (prepareIfConditionMatcher compares the rule\u2019s tool with tool_name): Edit(…) does not run for Write, Read(…) not for Grep or Glob', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const hook = (label: string, cond: string) => ({ type: 'command' as const, command: script(dir, `${label}.sh`, `cat >/dev/null; echo "${label}" >> ${log}`), if: cond });
    t = await makeApp({
      permissions: { allow: ['Read', 'Edit', 'Write', 'Grep', 'Glob'] },
      hooks: {
        PreToolUse: [
          { matcher: 'Edit|Write|NotebookEdit', hooks: [hook('edit', 'Edit(src/**)'), hook('write', 'Write(src/**)')] },
          { matcher: 'Read|Grep|Glob', hooks: [hook('read', 'Read(src/**)')] },
        ],
      },
    });
    const ws = t.workspace;
    fs.mkdirSync(path.join(ws, 'src'));
    fs.writeFileSync(path.join(ws, 'src', 'a.ts'), 'x\n');
    const ran = async (name: string, input: Record<string, unknown>): Promise<string[]> => {
      fs.rmSync(log, { force: true });
      await run(t!, name, input);
      return fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').sort() : [];
    };
    expect(await ran('Read', { file_path: path.join(ws, 'src', 'a.ts') })).toEqual(['read']);
    expect(await ran('Grep', { pattern: 'x', path: path.join(ws, 'src') })).toEqual([]);
    expect(await ran('Glob', { pattern: '*.ts', path: path.join(ws, 'src') })).toEqual([]);
    expect(await ran('Edit', { file_path: path.join(ws, 'src', 'a.ts'), old_string: 'x', new_string: 'y' })).toEqual(['edit']);
    expect(await ran('Write', { file_path: path.join(ws, 'src', 'x.ts'), content: 'n' })).toEqual(['write']);
  });

  it('identical hooks run once (across groups); the same command with another `if` is another hook', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const command = `cat >/dev/null; echo once >> ${log}`;
    t = await makeApp({
      permissions: { allow: ['Bash'] },
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command }] },
          { matcher: '*', hooks: [{ type: 'command', command }, { type: 'command', command }] },
          { hooks: [{ type: 'command', command, if: 'Bash(ls)' }] },
        ],
      },
    });
    await run(t, 'Bash', { command: 'pwd' });
    expect(fs.readFileSync(log, 'utf8')).toBe('once\n');
    await run(t, 'Bash', { command: 'ls' });
    expect(fs.readFileSync(log, 'utf8')).toBe('once\nonce\nonce\n');
  });
});

describe('running hooks', () => {
  it('matching hooks run in parallel: two hooks that sleep 1 s overlap', async () => {
    const dir = tmpDir();
    const hook = (name: string) =>
      script(dir, `${name}.sh`, `cat >/dev/null; echo "start $(date +%s%N)" > ${dir}/${name}.ts; sleep 1; echo "end $(date +%s%N)" >> ${dir}/${name}.ts`);
    t = await makeApp(
      { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: hook('a') }, { type: 'command', command: hook('b') }] }] } },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    expect((await run(t, 'Probe', { value: 'x' })).exec.status).toBe('succeeded');
    const times = (name: string) => {
      const [s, e] = fs.readFileSync(path.join(dir, `${name}.ts`), 'utf8').trim().split('\n').map((l) => BigInt(l.split(' ')[1]!));
      return { start: s!, end: e! };
    };
    const a = times('a');
    const b = times('b');
    // Each started before the other ended.
    expect(a.start < b.end && b.start < a.end).toBe(true);
  });

  it('each hook has its own timeout: the slow one is killed and reported, the fast one’s decision holds', async () => {
    const dir = tmpDir();
    const slow = script(dir, 'slow.sh', 'cat >/dev/null; sleep 30');
    const deny = printing(dir, 'deny', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'fast no' } });
    t = await makeApp(
      { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: slow, timeout: 1 }, { type: 'command', command: deny, timeout: 60 }] }] } },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'hook', detail: deny } } });
    expect(r.text).toBe('fast no');
    const timedOut = r.messages.find((m) => m.hook === slow)!;
    expect(timedOut).toMatchObject({ kind: 'non_blocking_error' });
    expect(timedOut.text).toContain('timed out');
  });

  it('a hook printing 10 MB is capped: JSON cut by the cap is rejected with a clear message, plain text is ignored', async () => {
    const dir = tmpDir();
    const bigJson = script(dir, 'big-json.sh', `cat >/dev/null; python3 -c "import sys; sys.stdout.write('{\\"systemMessage\\": \\"' + 'x' * 10_000_000 + '\\"}')"`);
    const bigText = script(dir, 'big-text.sh', 'cat >/dev/null; head -c 10000000 /dev/zero | tr "\\0" "y"');
    t = await makeApp(
      { hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: bigJson }, { type: 'command', command: bigText }] }] } },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec.status).toBe('succeeded');
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]).toMatchObject({ hook: bigJson, kind: 'non_blocking_error' });
    expect(r.messages[0]!.text).toContain('exceeded');
    // What is kept of a hook is bounded: the execution record stays small.
    const row = t.app.toolexec.executions.get(r.exec.id)!;
    expect(row.hook_messages!.length).toBeLessThan(4096);
  });

  it('garbage on stdout: broken JSON is a non-blocking error; binary noise and JSON arrays are plain output', async () => {
    const dir = tmpDir();
    const broken = script(dir, 'broken.sh', `cat >/dev/null; printf '{"hookSpecificOutput": {"permissionDecision": "deny"'`);
    const noise = script(dir, 'noise.sh', `cat >/dev/null; printf '\\000\\377\\376garbage\\033[31m'`);
    const array = script(dir, 'array.sh', `cat >/dev/null; printf '[{"decision":"block"}]'`);
    const wrongType = printing(dir, 'wrong-type', { continue: 'yes' });
    t = await makeApp(
      { hooks: { PreToolUse: [{ hooks: [broken, noise, array, wrongType].map((command) => ({ type: 'command' as const, command })) }] } },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'tool' } } });
    const byHook = Object.fromEntries(r.messages.map((m) => [m.hook, m.text]));
    expect(Object.keys(byHook).sort()).toEqual([broken, wrongType].sort());
    expect(byHook[broken]).toContain('does not parse');
    expect(byHook[wrongType]).toContain('continue');
  });

  it('a crashing hook (killed by a signal, a thrown error, a missing command) is a non-blocking error', async () => {
    const dir = tmpDir();
    // The hook's own shell kills itself: no exit code, only a signal.
    const killed = 'cat >/dev/null; kill -9 $$';
    const thrower = path.join(dir, 'throw.mjs');
    fs.writeFileSync(thrower, "throw new Error('hook exploded');\n");
    const commands = [killed, `node ${thrower}`, path.join(dir, 'does-not-exist.sh')];
    t = await makeApp(
      { hooks: { PreToolUse: [{ hooks: commands.map((command) => ({ type: 'command' as const, command })) }] } },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec.status).toBe('succeeded');
    expect(r.messages.map((m) => m.kind)).toEqual(['non_blocking_error', 'non_blocking_error', 'non_blocking_error']);
    const byHook = Object.fromEntries(r.messages.map((m) => [m.hook, m]));
    expect(byHook[killed]!.exitCode).toBe(137); // 128 + SIGKILL, as a shell reports it
    expect(byHook[`node ${thrower}`]!.text).toContain('hook exploded');
    expect(byHook[commands[2]!]!.exitCode).toBe(127);
  });

  it('hooks get CLAUDE_PROJECT_DIR (the docs’ "$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh works), the session cwd, and no service secrets', async () => {
    const token = 'agent-secret-token-0123456789';
    t = await makeApp(
      {
        server: { tokens: [{ name: 'agent', token, scopes: ['execute', 'read'] }] },
        hooks: pre('"$CLAUDE_PROJECT_DIR"/.claude/hooks/env.sh'),
      },
      { extraTools: [probeTool({ permission: 'allow' })], env: { ...process.env, TOOLEXEC_TOKEN: 'env-secret-token-0123456789' } },
    );
    const hooksDir = path.join(t.workspace, '.claude', 'hooks');
    fs.mkdirSync(hooksDir, { recursive: true });
    const out = path.join(path.dirname(t.workspace), 'env.txt');
    script(hooksDir, 'env.sh', `cat >/dev/null; { echo "project=$CLAUDE_PROJECT_DIR"; echo "cwd=$(pwd)"; env; } > ${out}`);
    const res = await t.app.inject({
      method: 'POST',
      url: '/execute',
      headers: { authorization: `Bearer ${token}` },
      payload: { session_id: 's', tool_uses: [{ type: 'tool_use', id: 'e1', name: 'Probe', input: { value: 'x' } }] },
    });
    expect(res.json().executions[0].status).toBe('succeeded');
    const env = fs.readFileSync(out, 'utf8');
    expect(env).toContain(`project=${t.workspace}\n`);
    expect(env).toContain(`cwd=${t.workspace}\n`);
    expect(env).not.toContain(token);
    expect(env).not.toContain('env-secret-token-0123456789');
    expect(env).not.toMatch(/^TOOLEXEC_/m);
  });
});

describe('updatedInput is parsed, validated and judged again', () => {
  it('a harmless Bash command rewritten into `rm -rf` under a Bash(rm:*) deny rule is denied, even with the hook’s allow', async () => {
    const dir = tmpDir();
    const victim = path.join(dir, 'x');
    fs.mkdirSync(victim);
    fs.writeFileSync(path.join(victim, 'keep'), 'x');
    const rewrite = printing(dir, 'rewrite', {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: `rm -rf ${victim}` } },
    });
    t = await makeApp({ permissions: { allow: ['Bash(echo:*)'], deny: ['Bash(rm:*)'] }, hooks: pre(rewrite, 'Bash') });
    const r = await run(t, 'Bash', { command: 'echo harmless' });
    expect(r.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm:*)' } } });
    expect(fs.existsSync(path.join(victim, 'keep'))).toBe(true);
    expect(lastAudit(t)).toMatchObject({ behavior: 'deny', reason_type: 'rule', reason_detail: 'Bash(rm:*)' });
  });

  it('an updatedInput that no longer fits the schema fails validation; nothing runs', async () => {
    const dir = tmpDir();
    const rewrite = printing(dir, 'rewrite', { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 42 } } });
    t = await makeApp({ permissions: { allow: ['Bash'] }, hooks: pre(rewrite, 'Bash') });
    const r = await run(t, 'Bash', { command: 'touch nope' });
    expect(r.exec).toMatchObject({ status: 'failed', error_class: 'validation' });
    expect(r.text).toContain('command');
    expect(fs.existsSync(path.join(t.workspace, 'nope'))).toBe(false);
  });
});

describe('http hooks (a real server on 127.0.0.1)', () => {
  let server: LocalServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const answers: Record<string, (res: import('node:http').ServerResponse) => void> = {
    '/allow': (res) => json(res, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', additionalContext: 'checked over http' } }),
    '/deny': (res) => json(res, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'the policy server says no' } }),
    '/rewrite': (res) => json(res, { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { value: 'from-http' } } }),
    '/500': (res) => json(res, { error: 'boom' }, 500),
    '/empty': (res) => res.end(),
    '/text': (res) => res.end('thanks'),
    '/slow': (res) => setTimeout(() => json(res, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny' } }), 5000),
  };
  const start = async () => {
    server = await localServer((req, res) => (answers[req.url] ?? ((r) => json(r, {}, 404)))(res));
    return server;
  };
  const httpHook = (url: string, extra: Record<string, unknown> = {}): HooksConfig => ({ PreToolUse: [{ hooks: [{ type: 'http', url, ...extra }] }] });

  it('POSTs the hook JSON and honours hookSpecificOutput: allow with additionalContext, deny with its reason, updatedInput', async () => {
    const s = await start();
    const calls: unknown[] = [];
    t = await makeApp({ hooks: httpHook(`${s.url}/allow`) }, { extraTools: [probeTool({ calls })] });
    const ok = await run(t, 'Probe', { value: 'x' }, 'http-s');
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'hook', detail: `${s.url}/allow` } } });
    expect(ok.text).toBe('value=x\n\n<system-reminder>\nPreToolUse:Probe hook additional context: checked over http\n</system-reminder>');
    expect(s.requests[0]).toMatchObject({ method: 'POST', url: '/allow' });
    expect(s.requests[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(s.requests[0]!.body)).toMatchObject({
      session_id: 'http-s',
      hook_event_name: 'PreToolUse',
      tool_name: 'Probe',
      tool_input: { value: 'x' },
      cwd: t.workspace,
      permission_mode: 'default',
    });
    await t.close();
    t = await makeApp({ hooks: httpHook(`${s.url}/deny`) }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    const no = await run(t, 'Probe', { value: 'y' });
    expect(no.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'hook', detail: `${s.url}/deny` } } });
    expect(no.text).toBe('the policy server says no');
    await t.close();
    t = await makeApp({ hooks: httpHook(`${s.url}/rewrite`) }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    expect((await run(t, 'Probe', { value: 'z' })).text).toBe('value=from-http');
    expect(calls).toEqual([{ value: 'x' }, { value: 'from-http' }]);
  });

  it('non-2xx, a refused connection, a timeout and a plain-text 2xx are non-blocking errors (people see them, the model does not); an empty 2xx is success', async () => {
    const s = await start();
    const closed = await localServer((_r, res) => void res.end());
    const deadUrl = `${closed.url}/gone`;
    await closed.close();
    t = await makeApp(
      {
        hooks: {
          PreToolUse: [
            {
              hooks: [
                { type: 'http', url: `${s.url}/500` },
                { type: 'http', url: deadUrl },
                { type: 'http', url: `${s.url}/slow`, timeout: 1 },
                { type: 'http', url: `${s.url}/empty` },
                { type: 'http', url: `${s.url}/text` },
              ],
            },
          ],
        },
      },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    const r = await run(t, 'Probe', { value: 'x' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'tool' } } });
    const byHook = Object.fromEntries(r.messages.map((m) => [m.hook, m]));
    expect(r.text).toBe('value=x');
    expect(Object.keys(byHook).sort()).toEqual([`${s.url}/500`, `${s.url}/slow`, `${s.url}/text`, deadUrl].sort());
    expect(byHook[`${s.url}/500`]).toMatchObject({ kind: 'non_blocking_error', exitCode: 1 });
    expect(byHook[`${s.url}/500`]!.text).toContain('HTTP 500');
    expect(byHook[deadUrl]!.text).toContain('Hook failed to run');
    expect(byHook[`${s.url}/slow`]!.text).toContain('timed out');
    // Claude Code's parseHttpHookOutput: an http hook must answer JSON.
    expect(byHook[`${s.url}/text`]).toMatchObject({
      kind: 'non_blocking_error',
      text: 'JSON validation failed: HTTP hook must return JSON, but got non-JSON response body: thanks',
    });
  });

  it('a plain-text 2xx longer than 200 characters is quoted cut, as Claude Code quotes it', async () => {
    const s = await localServer((_r, res) => void res.end(`${'a'.repeat(200)}TAIL`));
    try {
      t = await makeApp({ hooks: httpHook(`${s.url}/long`) }, { extraTools: [probeTool({ permission: 'allow' })] });
      const r = await run(t, 'Probe', { value: 'x' });
      expect(r.exec.status).toBe('succeeded');
      expect(r.messages).toEqual([
        expect.objectContaining({ kind: 'non_blocking_error', text: `JSON validation failed: HTTP hook must return JSON, but got non-JSON response body: ${'a'.repeat(200)}\u2026` }),
      ]);
    } finally {
      await s.close();
    }
  });

  it('headers interpolate $VAR and ${VAR} only for allowedEnvVars; other variables become empty', async () => {
    const s = await start();
    t = await makeApp(
      {
        hooks: httpHook(`${s.url}/empty`, {
          headers: { authorization: 'Bearer $HOOK_TOKEN', 'x-team': 'team-${HOOK_TEAM}', 'x-leak': 'a-$SECRET_THING-b', 'x-braced-leak': '[${SECRET_THING}]' },
          allowedEnvVars: ['HOOK_TOKEN', 'HOOK_TEAM'],
        }),
      },
      { extraTools: [probeTool({ permission: 'allow' })], env: { PATH: process.env.PATH, HOOK_TOKEN: 'tok-123', HOOK_TEAM: 'blue', SECRET_THING: 's3cret-value' } },
    );
    expect((await run(t, 'Probe', { value: 'x' })).exec.status).toBe('succeeded');
    const h = s.requests[0]!.headers;
    expect(h.authorization).toBe('Bearer tok-123');
    expect(h['x-team']).toBe('team-blue');
    expect(h['x-leak']).toBe('a--b');
    expect(h['x-braced-leak']).toBe('[]');
    expect(JSON.stringify(s.requests[0])).not.toContain('s3cret-value');
  });
});
