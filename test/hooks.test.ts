/**
 * Steps 4 and 7 with real command hooks (shell scripts as child processes):
 * ordering, blocking, input rewriting re-checked by parse, validate and
 * permission, non-blocking errors, JSON output, timeouts, PostToolUse.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildTool } from '../src/tool/build-tool.js';
import { cleanupTmp, execute, isAlive, makeApp, probeTool, textOf, tmpDir, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

function script(dir: string, name: string, body: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return p;
}

/** A tool that appends "call" to a log file, and denies itself for value "forbidden". */
function loggingTool(logFile: string) {
  return buildTool({
    name: 'Logged',
    description: 'Appends to a log',
    inputSchema: z.strictObject({ value: z.string().max(20) }),
    maxResultSizeChars: 100_000,
    validateInput: async (input) => (input.value === 'invalid' ? { ok: false, message: 'value "invalid" refused by validateInput', code: 1 } : { ok: true }),
    checkPermissions: async (input) =>
      input.value === 'forbidden'
        ? { behavior: 'deny', message: 'forbidden value', type: 'tool', detail: 'value is forbidden' }
        : { behavior: 'passthrough' },
    call: async (input) => {
      fs.appendFileSync(logFile, `call:${input.value}\n`);
      if (input.value === 'boom') throw new Error('the tool blew up');
      return { data: `ran with ${input.value}` };
    },
  });
}

describe('PreToolUse and PostToolUse ordering', () => {
  it('runs pre hooks, then the call, then post hooks, each seeing Claude Code’s stdin fields', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const pre = script(dir, 'pre.sh', `cat > ${dir}/pre-stdin.json; echo pre >> ${log}`);
    const post = script(dir, 'post.sh', `cat > ${dir}/post-stdin.json; echo post >> ${log}`);
    t = await makeApp(
      {
        permissions: { allow: ['Logged'] },
        hooks: {
          PreToolUse: [{ matcher: 'Logged', hooks: [{ type: 'command', command: pre }] }],
          PostToolUse: [{ matcher: 'Log.*', hooks: [{ type: 'command', command: post }] }],
        },
      },
      { extraTools: [loggingTool(log)] },
    );
    const r = await execute(t.app, { session_id: 'sess-1', tool_uses: [use('Logged', { value: 'a' }, 'tu1')] });
    expect(r.body.executions[0]!.status).toBe('succeeded');
    expect(fs.readFileSync(log, 'utf8')).toBe('pre\ncall:a\npost\n');
    const preIn = JSON.parse(fs.readFileSync(path.join(dir, 'pre-stdin.json'), 'utf8'));
    expect(preIn).toMatchObject({
      session_id: 'sess-1',
      hook_event_name: 'PreToolUse',
      tool_name: 'Logged',
      tool_input: { value: 'a' },
      tool_use_id: 'tu1',
      permission_mode: 'default',
      cwd: t.workspace,
    });
    expect(typeof preIn.transcript_path).toBe('string');
    const postIn = JSON.parse(fs.readFileSync(path.join(dir, 'post-stdin.json'), 'utf8'));
    expect(postIn).toMatchObject({ hook_event_name: 'PostToolUse', tool_response: 'ran with a', tool_input: { value: 'a' } });
  });

  it('exit 2 blocks the call with stderr as the reason, audited as a hook decision', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const pre = script(dir, 'block.sh', 'echo "rm is not allowed here" >&2; exit 2');
    t = await makeApp(
      { permissions: { allow: ['Logged'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre }] }] } },
      { extraTools: [loggingTool(log)] },
    );
    const r = await execute(t.app, { tool_uses: [use('Logged', { value: 'a' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'denied', error_class: 'permission', decision: { behavior: 'deny', reason: { type: 'hook' } } });
    expect(textOf(r.body.tool_results[0]!.content)).toContain('rm is not allowed here');
    expect(textOf(r.body.tool_results[0]!.content)).toContain('PreToolUse:Logged hook error');
    expect(fs.existsSync(log)).toBe(false);
    const audit = t.app.toolexec.audit.query({ limit: 5 });
    expect(audit[0]).toMatchObject({ behavior: 'deny', reason_type: 'hook', reason_detail: pre });
  });

  it('a non-blocking error (exit 1) is recorded and the call goes on', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const pre = script(dir, 'warn.sh', 'echo "lint unavailable" >&2; exit 1');
    t = await makeApp(
      { permissions: { allow: ['Logged'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre }] }] } },
      { extraTools: [loggingTool(log)] },
    );
    const r = await execute(t.app, { tool_uses: [use('Logged', { value: 'a' })] });
    expect(r.body.executions[0]!.status).toBe('succeeded');
    const row = t.app.toolexec.executions.get(r.body.executions[0]!.id)!;
    const msgs = JSON.parse(row.hook_messages!);
    expect(msgs[0]).toMatchObject({ event: 'PreToolUse', kind: 'non_blocking_error', exitCode: 1 });
    expect(msgs[0].text).toContain('lint unavailable');
  });

  it('a hook that hangs is killed at its timeout with its whole process group, and the call goes on', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const pidFile = path.join(dir, 'grandchild.pid');
    const pre = script(dir, 'hang.sh', `sleep 300 & echo $! > ${pidFile}; wait`);
    t = await makeApp(
      { permissions: { allow: ['Logged'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre, timeout: 1 }] }] } },
      { extraTools: [loggingTool(log)] },
    );
    const r = await execute(t.app, { tool_uses: [use('Logged', { value: 'a' })] });
    expect(r.body.executions[0]!.status).toBe('succeeded');
    const row = t.app.toolexec.executions.get(r.body.executions[0]!.id)!;
    expect(JSON.parse(row.hook_messages!)[0].text).toContain('timed out');
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    let alive = isAlive(pid);
    for (let i = 0; i < 100 && alive; i++) {
      await new Promise((res) => setTimeout(res, 50));
      alive = isAlive(pid);
    }
    expect(alive).toBe(false);
  });
});

