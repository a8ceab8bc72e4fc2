/**
 * Fidelity with Claude Code, section by section of the reference notes
 * (/work/shared/reference/claude-code-semantics.md): what an existing
 * settings file, hook script or `.mcp.json` does there, it does here. Every
 * check goes through POST /execute with real hook scripts (child processes),
 * real settings files and real MCP servers from node_modules.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { cleanupTmp, execute, makeApp, probeTool, tmpDir, use, type TestApp } from './helpers.js';
import { pre, printing, run, script } from './helpers-hooks.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

/** A hook that saves its stdin in `<dir>/<name>.stdin` and prints `out`, exiting `code`. */
function recorder(dir: string, name: string, out: unknown = '', code = 0): { command: string; stdin: () => Record<string, unknown> } {
  const outFile = path.join(dir, `${name}.out`);
  fs.writeFileSync(outFile, typeof out === 'string' ? out : JSON.stringify(out));
  const stdinFile = path.join(dir, `${name}.stdin`);
  const command = script(dir, name, `cat > '${stdinFile}'; cat '${outFile}'; exit ${code}`);
  return { command, stdin: () => JSON.parse(fs.readFileSync(stdinFile, 'utf8')) as Record<string, unknown> };
}

describe('§6 Read/Edit rules: anchors as Claude Code resolves them', () => {
  it('Read(./.env) is unanchored, as a bare .env is: it denies sub/.env too (./ only names the cwd as the base)', async () => {
    t = await makeApp({ permissions: { deny: ['Read(./.env)'] } });
    fs.mkdirSync(path.join(t.workspace, 'pkg'));
    fs.writeFileSync(path.join(t.workspace, '.env'), 'TOP=1\n');
    fs.writeFileSync(path.join(t.workspace, 'pkg', '.env'), 'NESTED=1\n');
    const top = await run(t, 'Read', { file_path: path.join(t.workspace, '.env') });
    expect(top.exec.status).toBe('denied');
    const nested = await run(t, 'Read', { file_path: path.join(t.workspace, 'pkg', '.env') });
    expect(nested.exec.status).toBe('denied');
    expect(nested.text).not.toContain('NESTED=1');
    // Glob and Grep skip it, Bash may not print it.
    const glob = await run(t, 'Glob', { pattern: '**/.env' });
    expect(glob.text).not.toContain('.env');
    const grep = await run(t, 'Grep', { pattern: 'NESTED', output_mode: 'content' });
    expect(grep.text).not.toContain('NESTED=1');
    const cat = await run(t, 'Bash', { command: 'cat pkg/.env' });
    expect(cat.exec.status).toBe('denied');
  });

  it('./dir/file is anchored by its inner slash, as config/file is; Edit(./*.lock) covers lock files at any depth', async () => {
    t = await makeApp({ permissions: { deny: ['Read(./config/.env)', 'Edit(./*.lock)'], allow: ['Write', 'Read'] } });
    fs.mkdirSync(path.join(t.workspace, 'config'));
    fs.mkdirSync(path.join(t.workspace, 'pkg', 'config'), { recursive: true });
    fs.writeFileSync(path.join(t.workspace, 'config', '.env'), 'A=1\n');
    fs.writeFileSync(path.join(t.workspace, 'pkg', 'config', '.env'), 'B=1\n');
    expect((await run(t, 'Read', { file_path: path.join(t.workspace, 'config', '.env') })).exec.status).toBe('denied');
    expect((await run(t, 'Read', { file_path: path.join(t.workspace, 'pkg', 'config', '.env') })).exec.status).toBe('succeeded');
    const lock = await run(t, 'Write', { file_path: path.join(t.workspace, 'pkg', 'yarn.lock'), content: 'x' });
    expect(lock.text).toBe('<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>');
    expect(fs.existsSync(path.join(t.workspace, 'pkg', 'yarn.lock'))).toBe(false);
  });
});

describe('§5 hooks: stdin JSON', () => {
  it('PreToolUse gets the common fields and tool_name, tool_input, tool_use_id', async () => {
    const dir = tmpDir();
    const h = recorder(dir, 'pre');
    t = await makeApp({ hooks: pre(h.command, 'Probe') }, { extraTools: [probeTool({ permission: 'allow' })] });
    const r = await execute(t.app, { session_id: 'sess-1', tool_uses: [use('Probe', { value: 'a' }, 'toolu_x1')] });
    expect(r.body.executions[0]!.status).toBe('succeeded');
    const s = h.stdin();
    expect(s).toMatchObject({
      session_id: 'sess-1',
      cwd: t.workspace,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Probe',
      tool_input: { value: 'a' },
      tool_use_id: 'toolu_x1',
    });
    expect(typeof s.transcript_path).toBe('string');
  });

  it('PostToolUse adds tool_response; PostToolUseFailure adds error and is_interrupt', async () => {
    const dir = tmpDir();
    const post = recorder(dir, 'post');
    const fail = recorder(dir, 'fail');
    t = await makeApp({
      permissions: { allow: ['Bash'] },
      hooks: {
        PostToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: post.command }] }],
        PostToolUseFailure: [{ matcher: 'Bash', hooks: [{ type: 'command', command: fail.command }] }],
      },
    });
    await run(t, 'Bash', { command: 'echo hello' });
    expect(post.stdin()).toMatchObject({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'echo hello' }, tool_response: { stdout: expect.stringMatching(/^hello\n?$/) } });
    expect(typeof post.stdin().tool_use_id).toBe('string');
    await run(t, 'Bash', { command: 'exit 3' });
    expect(fail.stdin()).toMatchObject({ hook_event_name: 'PostToolUseFailure', tool_name: 'Bash', is_interrupt: false });
    expect(String(fail.stdin().error)).toContain('Exit code 3');
  });

  it('PermissionRequest: tool_name, tool_input, permission_suggestions, and no tool_use_id', async () => {
    const dir = tmpDir();
    const h = recorder(dir, 'pr');
    t = await makeApp({ hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: h.command }] }] } });
    await run(t, 'Bash', { command: 'touch x' });
    const s = h.stdin();
    expect(s).toMatchObject({ hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'touch x' } });
    expect(Array.isArray(s.permission_suggestions)).toBe(true);
    expect(s).not.toHaveProperty('tool_use_id');
  });

  it('CLAUDE_PROJECT_DIR is the project (workspace) root', async () => {
    const dir = tmpDir();
    const out = path.join(dir, 'pd');
    const cmd = script(dir, 'pd.sh', `cat >/dev/null; printf %s "$CLAUDE_PROJECT_DIR" > '${out}'`);
    t = await makeApp({ hooks: pre(cmd) }, { extraTools: [probeTool({ permission: 'allow' })] });
    await run(t, 'Probe', { value: 'a' });
    expect(fs.readFileSync(out, 'utf8')).toBe(t.workspace);
  });
});

