/**
 * Command hooks that leave the call's way, as in Claude Code: `async: true`
 * and `asyncRewake: true` run in the background, a first line of stdout
 * `{"async":true}` sends a running hook to the background, and `once: true`
 * runs a hook once per session. Real shell scripts; background hooks are
 * stopped when the service closes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cleanupTmp, execute, makeApp, probeTool, tmpDir, use, type TestApp } from './helpers.js';
import { script } from './helpers-hooks.js';
import { isAlive as alive, logCapture } from './helpers.js';
import { loadConfig } from '../src/config/load.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const tool = probeTool({ name: 'Probe' });

/** The file's text once it holds a whole line. */
async function waitForFile(file: string, ms = 10_000): Promise<string> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Whole lines only: the shell makes the file before echo writes to it, and an empty pid read as 0
    // named this process's own group, which is never gone.
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (text.endsWith('\n')) return text;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${file} never appeared`);
}

/** Shell that waits (up to 20 s) for the file `go` in `dir`. */
function waitGo(dir: string): string {
  return `i=0; while [ ! -f ${dir}/go ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done`;
}

async function gone(pid: number, ms = 5000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !alive(pid);
}

describe('async hooks', () => {
  it('async: true runs in the background: the call does not wait, and its exit 2 denies nothing', async () => {
    const dir = tmpDir();
    const done = path.join(dir, 'done');
    // It waits for the test to say go, which the test does only once the call has answered.
    const pre = script(dir, 'slow-deny.sh', `cat > ${dir}/stdin; ${waitGo(dir)}; echo finished > ${done}; echo "no" >&2; exit 2`);
    t = await makeApp(
      { permissions: { allow: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre, async: true, timeout: 20 }] }] } },
      { extraTools: [tool] },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'a' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'succeeded' });
    expect(fs.existsSync(done)).toBe(false);
    fs.writeFileSync(path.join(dir, 'go'), '');
    // It still ran, with Claude Code's stdin.
    expect(await waitForFile(done)).toBe('finished\n');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'stdin'), 'utf8'))).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Probe', tool_input: { value: 'a' } });
  });

  it('a first line {"async":true} sends a running hook to the background: what it prints after decides nothing', async () => {
    const dir = tmpDir();
    const done = path.join(dir, 'done');
    const deny = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'late' } });
    const pre = script(dir, 'goes-async.sh', `cat >/dev/null; echo '{"async":true}'; ${waitGo(dir)}; echo '${deny}'; echo finished > ${done}`);
    t = await makeApp({ permissions: { allow: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre, timeout: 20 }] }] } }, { extraTools: [tool] });
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'a' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'succeeded' });
    expect(fs.existsSync(done)).toBe(false);
    fs.writeFileSync(path.join(dir, 'go'), '');
    expect(await waitForFile(done)).toBe('finished\n');
  });

  it('a hook that prints its decision on one line is still waited for and honoured', async () => {
    const dir = tmpDir();
    const deny = JSON.stringify({ async: false, hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'not today' } });
    const pre = script(dir, 'deny.sh', `cat >/dev/null; echo '${deny}'; sleep 0.2`);
    t = await makeApp({ permissions: { allow: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre }] }] } }, { extraTools: [tool] });
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'a' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'hook' } } });
  });

  it('asyncRewake: exit 2 is logged (there is no model turn to wake), and the call went on', async () => {
    const dir = tmpDir();
    const post = script(dir, 'rewake.sh', 'cat >/dev/null; echo "tests failed after this edit" >&2; exit 2');
    const out = logCapture();
    t = await makeApp(
      { permissions: { allow: ['Probe'] }, logging: { level: 'info' }, hooks: { PostToolUse: [{ hooks: [{ type: 'command', command: post, asyncRewake: true }] }] } },
      { extraTools: [tool], logger: undefined, logStream: out.stream },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'a' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'succeeded' });
    expect(JSON.stringify(r.body.tool_results[0]!.content)).not.toContain('tests failed');
    const until = Date.now() + 10_000;
    let line: Record<string, unknown> | undefined;
    while (!line && Date.now() < until) {
      line = out.lines().find((l) => typeof l.msg === 'string' && l.msg.includes('asyncRewake'));
      if (!line) await new Promise((res) => setTimeout(res, 25));
    }
    expect(line).toMatchObject({ event: 'PostToolUse', hook: post, exit_code: 2, stderr: 'tests failed after this edit\n' });
  });

  it('background hooks are stopped, with their process group, when the service closes', async () => {
    const dir = tmpDir();
    const pidFile = path.join(dir, 'pid');
    const pre = script(dir, 'forever.sh', `cat >/dev/null; sleep 300 & echo $! > ${pidFile}; wait`);
    t = await makeApp({ permissions: { allow: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre, async: true }] }] } }, { extraTools: [tool] });
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'a' })] });
    expect(r.body.executions[0]!.status).toBe('succeeded');
    const pid = Number((await waitForFile(pidFile)).trim());
    expect(pid).toBeGreaterThan(1);
    expect(alive(pid)).toBe(true);
    await t.close();
    t = undefined;
    expect(await gone(pid)).toBe(true);
  });
});

describe('once', () => {
  it('runs a once hook the first time per session only; other hooks run every time', async () => {
    const dir = tmpDir();
    const onceLog = path.join(dir, 'once.log');
    const everyLog = path.join(dir, 'every.log');
    const once = script(dir, 'once.sh', `cat >/dev/null; echo run >> ${onceLog}`);
    const every = script(dir, 'every.sh', `cat >/dev/null; echo run >> ${everyLog}`);
    t = await makeApp(
      {
        permissions: { allow: ['Probe'] },
        hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: once, once: true }, { type: 'command', command: every }] }] },
      },
      { extraTools: [tool] },
    );
    for (const [session, n] of [
      ['s-one', 3],
      ['s-two', 2],
    ] as const) {
      for (let i = 0; i < n; i++) {
        const r = await execute(t.app, { session_id: session, tool_uses: [use('Probe', { value: `${session}-${i}` })] });
        expect(r.body.executions[0]!.status).toBe('succeeded');
      }
    }
    expect(fs.readFileSync(onceLog, 'utf8')).toBe('run\nrun\n');
    expect(fs.readFileSync(everyLog, 'utf8')).toBe('run\n'.repeat(5));
  });

  it('a once hook that denies, denies the first call of the session only', async () => {
    const dir = tmpDir();
    const pre = script(dir, 'deny-once.sh', 'cat >/dev/null; echo "first call refused" >&2; exit 2');
    t = await makeApp({ permissions: { allow: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: pre, once: true }] }] } }, { extraTools: [tool] });
    const first = await execute(t.app, { session_id: 's', tool_uses: [use('Probe', { value: 'a' })] });
    const second = await execute(t.app, { session_id: 's', tool_uses: [use('Probe', { value: 'b' })] });
    expect(first.body.executions[0]!.status).toBe('denied');
    expect(second.body.executions[0]!.status).toBe('succeeded');
  });
});

describe('hooks toolexec accepts and does not run', () => {
  it('a settings file with prompt, agent and mcp_tool hooks and lifecycle events loads, says what is not run, and its command hooks still run', async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, '.claude'));
    const ran = path.join(dir, 'ran');
    const pre = script(dir, 'pre.sh', `cat >/dev/null; echo yes >> ${ran}`);
    const settings = path.join(dir, '.claude', 'settings.json');
    fs.writeFileSync(
      settings,
      JSON.stringify({
        permissions: { allow: ['Probe'] },
        hooks: {
          PreToolUse: [
            { matcher: 'Probe', hooks: [{ type: 'prompt', prompt: 'Is $ARGUMENTS safe?' }, { type: 'command', command: pre }] },
            { hooks: [{ type: 'agent', prompt: 'Verify', model: 'haiku' }, { type: 'mcp_tool', server: 'x', tool: 'y' }] },
          ],
          Stop: [{ hooks: [{ type: 'command', command: 'exit 2' }] }],
          SessionStart: [{ hooks: [{ type: 'command', command: 'echo hi' }] }],
        },
      }),
    );
    const loaded = loadConfig({ claudeSettingsPath: settings, overrides: { workspace: dir, dataDir: path.join(dir, 'data') }, env: {} });
    expect(loaded.warnings).toContain(
      'hooks: Stop, SessionStart are events toolexec never fires (it runs tool calls, not sessions or prompts); those hooks are not run',
    );
    expect(loaded.warnings).toContain('hooks: prompt (PreToolUse), agent (PreToolUse), mcp_tool (PreToolUse) hooks need a model or an MCP client of their own; toolexec does not run them');
    t = await makeApp({ permissions: { allow: ['Probe'] }, hooks: loaded.config.hooks }, { extraTools: [tool] });
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'a' })] });
    expect(r.body.executions[0]).toMatchObject({ status: 'succeeded' });
    expect(fs.readFileSync(ran, 'utf8')).toBe('yes\n');
  });
});