describe('updatedInput', () => {
  it('rewrites the input the tool receives', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const pre = script(
      dir,
      'rewrite.sh',
      `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"value":"rewritten"}}}'`,
    );
    t = await makeApp(
      { permissions: { allow: ['Logged'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre }] }] } },
      { extraTools: [loggingTool(log)] },
    );
    const r = await execute(t.app, { tool_uses: [use('Logged', { value: 'orig' })] });
    expect(r.body.tool_results[0]!.content).toBe('ran with rewritten');
    expect(fs.readFileSync(log, 'utf8')).toBe('call:rewritten\n');
    // The execution keeps the digest of what the agent sent; the audit row names the input judged and run.
    const sha = (x: unknown) => createHash('sha256').update(JSON.stringify(x)).digest('hex');
    const exec = (await t.app.inject({ method: 'GET', url: `/executions/${r.body.executions[0]!.id}` })).json().execution as { input_digest: string };
    expect(exec.input_digest).toBe(sha({ value: 'orig' }));
    const audit = (await t.app.inject({ method: 'GET', url: '/audit' })).json().entries as Array<{ input_digest: string }>;
    expect(audit.at(-1)!.input_digest).toBe(sha({ value: 'rewritten' }));
  });

  it('parses, validates and judges the updated input again', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const make = (value: unknown) =>
      script(dir, `rw-${String(value).length}-${Math.random().toString(36).slice(2)}.sh`, `cat >/dev/null; echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { value } } })}'`);
    for (const [value, status, cls] of [
      [12345, 'failed', 'validation'],
      ['invalid', 'failed', 'validation'],
      ['forbidden', 'denied', 'permission'],
    ] as const) {
      const hook = make(value);
      t = await makeApp(
        { permissions: { allow: ['Logged'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: hook }] }] } },
        { extraTools: [loggingTool(log)] },
      );
      const r = await execute(t.app, { tool_uses: [use('Logged', { value: 'fine' })] });
      expect(r.body.executions[0]).toMatchObject({ status, error_class: cls });
      await t.close();
      t = undefined;
    }
    expect(fs.existsSync(log)).toBe(false);
  });
});