describe('§5 hooks: exit codes', () => {
  it('exit 2 on PreToolUse denies with "PreToolUse:<Tool> hook error: [<cmd>]: <stderr>"; no stderr → "No stderr output"', async () => {
    const dir = tmpDir();
    const withErr = script(dir, 'e2.sh', 'cat >/dev/null; echo "not here" >&2; exit 2');
    const noErr = script(dir, 'e2q.sh', 'cat >/dev/null; exit 2');
    t = await makeApp({ hooks: pre(withErr, 'Probe') }, { extraTools: [probeTool({ permission: 'allow' })] });
    const a = await run(t, 'Probe', { value: 'a' });
    expect(a.exec.status).toBe('denied');
    expect(a.text).toBe(`PreToolUse:Probe hook error: [${withErr}]: not here`);
    await t.close();
    t = await makeApp({ hooks: pre(noErr, 'Probe') }, { extraTools: [probeTool({ permission: 'allow' })] });
    const b = await run(t, 'Probe', { value: 'a' });
    expect(b.text).toBe(`PreToolUse:Probe hook error: [${noErr}]: No stderr output`);
  });

  it('another exit code is non-blocking: the call goes on; JSON on a non-zero exit is not honoured (docs: exit 0 only)', async () => {
    const dir = tmpDir();
    const one = script(dir, 'e1.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}'; echo oops >&2; exit 1`);
    const calls: unknown[] = [];
    t = await makeApp({ hooks: pre(one, 'Probe') }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('succeeded');
    expect(calls).toHaveLength(1);
    expect(r.messages).toEqual([expect.objectContaining({ kind: 'non_blocking_error', exitCode: 1, text: 'Failed with non-blocking status code: oops' })]);
  });

  it('exit 2 on PostToolUse: the tool ran; the model sees the blocking error beside the result', async () => {
    const dir = tmpDir();
    const cmd = script(dir, 'p2.sh', 'cat >/dev/null; echo "lint failed" >&2; exit 2');
    const calls: unknown[] = [];
    t = await makeApp({ hooks: { PostToolUse: [{ matcher: 'Probe', hooks: [{ type: 'command', command: cmd }] }] } }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    const r = await run(t, 'Probe', { value: 'a' });
    expect(calls).toHaveLength(1);
    expect(r.text).toContain('value=a');
    expect(r.text).toContain(`[${cmd}]: lint failed`);
  });
});

describe('§5 hooks: JSON output fields', () => {
  const app = async (out: unknown, calls: unknown[] = [], config: Record<string, unknown> = {}) => {
    const dir = tmpDir();
    const cmd = printing(dir, 'j.sh', out);
    t = await makeApp({ hooks: pre(cmd, 'Probe'), ...config }, { extraTools: [probeTool({ calls })] });
    return cmd;
  };

  it('permissionDecision deny + permissionDecisionReason: the reason is what the model gets', async () => {
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no probes today' } });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toBe('no probes today');
  });

  it('permissionDecision deny without a reason: "Hook PreToolUse:<Tool> denied this tool"', async () => {
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny' } });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.text).toBe('Hook PreToolUse:Probe denied this tool');
  });

  it('permissionDecision allow runs a call no rule allows; a deny rule still wins; an ask rule still asks', async () => {
    const calls: unknown[] = [];
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'fine' } }, calls);
    expect((await run(t!, 'Probe', { value: 'a' })).exec.status).toBe('succeeded');
    await t!.close();
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } }, calls, { permissions: { deny: ['Probe'] } });
    expect((await run(t!, 'Probe', { value: 'a' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
    await t!.close();
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } }, calls, { permissions: { ask: ['Probe'] } });
    expect((await run(t!, 'Probe', { value: 'a' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(calls).toHaveLength(1);
  });

  it('permissionDecision ask forces the prompt over an allow rule', async () => {
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' } }, [], { permissions: { allow: ['Probe'] } });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(r.chain).toContainEqual(expect.objectContaining({ layer: 'hooks', outcome: 'ask' }));
  });

  it('updatedInput is a full replacement (fields left out are gone), with the hook allowing', async () => {
    const calls: unknown[] = [];
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { value: 'b' } } }, calls);
    const r = await run(t!, 'Probe', { value: 'a', count: 3 });
    expect(r.exec.status).toBe('succeeded');
    expect(calls).toEqual([{ value: 'b' }]);
  });

  it('updatedInput without a decision (passthrough) replaces the input and the normal permission flow judges it', async () => {
    const calls: unknown[] = [];
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { value: 'b' } } }, calls, { permissions: { allow: ['Probe'] } });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule' } } });
    expect(calls).toEqual([{ value: 'b' }]);
  });

  it('additionalContext reaches the model', async () => {
    await app({ hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'remember the style guide' } }, [], { permissions: { allow: ['Probe'] } });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.text).toContain('value=a');
    expect(r.text).toContain('remember the style guide');
  });

  it('legacy decision "block" with reason denies with the reason; "approve" allows', async () => {
    await app({ decision: 'block', reason: 'legacy says no' });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toContain('legacy says no');
    await t!.close();
    await app({ decision: 'approve', reason: 'legacy says yes' });
    expect((await run(t!, 'Probe', { value: 'a' })).exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'hook' } } });
  });

  it('continue:false with stopReason stops; systemMessage is recorded for people; suppressOutput is accepted silently', async () => {
    await app({ continue: false, stopReason: 'build is red', systemMessage: 'heads up', suppressOutput: true }, [], { permissions: { allow: ['Probe'] } });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toContain('build is red');
    expect(r.messages).toContainEqual(expect.objectContaining({ kind: 'system_message', text: 'heads up' }));
    expect(r.messages.filter((m) => m.kind === 'non_blocking_error')).toEqual([]);
  });

  it('a hookSpecificOutput for another event is not honoured', async () => {
    const calls: unknown[] = [];
    await app({ hookSpecificOutput: { hookEventName: 'PostToolUse', permissionDecision: 'deny' } }, calls, { permissions: { allow: ['Probe'] } });
    const r = await run(t!, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('succeeded');
    expect(calls).toHaveLength(1);
  });

  it('across hooks deny > ask > allow', async () => {
    const dir = tmpDir();
    const allow = printing(dir, 'a.sh', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } });
    const deny = printing(dir, 'd.sh', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'second says no' } });
    const ask = printing(dir, 'k.sh', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' } });
    t = await makeApp(
      { hooks: { PreToolUse: [{ matcher: 'Probe', hooks: [{ type: 'command', command: allow }, { type: 'command', command: ask }, { type: 'command', command: deny }] }] } },
      { extraTools: [probeTool({})] },
    );
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'hook' } });
    expect(r.text).toBe('second says no');
  });
});

describe('§5 hooks: matcher syntax', () => {
  const matched = async (matcher: string | undefined, toolName: string): Promise<boolean> => {
    const dir = tmpDir();
    const mark = path.join(dir, 'ran');
    const cmd = script(dir, 'm.sh', `cat >/dev/null; touch '${mark}'`);
    const app = await makeApp({ permissions: { allow: [toolName] }, hooks: pre(cmd, matcher) }, { extraTools: [probeTool({ name: toolName })] });
    try {
      const r = await run(app, toolName, { value: 'a' });
      expect(r.exec.status).toBe('succeeded');
      return fs.existsSync(mark);
    } finally {
      await app.close();
    }
  };

  it('empty and * match every tool; a plain name is exact (Prob does not match Probe); a|b is a list', async () => {
    expect(await matched(undefined, 'Probe')).toBe(true);
    expect(await matched('', 'Probe')).toBe(true);
    expect(await matched('*', 'Probe')).toBe(true);
    expect(await matched('Prob', 'Probe')).toBe(false);
    expect(await matched('Edit|Probe', 'Probe')).toBe(true);
  });

  it('anything else is an unanchored regex (P.ob matches Probe); an invalid regex matches nothing', async () => {
    expect(await matched('P.ob', 'Probe')).toBe(true);
    expect(await matched('(', 'Probe')).toBe(false);
  });

  it('mcp__server__tool is exact; mcp__server__.* is a regex over the server’s tools', async () => {
    expect(await matched('mcp__memory__create_entities', 'mcp__memory__create_entities')).toBe(true);
    expect(await matched('mcp__memory__create', 'mcp__memory__create_entities')).toBe(false);
    expect(await matched('mcp__memory__.*', 'mcp__memory__create_entities')).toBe(true);
    expect(await matched('mcp__memory__.*', 'mcp__github__create_issue')).toBe(false);
  });
});

describe('§6 rule syntax', () => {
  const decisionOf = async (app: TestApp, name: string, input: Record<string, unknown>) => (await run(app, name, input)).exec.decision!;

  it('Bash(npm run test:*): `npm run test` and `npm run test -- x` match; `npm run test:unit` does not (prefix on a word boundary)', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(npm run test:*)'] } });
    fs.writeFileSync(path.join(t.workspace, 'package.json'), JSON.stringify({ name: 'w', version: '1.0.0', scripts: { test: 'echo T', 'test:unit': 'echo U' } }));
    expect(await decisionOf(t, 'Bash', { command: 'npm run test' })).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash(npm run test:*)' } });
    expect(await decisionOf(t, 'Bash', { command: 'npm run test -- --grep x' })).toMatchObject({ behavior: 'allow' });
    expect(await decisionOf(t, 'Bash', { command: 'npm run test:unit' })).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
  });

  it('Bash(ls:*) does not cover lsof; Bash(git *) covers bare git; a deny rule strips every VAR= prefix', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(lsx:*)', 'Bash(gitx *)'], deny: ['Bash(rm -rf:*)'] } });
    expect(await decisionOf(t, 'Bash', { command: 'lsxof' })).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(await decisionOf(t, 'Bash', { command: 'gitx' })).toMatchObject({ behavior: 'allow', reason: { type: 'rule' } });
    expect(await decisionOf(t, 'Bash', { command: 'FOO=1 BAR=2 rm -rf build' })).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm -rf:*)' } });
  });

  it('Tool() and Tool(*) are the whole tool', async () => {
    const calls: unknown[] = [];
    t = await makeApp({ permissions: { allow: ['Probe(*)'], deny: ['Other()'] } }, { extraTools: [probeTool({ calls }), probeTool({ name: 'Other' })] });
    expect(await decisionOf(t, 'Probe', { value: 'a' })).toMatchObject({ behavior: 'allow', reason: { type: 'rule' } });
    expect(await decisionOf(t, 'Other', { value: 'a' })).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
  });

  it('Read(//abs/**) allows an absolute place outside the working directories; Read(~/…) is the home directory', async () => {
    const outside = tmpDir();
    fs.writeFileSync(path.join(outside, 'notes.txt'), 'outside\n');
    const home = tmpDir();
    fs.writeFileSync(path.join(home, 'secret.txt'), 'home secret\n');
    fs.mkdirSync(path.join(home, 'docs'));
    fs.writeFileSync(path.join(home, 'docs', 'a.md'), 'home doc\n');
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      t = await makeApp({ permissions: { allow: [`Read(/${outside}/**)`, 'Read(~/docs/**)'], deny: ['Read(~/secret.txt)'] } });
      const a = await run(t, 'Read', { file_path: path.join(outside, 'notes.txt') });
      expect(a.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule' } } });
      const d = await run(t, 'Read', { file_path: path.join(home, 'docs', 'a.md') });
      expect(d.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'Read(~/docs/**)' } } });
      const s = await run(t, 'Read', { file_path: path.join(home, 'secret.txt') });
      expect(s.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Read(~/secret.txt)' } });
    } finally {
      process.env.HOME = saved;
    }
  });

  it('a trailing /** also covers the directory itself (Grep of the denied directory finds nothing in it)', async () => {
    t = await makeApp({ permissions: { deny: ['Read(./secrets/**)'] } });
    fs.mkdirSync(path.join(t.workspace, 'secrets'));
    fs.writeFileSync(path.join(t.workspace, 'secrets', 'k'), 'needle\n');
    const r = await run(t, 'Grep', { pattern: 'needle', path: path.join(t.workspace, 'secrets') });
    expect(r.exec.status).toBe('denied');
  });

  it('Edit(/src/**) in a project’s .claude/settings.json is relative to the project root (the settings file’s root)', async () => {
    const project = tmpDir();
    fs.mkdirSync(path.join(project, '.claude'));
    fs.mkdirSync(path.join(project, 'src'));
    fs.mkdirSync(path.join(project, 'lib', 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Edit(/src/**)'] } }));
    const loaded = loadConfig({ claudeSettingsPath: path.join(project, '.claude', 'settings.json'), overrides: { workspace: project }, env: {} });
    t = await makeApp({ workspace: { root: project } }, { rules: loaded.rules });
    const ok = await run(t, 'Write', { file_path: path.join(project, 'src', 'a.ts'), content: 'x' });
    expect(ok.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'Edit(/src/**)' } } });
    const nested = await run(t, 'Write', { file_path: path.join(project, 'lib', 'src', 'a.ts'), content: 'x' });
    expect(nested.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
  });

  it('WebFetch(domain:host) is an exact host: it does not cover a subdomain', async () => {
    t = await makeApp({ permissions: { deny: ['WebFetch(domain:example.com)'] } });
    expect(await decisionOf(t, 'WebFetch', { url: 'https://example.com/a', prompt: 'p' })).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
    expect(await decisionOf(t, 'WebFetch', { url: 'https://www.example.com/a', prompt: 'p' })).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
  });

  it('legacy names: a KillShell rule is a TaskStop rule, a Task rule an Agent rule', async () => {
    t = await makeApp({ permissions: { deny: ['KillShell'] } });
    const tools = (await t.app.inject({ method: 'GET', url: '/tools?deferred=include' })).json() as { tools: Array<{ name: string }>; deferred_tools: string[] };
    const names = [...tools.tools.map((x) => x.name), ...(tools.deferred_tools ?? [])];
    expect(names).not.toContain('TaskStop');
    expect(names).toContain('TaskOutput');
  });

  it('deny > ask > allow whatever the source (a local settings allow does not beat a project deny)', async () => {
    const project = tmpDir();
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Probe'], ask: ['Other'] } }));
    fs.writeFileSync(path.join(project, '.claude', 'settings.local.json'), JSON.stringify({ permissions: { allow: ['Probe', 'Other'] } }));
    const loaded = loadConfig({ claudeSettingsPath: path.join(project, '.claude', 'settings.json'), overrides: { workspace: project }, env: {} });
    t = await makeApp({ workspace: { root: project } }, { rules: loaded.rules, extraTools: [probeTool({}), probeTool({ name: 'Other' })] });
    expect(await decisionOf(t, 'Probe', { value: 'a' })).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Probe' } });
    expect(await decisionOf(t, 'Other', { value: 'a' })).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
  });

  it('settings.local.json is loaded after settings.json: its defaultMode wins', async () => {
    const project = tmpDir();
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify({ permissions: { defaultMode: 'plan' } }));
    fs.writeFileSync(path.join(project, '.claude', 'settings.local.json'), JSON.stringify({ permissions: { defaultMode: 'acceptEdits' } }));
    const loaded = loadConfig({ claudeSettingsPath: path.join(project, '.claude', 'settings.json'), overrides: { workspace: project }, env: {} });
    expect(loaded.config.permissions.defaultMode).toBe('acceptEdits');
  });
});

describe('.mcp.json: ${VAR} and ${VAR:-default}, type stdio/http/sse, headers', () => {
  it('a stdio server’s command, args and env are expanded from the environment; a default fills an unset variable', async () => {
    const { EVERYTHING, FAST_MCP, waitConnected } = await import('./helpers-mcp.js');
    const dir = tmpDir();
    const mcpJson = path.join(dir, '.mcp.json');
    fs.writeFileSync(
      mcpJson,
      JSON.stringify({
        mcpServers: {
          everything: {
            command: '${FID_NODE}',
            args: ['${FID_SERVER}', 'stdio'],
            env: { FID_GREETING: '${FID_SET:-unused}', FID_FALLBACK: '${FID_UNSET:-the default}', FID_EMPTY_DEFAULT: 'x${FID_UNSET:-}y' },
          },
        },
      }),
    );
    const env: NodeJS.ProcessEnv = { ...process.env, FID_NODE: process.execPath, FID_SERVER: EVERYTHING, FID_SET: 'hello from env' };
    delete env.FID_UNSET;
    const loaded = loadConfig({ mcpConfigPath: mcpJson, env });
    t = await makeApp({ mcpServers: loaded.config.mcpServers, permissions: { allow: ['mcp__everything'] } }, { env, mcp: FAST_MCP });
    await waitConnected(t.app, ['everything']);
    const r = await run(t, 'mcp__everything__get-env', {});
    expect(r.exec.status).toBe('succeeded');
    const printed = JSON.parse(r.text) as Record<string, string>;
    expect(printed).toMatchObject({ FID_GREETING: 'hello from env', FID_FALLBACK: 'the default', FID_EMPTY_DEFAULT: 'xy' });
  });

  it('an unset variable without a default keeps the server from starting, naming the variable', async () => {
    const { FAST_MCP, waitFor, serverStatus } = await import('./helpers-mcp.js');
    const dir = tmpDir();
    const mcpJson = path.join(dir, '.mcp.json');
    fs.writeFileSync(mcpJson, JSON.stringify({ mcpServers: { s: { command: process.execPath, args: ['-e', '0'], env: { K: '${FID_NOT_SET_ANYWHERE}' } } } }));
    const env = { ...process.env };
    delete env.FID_NOT_SET_ANYWHERE;
    const loaded = loadConfig({ mcpConfigPath: mcpJson, env });
    t = await makeApp({ mcpServers: loaded.config.mcpServers }, { env, mcp: FAST_MCP });
    const s = await waitFor(() => (serverStatus(t!.app, 's').state === 'failed' ? serverStatus(t!.app, 's') : undefined), 'server s to fail');
    expect(s.last_error).toContain('FID_NOT_SET_ANYWHERE');
  });

  for (const type of ['http', 'sse'] as const) {
    it(`type ${type}: the url and headers are expanded and the headers are sent`, async () => {
      const { localServer } = await import('./helpers-hooks.js');
      const { FAST_MCP, waitFor } = await import('./helpers-mcp.js');
      const srv = await localServer((_req, res) => {
        res.statusCode = 404;
        res.end('no');
      });
      try {
        const dir = tmpDir();
        const mcpJson = path.join(dir, '.mcp.json');
        const port = new URL(srv.url).port;
        fs.writeFileSync(
          mcpJson,
          JSON.stringify({ mcpServers: { remote: { type, url: `http://127.0.0.1:\${FID_PORT}/${type}`, headers: { Authorization: 'Bearer ${FID_TOKEN}', 'X-Team': '${FID_TEAM:-core}' } } } }),
        );
        const env: NodeJS.ProcessEnv = { ...process.env, FID_PORT: port, FID_TOKEN: 'tok-123' };
        delete env.FID_TEAM;
        const loaded = loadConfig({ mcpConfigPath: mcpJson, env });
        t = await makeApp({ mcpServers: loaded.config.mcpServers }, { env, mcp: FAST_MCP });
        const req = await waitFor(() => srv.requests.find((r) => r.url === `/${type}`), `a request to /${type}`);
        expect(req.method).toBe(type === 'http' ? 'POST' : 'GET');
        expect(req.headers.authorization).toBe('Bearer tok-123');
        expect(req.headers['x-team']).toBe('core');
      } finally {
        await t?.close();
        t = undefined;
        await srv.close();
      }
    });
  }
});

describe('§3, §8, §9 texts and constants', () => {
  it('unknown tool: <tool_use_error>Error: No such tool available: X</tool_use_error>', async () => {
    t = await makeApp();
    const r = await run(t, 'Nope', {});
    expect(r.block).toMatchObject({ is_error: true, content: '<tool_use_error>Error: No such tool available: Nope</tool_use_error>' });
  });

  it('zod failures in Claude Code’s words, under "<Tool> failed due to the following issue(s):"', async () => {
    t = await makeApp();
    const missing = await run(t, 'Read', {});
    expect(missing.text).toBe('<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe required parameter `file_path` is missing</tool_use_error>');
    const extra = await run(t, 'Read', { file_path: '/x', nope: 1 });
    expect(extra.text).toContain('An unexpected parameter `nope` was provided');
    const type = await run(t, 'Read', { file_path: 3 });
    expect(type.text).toContain('The parameter `file_path` type is expected as `string` but provided as `number`');
    const two = await run(t, 'Read', { nope: 1 });
    expect(two.text).toContain('Read failed due to the following issues:\n');
  });

  it('an empty result is "(<Tool> completed with no output)"', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] } });
    const r = await run(t, 'Bash', { command: 'true' });
    expect(r.text).toBe('(Bash completed with no output)');
  });

  it('Read: 2,000 lines unless a limit is given, numbered as cat -n', async () => {
    t = await makeApp();
    const file = path.join(t.workspace, 'long.txt');
    fs.writeFileSync(file, Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`).join('\n'));
    const r = await run(t, 'Read', { file_path: file });
    expect(r.text).toMatch(/^\s*1\tline 1\n/);
    expect(r.text).toContain('\tline 2000');
    expect(r.text).not.toContain('\tline 2001');
  });

  it('Read: past 25,000 tokens, "File content (N tokens) exceeds maximum allowed tokens (25000)"', async () => {
    t = await makeApp();
    const file = path.join(t.workspace, 'wide.txt');
    fs.writeFileSync(file, Array.from({ length: 1500 }, () => 'x'.repeat(150)).join('\n'));
    const r = await run(t, 'Read', { file_path: file });
    expect(r.block.is_error).toBe(true);
    expect(r.text).toMatch(/File content \((over )?\d+ tokens\) exceeds maximum allowed tokens \(25000\)/);
  });

  it('Glob returns at most 100 results; Grep head_limit defaults to 250', async () => {
    t = await makeApp();
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(t.workspace, `f${i}.txt`), 'needle\n');
    const g = await run(t, 'Glob', { pattern: '*.txt' });
    expect(g.text.split('\n').filter((l) => l.endsWith('.txt'))).toHaveLength(100);
    const gr = await run(t, 'Grep', { pattern: 'needle' });
    expect(gr.text.split('\n').filter((l) => l.endsWith('.txt'))).toHaveLength(250);
  });

  it('Bash: timeout default 120,000 ms, at most 600,000', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] } });
    expect(t.app.toolexec.config.bash).toMatchObject({ defaultTimeoutMs: 120_000, maxTimeoutMs: 600_000 });
    const r = await run(t, 'Bash', { command: 'true', timeout: 600_001 });
    expect(r.block.is_error).toBe(true);
  });

  it('Edit’s errors in Claude Code’s words', async () => {
    t = await makeApp({ permissions: { allow: ['Edit', 'Read'] } });
    const file = path.join(t.workspace, 'a.txt');
    fs.writeFileSync(file, 'one two two\n');
    expect((await run(t, 'Edit', { file_path: file, old_string: 'one', new_string: 'one' })).text).toContain('No changes to make: old_string and new_string are exactly the same.');
    expect((await run(t, 'Edit', { file_path: file, old_string: 'one', new_string: '1' })).text).toContain('File has not been read yet. Read it first before writing to it.');
    await run(t, 'Read', { file_path: file });
    expect((await run(t, 'Edit', { file_path: file, old_string: 'zzz', new_string: '1' })).text).toContain('String to replace not found in file.');
    expect((await run(t, 'Edit', { file_path: file, old_string: 'two', new_string: '2' })).text).toMatch(/Found 2 matches .* but replace_all is false/s);
    expect((await run(t, 'Edit', { file_path: path.join(t.workspace, 'none.txt'), old_string: 'a', new_string: 'b' })).text).toContain('File does not exist.');
    const later = new Date(Date.now() + 5000);
    fs.writeFileSync(file, 'changed\n');
    fs.utimesSync(file, later, later);
    expect((await run(t, 'Edit', { file_path: file, old_string: 'changed', new_string: 'c' })).text).toContain('File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.');
  });
});

describe('§2, §6 MCP rules on a real server', () => {
  const namesWith = async (deny: string[]): Promise<string[]> => {
    const { everythingStdio, FAST_MCP, waitConnected } = await import('./helpers-mcp.js');
    const app = await makeApp({ mcpServers: { everything: everythingStdio }, permissions: { deny } }, { mcp: FAST_MCP });
    try {
      await waitConnected(app.app, ['everything']);
      const body = (await app.app.inject({ method: 'GET', url: '/tools?deferred=include' })).json() as { tools: Array<{ name: string }> };
      return body.tools.map((x) => x.name).filter((n) => n.startsWith('mcp__'));
    } finally {
      await app.close();
    }
  };

  it('mcp__srv and mcp__srv__* hide every tool of the server; mcp__srv__tool hides that one', async () => {
    const all = await namesWith([]);
    expect(all).toContain('mcp__everything__echo');
    expect(await namesWith(['mcp__everything'])).toEqual([]);
    expect(await namesWith(['mcp__everything__*'])).toEqual([]);
    const one = await namesWith(['mcp__everything__echo']);
    expect(one).not.toContain('mcp__everything__echo');
    expect(one).toHaveLength(all.length - 1);
  });

  it('an allow rule mcp__srv lets the server’s tools run; without it they ask', async () => {
    const { everythingStdio, FAST_MCP, waitConnected } = await import('./helpers-mcp.js');
    t = await makeApp({ mcpServers: { everything: everythingStdio }, permissions: { allow: ['mcp__everything'] } }, { mcp: FAST_MCP });
    await waitConnected(t.app, ['everything']);
    const r = await run(t, 'mcp__everything__echo', { message: 'hi' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule', detail: 'mcp__everything' } } });
    expect(r.text).toContain('hi');
  });
});

describe('§5 hooks: timeouts, de-duplication, parallel runs', () => {
  it('a hook past its own timeout (seconds) is killed: a non-blocking error, and the call goes on', async () => {
    const dir = tmpDir();
    const cmd = script(dir, 'slow.sh', 'cat >/dev/null; sleep 30');
    const calls: unknown[] = [];
    t = await makeApp({ hooks: pre(cmd, 'Probe', { timeout: 1 }) }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('succeeded');
    expect(r.messages).toMatchObject([{ kind: 'non_blocking_error' }]);
    expect(r.messages[0]!.text).toMatch(/timed out/);
  });

  it('the default timeout is 600 s for command and http hooks', async () => {
    const { DEFAULT_HOOK_TIMEOUT_S } = await import('../src/hooks/runner.js');
    expect(DEFAULT_HOOK_TIMEOUT_S).toBe(600);
  });

  it('the same command in two matcher groups runs once; matched hooks run in parallel', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const same = script(dir, 'same.sh', `cat >/dev/null; echo same >> '${log}'`);
    // Each waits for the other's mark: only parallel runs finish before their timeout.
    const a = script(dir, 'a.sh', `cat >/dev/null; touch '${dir}/a'; i=0; while [ ! -e '${dir}/b' ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; [ -e '${dir}/b' ] && echo a >> '${log}'`);
    const b = script(dir, 'b.sh', `cat >/dev/null; touch '${dir}/b'; i=0; while [ ! -e '${dir}/a' ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; [ -e '${dir}/a' ] && echo b >> '${log}'`);
    t = await makeApp(
      {
        hooks: {
          PreToolUse: [
            { matcher: 'Probe', hooks: [{ type: 'command', command: same }, { type: 'command', command: a }] },
            { matcher: '*', hooks: [{ type: 'command', command: same }, { type: 'command', command: b }] },
          ],
        },
      },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    await run(t, 'Probe', { value: 'a' });
    expect(fs.readFileSync(log, 'utf8').split('\n').filter(Boolean).sort()).toEqual(['a', 'b', 'same']);
  });
});

describe('§5 hooks: PostToolUse JSON; hookSpecificOutput needs its hookEventName', () => {
  it('PostToolUse decision "block" sends its reason to the model beside the result; additionalContext is appended', async () => {
    const dir = tmpDir();
    const block = printing(dir, 'b.sh', { decision: 'block', reason: 'tests fail after this change' });
    const ctx = printing(dir, 'c.sh', { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'formatted by prettier' } });
    t = await makeApp(
      { hooks: { PostToolUse: [{ matcher: 'Probe', hooks: [{ type: 'command', command: block }, { type: 'command', command: ctx }] }] } },
      { extraTools: [probeTool({ permission: 'allow' })] },
    );
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('succeeded');
    expect(r.text).toContain('value=a');
    expect(r.text).toContain('tests fail after this change');
    expect(r.text).toContain('formatted by prettier');
  });

  it('a hookSpecificOutput without hookEventName is not honoured (Claude Code rejects the output): its allow does not skip the prompt, its updatedInput is not used', async () => {
    const dir = tmpDir();
    const cmd = printing(dir, 'n.sh', { hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { value: 'rewritten' } } });
    const calls: unknown[] = [];
    t = await makeApp({ hooks: pre(cmd, 'Probe') }, { extraTools: [probeTool({ calls })] });
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(calls).toEqual([]);
    expect(r.messages).toContainEqual(expect.objectContaining({ kind: 'non_blocking_error' }));
  });

  it('a hookSpecificOutput without hookEventName does not deny either', async () => {
    const dir = tmpDir();
    const cmd = printing(dir, 'n.sh', { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'x' } });
    t = await makeApp({ permissions: { allow: ['Probe'] }, hooks: pre(cmd, 'Probe') }, { extraTools: [probeTool({})] });
    expect((await run(t, 'Probe', { value: 'a' })).exec.status).toBe('succeeded');
  });
});

describe('§6 Bash rules: what is stripped before matching', () => {
  it('allow rules see through SAFE_ENV_VARS only (NODE_ENV=x npm test matches Bash(npm test:*), FOO=1 npm test does not); wrappers are stripped for deny rules', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(npmx test:*)'], deny: ['Bash(rm -rf:*)'] } });
    const d = async (command: string) => (await run(t!, 'Bash', { command })).exec.decision!;
    expect(await d('NODE_ENV=test npmx test')).toMatchObject({ behavior: 'allow', reason: { type: 'rule' } });
    expect(await d('FOO=1 npmx test')).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(await d('npmx test && touch y')).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(await d('timeout 5 nice -n 5 rm -rf build')).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
  });
});

describe('§6 rule syntax corners', () => {
  const decisionOf = async (app: TestApp, command: string) => (await run(app, 'Bash', { command })).exec.decision!;

  it('\\( and \\) are escapes in a rule’s content; \\* is a literal star, a bare * a wildcard', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(touch "\\(x\\)")', 'Bash(touch a\\*b)', 'Bash(touchx * --dry)'] } });
    expect(await decisionOf(t, 'touch "(x)"')).toMatchObject({ behavior: 'allow', reason: { type: 'rule' } });
    expect(await decisionOf(t, 'touch "a*b"')).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(await decisionOf(t, 'touch a*b')).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash(touch a\\*b)' } });
    expect(await decisionOf(t, 'touch aXb')).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(await decisionOf(t, 'touchx one two --dry')).toMatchObject({ behavior: 'allow', reason: { type: 'rule' } });
    expect(await decisionOf(t, 'touchx one two')).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
  });

  it('a prefix rule also covers `xargs <prefix> …`', async () => {
    t = await makeApp({ permissions: { allow: ['Bash(touchy:*)'] } });
    expect(await decisionOf(t, 'xargs touchy -v')).toMatchObject({ behavior: 'allow', reason: { type: 'rule' } });
  });

  it('disableAllHooks in a settings file: no hook runs', async () => {
    const project = tmpDir();
    fs.mkdirSync(path.join(project, '.claude'));
    const mark = path.join(project, 'ran');
    const cmd = script(project, 'h.sh', `cat >/dev/null; touch '${mark}'`);
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify({ hooks: pre(cmd), permissions: { allow: ['Probe'] } }));
    fs.writeFileSync(path.join(project, '.claude', 'settings.local.json'), JSON.stringify({ disableAllHooks: true }));
    const loaded = loadConfig({ claudeSettingsPath: path.join(project, '.claude', 'settings.json'), overrides: { workspace: project }, env: {} });
    t = await makeApp({ workspace: { root: project }, hooks: loaded.config.hooks, disableAllHooks: loaded.config.disableAllHooks }, { rules: loaded.rules, extraTools: [probeTool({})] });
    expect((await run(t, 'Probe', { value: 'a' })).exec.status).toBe('succeeded');
    expect(fs.existsSync(mark)).toBe(false);
  });
});

describe('§9 file state: Edit and Write against the cache', () => {
  it('Edit: a newer mtime with the same content passes after a full read (content fallback); Write has no such fallback', async () => {
    t = await makeApp({ permissions: { allow: ['Edit', 'Write', 'Read'] } });
    const file = path.join(t.workspace, 'a.txt');
    fs.writeFileSync(file, 'same\n');
    await run(t, 'Read', { file_path: file });
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(file, later, later);
    const e = await run(t, 'Edit', { file_path: file, old_string: 'same', new_string: 'edited' });
    expect(e.exec.status).toBe('succeeded');
    const b = path.join(t.workspace, 'b.txt');
    fs.writeFileSync(b, 'same\n');
    await run(t, 'Read', { file_path: b });
    fs.utimesSync(b, later, later);
    const w = await run(t, 'Write', { file_path: b, content: 'new' });
    expect(w.block.is_error).toBe(true);
    expect(w.text).toContain('File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.');
    expect(fs.readFileSync(b, 'utf8')).toBe('same\n');
  });

  it('Write: a new file needs no read; an existing one not read is refused; Edit with an empty old_string on an existing file: "Cannot create new file - file already exists."', async () => {
    t = await makeApp({ permissions: { allow: ['Edit', 'Write', 'Read'] } });
    expect((await run(t, 'Write', { file_path: path.join(t.workspace, 'new.txt'), content: 'n' })).exec.status).toBe('succeeded');
    const old = path.join(t.workspace, 'old.txt');
    fs.writeFileSync(old, 'o\n');
    expect((await run(t, 'Write', { file_path: old, content: 'x' })).text).toContain('File has not been read yet. Read it first before writing to it.');
    await run(t, 'Read', { file_path: old });
    expect((await run(t, 'Edit', { file_path: old, old_string: '', new_string: 'x' })).text).toContain('Cannot create new file - file already exists.');
    const missing = await run(t, 'Edit', { file_path: path.join(t.workspace, 'nope.txt'), old_string: 'a', new_string: 'b' });
    expect(missing.text).toContain(`File does not exist. Note: your current working directory is ${t.workspace}.`);
  });
});

describe('§5 hooks: if (permission-rule syntax, tool events)', () => {
  it('Bash(git *) runs the hook when any subcommand matches, and when the command cannot be parsed', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'log');
    const cmd = script(dir, 'if.sh', `cat >/dev/null; echo ran >> '${log}'`);
    t = await makeApp({ permissions: { allow: ['Bash'] }, hooks: pre(cmd, 'Bash', { if: 'Bash(git *)' }) });
    const ran = async (command: string): Promise<boolean> => {
      fs.rmSync(log, { force: true });
      await run(t!, 'Bash', { command });
      return fs.existsSync(log);
    };
    expect(await ran('echo a')).toBe(false);
    expect(await ran('echo a && git --version')).toBe(true);
    expect(await ran('echo $((')).toBe(true);
  });
});

describe('§9 Read size limit', () => {
  it('past 256 KB a read without limit is refused; with a limit it reads', async () => {
    t = await makeApp();
    const file = path.join(t.workspace, 'big.txt');
    fs.writeFileSync(file, Array.from({ length: 2700 }, (_, i) => `${i} ${'y'.repeat(95)}`).join('\n'));
    expect(fs.statSync(file).size).toBeGreaterThan(256 * 1024);
    const whole = await run(t, 'Read', { file_path: file });
    expect(whole.block.is_error).toBe(true);
    const part = await run(t, 'Read', { file_path: file, offset: 2600, limit: 50 });
    expect(part.block.is_error ?? false).toBe(false);
    expect(part.text).toContain('2600 yyy');
  });
});

describe('§1, §3 the input hooks see (backfillObservableInput)', () => {
  it('a guard hook that denies $CLAUDE_PROJECT_DIR/secrets/* (as Claude Code documents file_path: absolute) cannot be sidestepped with a relative path', async () => {
    const dir = tmpDir();
    const guard = path.join(dir, 'guard.mjs');
    fs.writeFileSync(
      guard,
      `let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => {
        const p = JSON.parse(s).tool_input.file_path ?? '';
        if (p.startsWith(process.env.CLAUDE_PROJECT_DIR + '/secrets/')) { process.stderr.write('secrets are off limits'); process.exit(2); }
      });`,
    );
    t = await makeApp({ permissions: { allow: ['Read'] }, hooks: pre(`node ${guard}`, 'Read') });
    fs.mkdirSync(path.join(t.workspace, 'secrets'));
    fs.writeFileSync(path.join(t.workspace, 'secrets', 'key'), 'KEY=1\n');
    for (const file_path of [path.join(t.workspace, 'secrets', 'key'), 'secrets/key', './secrets/key', 'src/../secrets/key']) {
      const r = await run(t, 'Read', { file_path });
      expect(r.exec.status, file_path).toBe('denied');
      expect(r.text).not.toContain('KEY=1');
    }
  });

  it('file tools’ file_path reaches hooks absolute, whatever the agent sent (relative, ./, ~/)', async () => {
    const dir = tmpDir();
    const h = recorder(dir, 'obs');
    const home = tmpDir();
    fs.writeFileSync(path.join(home, 'h.txt'), 'home\n');
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      t = await makeApp({ permissions: { allow: ['Read', 'Write', 'Edit', `Read(/${home}/**)`] }, hooks: pre(h.command, 'Read|Write|Edit') });
      fs.mkdirSync(path.join(t.workspace, 'sub'));
      fs.writeFileSync(path.join(t.workspace, 'sub', 'a.txt'), 'a\n');
      await run(t, 'Read', { file_path: 'sub/a.txt' });
      expect((h.stdin().tool_input as { file_path: string }).file_path).toBe(path.join(t.workspace, 'sub', 'a.txt'));
      await run(t, 'Read', { file_path: './sub/../sub/a.txt' });
      expect((h.stdin().tool_input as { file_path: string }).file_path).toBe(path.join(t.workspace, 'sub', 'a.txt'));
      await run(t, 'Read', { file_path: '~/h.txt' });
      expect((h.stdin().tool_input as { file_path: string }).file_path).toBe(path.join(home, 'h.txt'));
      await run(t, 'Write', { file_path: 'sub/new.txt', content: 'n' });
      expect((h.stdin().tool_input as { file_path: string }).file_path).toBe(path.join(t.workspace, 'sub', 'new.txt'));
      await run(t, 'Edit', { file_path: 'sub/a.txt', old_string: 'a', new_string: 'b' });
      expect((h.stdin().tool_input as { file_path: string }).file_path).toBe(path.join(t.workspace, 'sub', 'a.txt'));
    } finally {
      process.env.HOME = saved;
    }
  });
});

describe('§6 WebFetch domain rules beyond the exact host', () => {
  it('WebFetch(domain:*.example.com) covers subdomains (Claude Code ≥ 2.1.172), not the apex; WebFetch(domain:*) covers every host', async () => {
    t = await makeApp({ permissions: { deny: ['WebFetch(domain:*.example.com)'] } });
    expect((await run(t, 'WebFetch', { url: 'https://a.example.com/x', prompt: 'p' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
    expect((await run(t, 'WebFetch', { url: 'https://example.com/x', prompt: 'p' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    await t.close();
    t = await makeApp({ permissions: { deny: ['WebFetch(domain:*)'] } });
    expect((await run(t, 'WebFetch', { url: 'https://anything.test/x', prompt: 'p' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
  });
});

describe('§4 orchestration, §7 ToolSearch', () => {
  it('ToolSearch: select:A,B gives tool_reference blocks; a query nothing matches gives "No matching deferred tools found"', async () => {
    t = await makeApp();
    const sel = await run(t, 'ToolSearch', { query: 'select:WebFetch,TodoWrite' });
    const refs = (sel.block.content as Array<{ type: string; tool_name?: string }>).filter((b) => b.type === 'tool_reference').map((b) => b.tool_name);
    expect(refs).toEqual(['WebFetch', 'TodoWrite']);
    const none = await run(t, 'ToolSearch', { query: 'zzzqqq' });
    expect(none.text).toBe('No matching deferred tools found');
  });

  it('a failing Bash call cancels its concurrent siblings with Claude Code’s text; a failing Read cancels nothing', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] } });
    const r = await execute(t.app, {
      tool_uses: [use('Bash', { command: 'cat /nonexistent-file-xyz' }, 'b1'), use('Bash', { command: 'sleep 5; echo late' }, 'b2')],
    });
    const sib = r.body.tool_results.find((x) => x.tool_use_id === 'b2')!;
    expect(sib.content).toBe('<tool_use_error>Cancelled: parallel tool call Bash(cat /nonexistent-file-xyz) errored</tool_use_error>');
    const r2 = await execute(t.app, {
      tool_uses: [use('Read', { file_path: path.join(t.workspace, 'missing.txt') }, 'r1'), use('Glob', { pattern: '*' }, 'g1')],
    });
    expect(r2.body.executions.find((x) => x.tool_use_id === 'g1')!.status).toBe('succeeded');
  });
});

describe('pitfalls from the reference', () => {
  it('16: {"decision":"allow"} (or "deny") fails validation and the call takes the normal flow; so does permissionDecision "Allow"', async () => {
    for (const out of [{ decision: 'allow' }, { decision: 'deny', reason: 'x' }, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'Allow' } }]) {
      const dir = tmpDir();
      const cmd = printing(dir, 'p16.sh', out);
      const calls: unknown[] = [];
      const app = await makeApp({ permissions: { allow: ['Probe'] }, hooks: pre(cmd, 'Probe') }, { extraTools: [probeTool({ calls })] });
      try {
        const r = await run(app, 'Probe', { value: 'a' });
        expect(r.exec, JSON.stringify(out)).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule' } } });
        expect(r.messages).toContainEqual(expect.objectContaining({ kind: 'non_blocking_error' }));
      } finally {
        await app.close();
      }
    }
  });

  it('8: rules are judged on the hook-rewritten input (a rewrite onto a denied command is denied)', async () => {
    const dir = tmpDir();
    const cmd = printing(dir, 'rw.sh', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: 'rm -rf build' } } });
    t = await makeApp({ permissions: { deny: ['Bash(rm -rf:*)'] }, hooks: pre(cmd, 'Bash') });
    fs.mkdirSync(path.join(t.workspace, 'build'));
    const r = await run(t, 'Bash', { command: 'echo hi' });
    expect(r.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm -rf:*)' } });
    expect(fs.existsSync(path.join(t.workspace, 'build'))).toBe(true);
  });
});

describe('§6 settings from several files', () => {
  it('a user file’s deny beats a project file’s allow, and the project’s ask beats the user’s allow, whatever the order given', async () => {
    const home = tmpDir();
    const project = tmpDir();
    fs.mkdirSync(path.join(home, '.claude'));
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({ permissions: { deny: ['Probe'], allow: ['Other'] } }));
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Probe'], ask: ['Other'] } }));
    for (const order of [
      [path.join(home, '.claude', 'settings.json'), path.join(project, '.claude', 'settings.json')],
      [path.join(project, '.claude', 'settings.json'), path.join(home, '.claude', 'settings.json')],
    ]) {
      const loaded = loadConfig({ claudeSettingsPath: order, overrides: { workspace: project }, env: {} });
      const app = await makeApp({ workspace: { root: project } }, { rules: loaded.rules, extraTools: [probeTool({}), probeTool({ name: 'Other' })] });
      try {
        expect((await run(app, 'Probe', { value: 'a' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Probe' } });
        expect((await run(app, 'Other', { value: 'a' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
      } finally {
        await app.close();
      }
    }
  });
});

describe('§3 step 12: a failed command’s text', () => {
  it('ShellError: "Exit code N", then stderr, then stdout', async () => {
    t = await makeApp({ permissions: { allow: ['Bash'] } });
    const r = await run(t, 'Bash', { command: 'echo to-stdout; echo to-stderr >&2; exit 3' });
    expect(r.block.is_error).toBe(true);
    expect(r.text).toBe('Exit code 3\nto-stderr\nto-stdout');
  });
});

describe('§3 step 3: a deferred tool’s schema failure', () => {
  it('gets the hint to load it with ToolSearch select:<name>; a tool sent in full does not', async () => {
    t = await makeApp();
    const todo = await run(t, 'TodoWrite', { todos: '[{"content":"a","status":"pending","activeForm":"A"}]' });
    expect(todo.text).toContain('InputValidationError: TodoWrite failed due to the following issue:\nThe parameter `todos` type is expected as `array` but provided as `string`');
    expect(todo.text).toContain('Load the tool first: call ToolSearch with query "select:TodoWrite", then retry this call.');
    const read = await run(t, 'Read', { file_path: 'a', limit: '5' });
    expect(read.text).toContain('InputValidationError');
    expect(read.text).not.toContain('ToolSearch');
  });
});

describe('§6 what bypassPermissions does not pass', () => {
  it('a content ask rule and a hook’s ask still ask; a content deny rule still denies', async () => {
    const dir = tmpDir();
    const ask = printing(dir, 'ask.sh', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' } });
    t = await makeApp({
      permissions: { defaultMode: 'bypassPermissions', allowBypass: true, ask: ['Bash(touchy:*)'], deny: ['Bash(rmx:*)'] },
      hooks: pre(ask, 'Probe'),
    }, { extraTools: [probeTool({})] });
    expect((await run(t, 'Bash', { command: 'touchy a' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect((await run(t, 'Bash', { command: 'rmx a' })).exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
    const p = await run(t, 'Probe', { value: 'a' });
    expect(p.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(p.chain).toContainEqual(expect.objectContaining({ layer: 'hooks', outcome: 'ask' }));
    expect((await run(t, 'Bash', { command: 'echo ok > out.txt' })).exec.status).toBe('succeeded');
  });
});