describe('hook decisions against rules', () => {
  const allowHook = (dir: string) =>
    script(dir, 'allow.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"looks fine"}}'`);

  it('a hook’s allow runs a call nobody else allowed (skips the prompt)', async () => {
    const dir = tmpDir();
    t = await makeApp({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: allowHook(dir) }] }] } }, { extraTools: [probeTool({})] });
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'x' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'succeeded', decision: { behavior: 'allow', reason: { type: 'hook' } } });
  });

  it('a hook’s allow never beats a deny rule', async () => {
    const dir = tmpDir();
    t = await makeApp(
      { permissions: { deny: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: allowHook(dir) }] }] } },
      { extraTools: [probeTool({})] },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'x' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'rule', detail: 'Probe' } } });
  });

  it('a hook’s allow never beats an ask rule: the call still asks (and headless denies)', async () => {
    const dir = tmpDir();
    t = await makeApp(
      { permissions: { ask: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: allowHook(dir) }] }] } },
      { extraTools: [probeTool({})] },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'x' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'headless' } } });
    const row = t.app.toolexec.executions.get(r.body.executions[0]!.id)!;
    const chain = JSON.parse(row.decision!).chain as Array<{ layer: string; outcome: string; detail: string }>;
    expect(chain).toContainEqual({ layer: 'rules', outcome: 'ask', detail: 'Probe' });
  });

  it('deny > ask > allow across hooks', async () => {
    const dir = tmpDir();
    const ask = script(dir, 'ask.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'`);
    const deny = script(dir, 'deny.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no way"}}'`);
    t = await makeApp(
      { permissions: { allow: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: allowHook(dir) }, { type: 'command', command: ask }, { type: 'command', command: deny }] }] } },
      { extraTools: [probeTool({})] },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'x' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'denied', decision: { reason: { type: 'hook', detail: deny } } });
    expect(textOf(r.body.tool_results[0]!.content)).toBe('no way');
  });
});

describe('PostToolUse', () => {
  it('exit 2 sends stderr to the model beside the result; additionalContext is appended', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const block = script(dir, 'post-block.sh', 'cat >/dev/null; echo "formatting failed" >&2; exit 2');
    const ctx = script(dir, 'post-ctx.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember to run the tests"}}'`);
    t = await makeApp(
      { permissions: { allow: ['Logged'] }, hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: block }, { type: 'command', command: ctx }] }] } },
      { extraTools: [loggingTool(log)] },
    );
    const r = await execute(t.app, { tool_uses: [use('Logged', { value: 'a' })] });
    const text = textOf(r.body.tool_results[0]!.content);
    expect(r.body.executions[0]!.status).toBe('succeeded');
    expect(text.startsWith('ran with a')).toBe(true);
    expect(text).toContain('PostToolUse:Logged hook blocking error from command: ');
    expect(text).toContain('formatting failed');
    expect(text).toContain('remember to run the tests');
    expect(fs.readFileSync(log, 'utf8')).toBe('call:a\n');
  });

  it('PostToolUseFailure hooks receive the error of a failed call', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const fail = script(dir, 'fail.sh', `cat > ${dir}/fail-stdin.json`);
    t = await makeApp(
      { permissions: { allow: ['Logged'] }, hooks: { PostToolUseFailure: [{ hooks: [{ type: 'command', command: fail }] }] } },
      { extraTools: [loggingTool(log)] },
    );
    const r = await execute(t.app, { tool_uses: [use('Logged', { value: 'boom' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'tool_error' });
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'fail-stdin.json'), 'utf8'))).toMatchObject({
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Logged',
      error: 'the tool blew up',
      is_interrupt: false,
    });
  });

  it('a Bash command that exits non-zero runs PostToolUseFailure, not PostToolUse (Claude Code throws a ShellError there); a success gives Claude Code’s stdout and stderr', async () => {
    const dir = tmpDir();
    const post = script(dir, 'post.sh', `cat >> ${dir}/post.jsonl; echo >> ${dir}/post.jsonl`);
    const fail = script(dir, 'fail.sh', `cat >> ${dir}/fail.jsonl; echo >> ${dir}/fail.jsonl`);
    t = await makeApp({
      permissions: { allow: ['Bash'] },
      hooks: { PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: post }] }], PostToolUseFailure: [{ matcher: 'Bash', hooks: [{ type: 'command', command: fail }] }] },
    });
    const lines = (f: string) => (fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f), 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
    const bad = await execute(t.app, { tool_uses: [use('Bash', { command: 'echo partial; echo oops >&2; exit 3' })] });
    expect(bad.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'tool_error' });
    expect(lines('post.jsonl')).toHaveLength(0);
    expect(lines('fail.jsonl')).toEqual([expect.objectContaining({ hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', error: 'Exit code 3\noops\npartial', is_interrupt: false })]);
    const good = await execute(t.app, { tool_uses: [use('Bash', { command: 'echo out; echo err >&2' })] });
    expect(good.body.executions[0]!.status).toBe('succeeded');
    expect(lines('fail.jsonl')).toHaveLength(1);
    expect(lines('post.jsonl')).toEqual([
      expect.objectContaining({ hook_event_name: 'PostToolUse', tool_response: expect.objectContaining({ stdout: 'out', stderr: 'err', interrupted: false, isImage: false }) }),
    ]);
  });

  it('a PostToolUse script written for Claude Code reads Read\u2019s file.content and file.filePath, and Grep\u2019s filenames', async () => {
    const dir = tmpDir();
    const out = path.join(dir, 'seen.txt');
    // What such scripts do: jq -r '.tool_response.file.content' and the like.
    const reader = `let s='';process.stdin.on('data',(c)=>s+=c).on('end',()=>{const r=JSON.parse(s).tool_response;` +
      `require('fs').appendFileSync(${JSON.stringify(out)}, JSON.stringify(r.file ? [r.file.filePath, r.file.content] : r.filenames) + '\\n');});`;
    const hook = script(dir, 'post.sh', `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(reader)}`);
    t = await makeApp({ permissions: { allow: ['Read', 'Grep'] }, hooks: { PostToolUse: [{ matcher: 'Read|Grep', hooks: [{ type: 'command', command: hook }] }] } });
    const f = path.join(t.workspace, 'notes.txt');
    fs.writeFileSync(f, 'first\nsecond\n');
    const read = await execute(t.app, { tool_uses: [use('Read', { file_path: f })] });
    expect(textOf(read.body.tool_results[0]!.content)).toBe('     1\tfirst\n     2\tsecond');
    await execute(t.app, { tool_uses: [use('Grep', { pattern: 'second' })] });
    expect(fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l))).toEqual([[f, 'first\nsecond'], ['notes.txt']]);
  });

  it('an empty Read reaches PostToolUse as Claude Code\u2019s {type: "text", file} (a script keyed on type sees a text read), and the model gets the warning', async () => {
    const dir = tmpDir();
    const out = path.join(dir, 'seen.jsonl');
    const reader = `let s='';process.stdin.on('data',(c)=>s+=c).on('end',()=>{const r=JSON.parse(s).tool_response;` +
      `require('fs').appendFileSync(${JSON.stringify(out)}, JSON.stringify({type: r.type, file: r.file}) + '\\n');});`;
    const hook = script(dir, 'post.sh', `exec ${JSON.stringify(process.execPath)} -e ${JSON.stringify(reader)}`);
    t = await makeApp({ permissions: { allow: ['Read'] }, hooks: { PostToolUse: [{ matcher: 'Read', hooks: [{ type: 'command', command: hook }] }] } });
    const empty = path.join(t.workspace, 'empty.txt');
    fs.writeFileSync(empty, '');
    const short = path.join(t.workspace, 'short.txt');
    fs.writeFileSync(short, 'a\nb\n');
    const r = await execute(t.app, { tool_uses: [use('Read', { file_path: empty }), use('Read', { file_path: short, offset: 5 })] });
    expect(r.body.tool_results.map((b) => textOf(b.content))).toEqual([
      '<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>',
      '<system-reminder>Warning: the file exists but is shorter than the provided offset (5). The file has 2 lines.</system-reminder>',
    ]);
    const seen = fs.readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(seen).toEqual(expect.arrayContaining([
      { type: 'text', file: { filePath: empty, content: '', numLines: 0, startLine: 1, totalLines: 0 } },
      { type: 'text', file: { filePath: short, content: '', numLines: 0, startLine: 5, totalLines: 2 } },
    ]));
    expect(seen).toHaveLength(2);
  });

  it('a PreToolUse additionalContext reaches the model also when the call is denied or fails', async () => {
    const dir = tmpDir();
    const ctx = script(dir, 'ctx.sh', `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"USE pnpm NOT npm"}}'`);
    t = await makeApp({ permissions: { allow: ['Bash'], deny: ['Bash(npm:*)'] }, hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: ctx }] }] } });
    const run = async (command: string) => {
      const r = await execute(t!.app, { tool_uses: [use('Bash', { command })] });
      return { status: r.body.executions[0]!.status, text: textOf(r.body.tool_results[0]!.content) };
    };
    const denied = await run('npm install');
    expect(denied.status).toBe('denied');
    expect(denied.text).toContain('USE pnpm NOT npm');
    const failed = await run('exit 4');
    expect(failed.status).toBe('failed');
    expect(failed.text).toMatch(/^Exit code 4[\s\S]*USE pnpm NOT npm\n<\/system-reminder>$/);
    const ok = await run('echo fine');
    expect(ok.text).toBe('fine\n\n<system-reminder>\nPreToolUse:Bash hook additional context: USE pnpm NOT npm\n</system-reminder>');
  });
});
