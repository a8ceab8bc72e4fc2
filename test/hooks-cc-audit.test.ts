/**
 * A line-by-line audit of §5 (hooks), §6 (permissions) and the pitfalls of the
 * reference notes against what Claude Code's source does, for the statements
 * the other hook and permission suites leave open: hook scripts written the
 * way users write them for Claude Code (bash with `read`, jq, python3, node
 * one-liners, from public examples) run unchanged, through POST /execute, as
 * real child processes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { cleanupTmp, execute, makeApp, probeTool, textOf, tmpDir, use, type TestApp } from './helpers.js';
import { pre, printing, run } from './helpers-hooks.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

/** An executable bash script in `dir` (the shebang users write). */
function bashScript(dir: string, name: string, body: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/usr/bin/env bash\n${body}\n`, { mode: 0o755 });
  return p;
}

describe('the stdin a command hook reads', () => {
  it('ends with a newline, as Claude Code writes it: a `set -e` bash guard that reads it with `read -r` blocks `rm -rf` instead of failing open', async () => {
    const dir = tmpDir();
    // `read` returns 1 at an end of input without a newline; under `set -e` the
    // guard would then exit 1, a non-blocking error, and the command would run.
    const guard = bashScript(
      dir,
      'block-rm.sh',
      `set -euo pipefail
read -r input
cmd=$(printf '%s' "$input" | jq -r '.tool_input.command // ""')
if [[ "$cmd" == *"rm -rf"* ]]; then
  echo "Blocked: recursive force delete" >&2
  exit 2
fi
exit 0`,
    );
    t = await makeApp({ permissions: { allow: ['Bash(rm:*)'] }, hooks: pre(guard, 'Bash') });
    fs.mkdirSync(path.join(t.workspace, 'victim'));
    fs.writeFileSync(path.join(t.workspace, 'victim', 'keep'), 'x');
    const r = await run(t, 'Bash', { command: 'rm -rf victim' });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toBe(`PreToolUse:Bash hook error: [${guard}]: Blocked: recursive force delete`);
    expect(fs.existsSync(path.join(t.workspace, 'victim', 'keep'))).toBe(true);
  });

  it('a `while read` loop sees the JSON line (it would skip a last line without a newline)', async () => {
    const dir = tmpDir();
    const log = path.join(dir, 'seen.log');
    const hook = bashScript(dir, 'loop.sh', `while IFS= read -r line; do printf '%s\\n' "$line" | jq -r .tool_name >> '${log}'; done`);
    t = await makeApp({ permissions: { allow: ['Bash(echo:*)'] }, hooks: pre(hook, 'Bash') });
    const r = await run(t, 'Bash', { command: 'echo hi' });
    expect(r.exec.status).toBe('succeeded');
    expect(fs.readFileSync(log, 'utf8')).toBe('Bash\n');
  });
});

/**
 * A project whose `.claude/settings.json` holds hooks in the shapes public
 * examples and Claude Code's hooks guide give them: an inline jq logger, a
 * bash guard under "$CLAUDE_PROJECT_DIR" answering JSON, a node one-liner
 * that asks, an inline python3 file protector that exits 2 without a word,
 * and a PostToolUse formatter fed by `jq | { read …; }`. The project's path
 * holds a space, as many do on a laptop.
 */
const PROTECTOR = `python3 -c "import json, sys; d=json.load(sys.stdin); p=d.get('tool_input',{}).get('file_path',''); sys.exit(2 if any(x in p for x in ['.env','package-lock.json','.git/']) else 0)"`;

function claudeProject(): { project: string; log: string } {
  const project = path.join(tmpDir(), 'my project');
  const hooksDir = path.join(project, '.claude', 'hooks');
  fs.mkdirSync(hooksDir, { recursive: true });
  fs.mkdirSync(path.join(project, 'src'));
  fs.writeFileSync(
    path.join(hooksDir, 'no-rm.sh'),
    `#!/bin/bash
INPUT=$(cat)
COMMAND=$(echo "$INPUT" | jq -r '.tool_input.command // empty')
if echo "$COMMAND" | grep -qE '(^|[;&|]\\s*)rm\\s'; then
  cat <<'JSON'
{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"rm is not allowed here; move files to .trash/ instead"}}
JSON
fi
exit 0
`,
    { mode: 0o755 },
  );
  const settings = {
    permissions: { allow: ['Bash(rm:*)', 'Bash(echo:*)', 'Bash(git push:*)', 'Edit', 'Write', 'Read'] },
    hooks: {
      PreToolUse: [
        {
          matcher: 'Bash',
          hooks: [
            { type: 'command', command: `jq -r '"\\(.tool_input.command) - \\(.tool_input.description // "No description")"' >> "$CLAUDE_PROJECT_DIR"/.claude/bash-command-log.txt` },
            { type: 'command', command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/no-rm.sh', timeout: 10, statusMessage: 'Checking for rm…' },
            {
              type: 'command',
              command: `node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const c=JSON.parse(s).tool_input.command||'';if(/git push.*--force/.test(c))console.log(JSON.stringify({hookSpecificOutput:{hookEventName:'PreToolUse',permissionDecision:'ask',permissionDecisionReason:'a force push needs a person'}}))})"`,
            },
          ],
        },
        {
          matcher: 'Edit|MultiEdit|Write',
          hooks: [
            {
              type: 'command',
              command: PROTECTOR,
            },
          ],
        },
      ],
      PostToolUse: [
        {
          matcher: 'Edit|MultiEdit|Write',
          hooks: [
            {
              type: 'command',
              command: `jq -r '.tool_input.file_path' | { read file_path; if echo "$file_path" | grep -q '\\.ts$'; then node -e "const fs=require('fs');const f=process.argv[1];fs.writeFileSync(f,fs.readFileSync(f,'utf8').replace(/[ \\t]+$/gm,''))" "$file_path"; fi; }`,
            },
          ],
        },
      ],
      Stop: [{ hooks: [{ type: 'command', command: 'echo done' }] }],
    },
  };
  fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify(settings, null, 2));
  return { project, log: path.join(project, '.claude', 'bash-command-log.txt') };
}

async function projectApp(project: string): Promise<TestApp> {
  const loaded = loadConfig({ claudeSettingsPath: path.join(project, '.claude', 'settings.json'), overrides: { workspace: project }, env: {} });
  return makeApp({ workspace: { root: project }, hooks: loaded.config.hooks }, { rules: loaded.rules });
}

describe('a project’s settings.json with hooks written as public examples write them', () => {
  it('the jq logger logs every command; the bash guard’s JSON deny stops `rm` (its reason is what the model gets); other commands run', async () => {
    const { project, log } = claudeProject();
    t = await projectApp(project);
    fs.mkdirSync(path.join(project, 'build'));
    const ok = await run(t, 'Bash', { command: 'echo hello', description: 'Say hello' });
    expect(ok.exec.status).toBe('succeeded');
    expect(ok.text.trim()).toBe('hello');
    expect(ok.messages).toEqual([]);
    const rm = await run(t, 'Bash', { command: 'rm -rf build' });
    expect(rm.exec).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'hook', detail: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/no-rm.sh' } } });
    expect(rm.text).toBe('rm is not allowed here; move files to .trash/ instead');
    expect(fs.existsSync(path.join(project, 'build'))).toBe(true);
    expect(fs.readFileSync(log, 'utf8')).toBe('echo hello - Say hello\nrm -rf build - No description\n');
  });

  it('the node one-liner’s ask beats the allow rule: a force push asks (headless: denied), a plain push is not asked about by it', async () => {
    const { project } = claudeProject();
    t = await projectApp(project);
    const force = await run(t, 'Bash', { command: 'git push --force origin main' });
    expect(force.exec).toMatchObject({ status: 'denied', decision: { reason: { type: 'headless' } } });
    expect(force.chain).toContainEqual(expect.objectContaining({ layer: 'hooks', outcome: 'ask' }));
    const plain = await run(t, 'Bash', { command: 'git push --dry-run origin main' });
    expect(plain.chain).not.toContainEqual(expect.objectContaining({ layer: 'hooks', outcome: 'ask' }));
    expect(plain.exec.decision).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash(git push:*)' } });
  });

  it('the python3 protector (exit 2, no stderr) stops Write of .env and Edit of package-lock.json; the formatter tidies a .ts after Write', async () => {
    const { project } = claudeProject();
    t = await projectApp(project);
    const env = await run(t, 'Write', { file_path: '.env', content: 'TOKEN=x\n' });
    expect(env.exec.status).toBe('denied');
    expect(env.text).toBe(`PreToolUse:Write hook error: [${PROTECTOR}]: No stderr output`);
    expect(fs.existsSync(path.join(project, '.env'))).toBe(false);
    fs.writeFileSync(path.join(project, 'package-lock.json'), '{}\n');
    await run(t, 'Read', { file_path: 'package-lock.json' });
    const lock = await run(t, 'Edit', { file_path: 'package-lock.json', old_string: '{}', new_string: '{"x":1}' });
    expect(lock.exec.status).toBe('denied');
    expect(fs.readFileSync(path.join(project, 'package-lock.json'), 'utf8')).toBe('{}\n');
    const ts = await run(t, 'Write', { file_path: 'src/app.ts', content: 'const a = 1;   \nexport { a };\t\n' });
    expect(ts.exec.status).toBe('succeeded');
    expect(fs.readFileSync(path.join(project, 'src', 'app.ts'), 'utf8')).toBe('const a = 1;\nexport { a };\n');
    // Not a .ts: left as written.
    await run(t, 'Write', { file_path: 'src/notes.md', content: 'x  \n' });
    expect(fs.readFileSync(path.join(project, 'src', 'notes.md'), 'utf8')).toBe('x  \n');
  });
});

describe('exit 2 with JSON on stdout (a pattern public examples use)', () => {
  it('blocks, with stderr as the reason: JSON counts on exit 0 only, as the docs say (Claude Code 2.1.x code would reject `"decision":"deny"` and let the call run)', async () => {
    const dir = tmpDir();
    const guard = bashScript(
      dir,
      'deny-json-exit2.sh',
      `input=$(cat)
command=$(echo "$input" | jq -r '.tool_input.command // ""')
if [[ "$command" =~ "rm -rf" ]]; then
  echo '{"decision": "deny", "reason": "rm -rf commands are blocked for safety"}'
  exit 2
fi
exit 0`,
    );
    t = await makeApp({ permissions: { allow: ['Bash(rm:*)'] }, hooks: pre(guard, 'Bash') });
    fs.mkdirSync(path.join(t.workspace, 'build'));
    const r = await run(t, 'Bash', { command: 'rm -rf build' });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toBe(`PreToolUse:Bash hook error: [${guard}]: No stderr output`);
    expect(fs.existsSync(path.join(t.workspace, 'build'))).toBe(true);
  });
});

describe('de-duplication across settings files', () => {
  it('the same command in the user’s and the project’s settings runs once (Claude Code merges them: the last scope wins)', async () => {
    const home = tmpDir();
    const project = tmpDir();
    const count = path.join(tmpDir(), 'count');
    const command = `cat >/dev/null; echo x >> '${count}'`;
    fs.mkdirSync(path.join(home, '.claude'));
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({ hooks: pre(command, 'Bash') }));
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify({ hooks: pre(command, 'Bash|Read'), permissions: { allow: ['Bash(echo:*)'] } }));
    const loaded = loadConfig({ claudeSettingsPath: [path.join(home, '.claude', 'settings.json'), path.join(project, '.claude', 'settings.json')], overrides: { workspace: project }, env: {} });
    t = await makeApp({ workspace: { root: project }, hooks: loaded.config.hooks }, { rules: loaded.rules });
    expect((await run(t, 'Bash', { command: 'echo hi' })).exec.status).toBe('succeeded');
    expect(fs.readFileSync(count, 'utf8')).toBe('x\n');
  });

  it('`shell` left out is Claude Code’s default, "bash": the same command with and without it is one hook', async () => {
    const dir = tmpDir();
    const count = path.join(dir, 'count');
    const command = `cat >/dev/null; echo x >> '${count}'`;
    t = await makeApp({
      permissions: { allow: ['Bash(echo:*)'] },
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command }] }, { matcher: 'Bash', hooks: [{ type: 'command', command, shell: 'bash' }] }] },
    });
    expect((await run(t, 'Bash', { command: 'echo hi' })).exec.status).toBe('succeeded');
    expect(fs.readFileSync(count, 'utf8')).toBe('x\n');
  });
});

describe('a hook’s allow and the working directories (a deliberate difference)', () => {
  it('does not let a Read outside the working directories through, where Claude Code’s would (its rule check leaves working directories out): it asks, headless denied', async () => {
    const dir = tmpDir();
    const outside = path.join(tmpDir(), 'notes.txt');
    fs.writeFileSync(outside, 'outside\n');
    const allow = bashScript(dir, 'allow.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"reads are fine"}}'`);
    t = await makeApp({ hooks: pre(allow, 'Read') });
    const r = await run(t, 'Read', { file_path: outside });
    expect(r.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(r.chain).toContainEqual(expect.objectContaining({ layer: 'tool', outcome: 'ask' }));
    expect(r.text).not.toContain('outside');
    // Inside, the same hook's allow runs it.
    fs.writeFileSync(path.join(t.workspace, 'in.txt'), 'inside\n');
    expect((await run(t, 'Read', { file_path: path.join(t.workspace, 'in.txt') })).exec.decision).toMatchObject({ behavior: 'allow', reason: { type: 'hook' } });
  });
});

describe('a hook that does not read its stdin', () => {
  it('still blocks with exit 2 when the input is larger than a pipe holds (the unread stdin is no failure of the hook)', async () => {
    const dir = tmpDir();
    const freeze = bashScript(dir, 'freeze.sh', 'echo "writes are frozen for the release" >&2; exit 2');
    t = await makeApp({ permissions: { allow: ['Write'] }, hooks: pre(freeze, 'Write') });
    const file = path.join(t.workspace, 'big.txt');
    const r = await run(t, 'Write', { file_path: file, content: 'x'.repeat(512 * 1024) });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toBe(`PreToolUse:Write hook error: [${freeze}]: writes are frozen for the release`);
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe('PermissionRequest decision.interrupt', () => {
  it('a deny with interrupt: true stops the rest of the batch, as Claude Code aborts the turn; without it the next call runs', async () => {
    const dir = tmpDir();
    const hook = bashScript(
      dir,
      'stop-all.sh',
      `input=$(cat)
cmd=$(echo "$input" | jq -r '.tool_input.command')
case "$cmd" in
  "touch a") echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not a, and stop here","interrupt":true}}}' ;;
  "touch c") echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not c"}}}' ;;
esac`,
    );
    t = await makeApp({ permissions: { allow: ['Bash(touch b)', 'Bash(touch d)'] }, hooks: { PermissionRequest: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook }] }] } });
    const r = await execute(t.app, { session_id: 's', tool_uses: [use('Bash', { command: 'touch a' }), use('Bash', { command: 'touch b' })] });
    expect(r.status).toBe(200);
    expect(r.body.executions.map((e: { status: string }) => e.status)).toEqual(['denied', 'cancelled']);
    expect(textOf(r.body.tool_results[0]!.content)).toBe('not a, and stop here');
    expect(textOf(r.body.tool_results[1]!.content)).toContain(
      "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.",
    );
    expect(fs.existsSync(path.join(t.workspace, 'b'))).toBe(false);
    // The same deny without interrupt leaves the next call alone.
    const r2 = await execute(t.app, { session_id: 's', tool_uses: [use('Bash', { command: 'touch c' }), use('Bash', { command: 'touch d' })] });
    expect(r2.body.executions.map((e: { status: string }) => e.status)).toEqual(['denied', 'succeeded']);
    expect(fs.existsSync(path.join(t.workspace, 'd'))).toBe(true);
  });
});

/**
 * Managed settings (Claude Code's policySettings, `managed-settings.json`)
 * given with --claude-settings beside a project's: their `/` rules are the
 * project's, and their allowManagedHooksOnly, allowManagedPermissionRulesOnly
 * and disableAllHooks hold over the other files, as Claude Code reads them.
 */
describe('managed settings beside a project’s settings', () => {
  const setUp = (managed: Record<string, unknown>, project: Record<string, unknown>, local?: Record<string, unknown>) => {
    const root = tmpDir();
    const policyDir = path.join(root, 'etc', 'claude-code');
    const proj = path.join(root, 'proj');
    fs.mkdirSync(policyDir, { recursive: true });
    fs.mkdirSync(path.join(proj, '.claude'), { recursive: true });
    fs.writeFileSync(path.join(policyDir, 'managed-settings.json'), JSON.stringify(managed));
    fs.writeFileSync(path.join(proj, '.claude', 'settings.json'), JSON.stringify(project));
    if (local) fs.writeFileSync(path.join(proj, '.claude', 'settings.local.json'), JSON.stringify(local));
    const loaded = loadConfig({ claudeSettingsPath: [path.join(policyDir, 'managed-settings.json'), path.join(proj, '.claude', 'settings.json')], overrides: { workspace: proj }, env: {} });
    return { proj, loaded };
  };
  const appFor = (proj: string, loaded: ReturnType<typeof loadConfig>) =>
    makeApp({ workspace: { root: proj }, hooks: loaded.config.hooks, disableAllHooks: loaded.config.disableAllHooks, permissions: { defaultMode: loaded.config.permissions.defaultMode } }, { rules: loaded.rules });

  it('a managed `/` rule is relative to the project, not to the managed file’s directory: Edit(/.github/workflows/**) denies the project’s workflows', async () => {
    const { proj, loaded } = setUp({ permissions: { deny: ['Edit(/.github/workflows/**)'] } }, { permissions: { allow: ['Write'] } });
    t = await appFor(proj, loaded);
    const ci = path.join(proj, '.github', 'workflows', 'ci.yml');
    const r = await run(t, 'Write', { file_path: ci, content: 'on: push\n' });
    // Refused at validation, as Claude Code's Write refuses a file an Edit deny rule covers.
    expect(r.text).toBe('<tool_use_error>File is in a directory that is denied by your permission settings.</tool_use_error>');
    expect(fs.existsSync(ci)).toBe(false);
    expect((await run(t, 'Write', { file_path: path.join(proj, 'README.md'), content: 'x\n' })).exec.status).toBe('succeeded');
  });

  it('allowManagedPermissionRulesOnly: the project’s allow rules are ignored (said at start), the managed ones hold; the project’s deny rules still deny', async () => {
    const { proj, loaded } = setUp(
      { allowManagedPermissionRulesOnly: true, permissions: { allow: ['Bash(echo:*)', 'Bash(rm:*)'] } },
      { permissions: { allow: ['Bash(touch:*)'], deny: ['Bash(rm -rf:*)'] } },
    );
    expect(loaded.warnings.join('\n')).toContain('allowManagedPermissionRulesOnly');
    t = await appFor(proj, loaded);
    expect((await run(t, 'Bash', { command: 'echo ok' })).exec.status).toBe('succeeded');
    const touch = await run(t, 'Bash', { command: 'touch made' });
    expect(touch.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    expect(fs.existsSync(path.join(proj, 'made'))).toBe(false);
    // Claude Code would drop this deny too and let the managed allow run it; here a deny is never weakened.
    fs.mkdirSync(path.join(proj, 'build'));
    const rm = await run(t, 'Bash', { command: 'rm -rf build' });
    expect(rm.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Bash(rm -rf:*)' } });
    expect(fs.existsSync(path.join(proj, 'build'))).toBe(true);
  });

  it('allowManagedHooksOnly: the project’s hooks do not run, the managed ones do; a project’s disableAllHooks cannot stop managed hooks', async () => {
    const marks = tmpDir();
    const hook = (name: string) => ({ PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: `cat >/dev/null; touch '${path.join(marks, name)}'` }] }] });
    const a = setUp({ allowManagedHooksOnly: true, hooks: hook('managed'), permissions: { allow: ['Bash(echo:*)'] } }, { hooks: hook('project') });
    t = await appFor(a.proj, a.loaded);
    await run(t, 'Bash', { command: 'echo 1' });
    expect(fs.existsSync(path.join(marks, 'managed'))).toBe(true);
    expect(fs.existsSync(path.join(marks, 'project'))).toBe(false);
    await t.close();
    fs.rmSync(path.join(marks, 'managed'));
    const b = setUp({ hooks: hook('managed'), permissions: { allow: ['Bash(echo:*)'] } }, { hooks: hook('project') }, { disableAllHooks: true });
    t = await appFor(b.proj, b.loaded);
    await run(t, 'Bash', { command: 'echo 2' });
    expect(fs.existsSync(path.join(marks, 'managed'))).toBe(true);
    expect(fs.existsSync(path.join(marks, 'project'))).toBe(false);
  });

  it('a project file given after the managed settings does not change their defaultMode; a managed disableAllHooks stops every hook', async () => {
    const { loaded } = setUp({ permissions: { defaultMode: 'plan' }, disableAllHooks: true }, { permissions: { defaultMode: 'acceptEdits' }, hooks: pre('true') });
    expect(loaded.config.permissions.defaultMode).toBe('plan');
    expect(loaded.config.disableAllHooks).toBe(true);
  });
});

describe('the user’s settings (~/.claude/settings.json, or $CLAUDE_CONFIG_DIR’s)', () => {
  it('a `/` rule is relative to the settings’ own directory, as Claude Code roots userSettings there; a deny or ask rule also keeps the home directory it covered before', async () => {
    const home = tmpDir();
    const config = path.join(home, '.claude');
    const project = tmpDir();
    fs.mkdirSync(path.join(config, 'commands'), { recursive: true });
    fs.mkdirSync(path.join(config, 'secrets'), { recursive: true });
    fs.mkdirSync(path.join(home, 'secrets'), { recursive: true });
    fs.mkdirSync(path.join(home, 'commands'), { recursive: true });
    fs.writeFileSync(path.join(config, 'commands', 'review.md'), 'review\n');
    fs.writeFileSync(path.join(home, 'commands', 'other.md'), 'other\n');
    fs.writeFileSync(path.join(config, 'secrets', 'k'), 'K1\n');
    fs.writeFileSync(path.join(home, 'secrets', 'k'), 'K2\n');
    fs.writeFileSync(path.join(config, 'settings.json'), JSON.stringify({ permissions: { allow: ['Read(/commands/**)', 'Read(/secrets/**)'], deny: ['Read(/secrets/**)'] } }));
    const loaded = loadConfig({ claudeSettingsPath: path.join(config, 'settings.json'), overrides: { workspace: project }, env: { CLAUDE_CONFIG_DIR: config } });
    expect(loaded.rules.every((r) => r.source === 'userSettings')).toBe(true);
    // The user's settings are meant for every workspace: no word about another project.
    expect(loaded.warnings).toEqual([]);
    t = await makeApp({ workspace: { root: project } }, { rules: loaded.rules });
    const allowed = await run(t, 'Read', { file_path: path.join(config, 'commands', 'review.md') });
    expect(allowed.exec.decision).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Read(/commands/**)' } });
    // ~/commands is not what the rule names in Claude Code: outside the workspace, it asks (headless: denied).
    const other = await run(t, 'Read', { file_path: path.join(home, 'commands', 'other.md') });
    expect(other.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'headless' } });
    for (const k of [path.join(config, 'secrets', 'k'), path.join(home, 'secrets', 'k')]) {
      const r = await run(t, 'Read', { file_path: k });
      expect(r.exec.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Read(/secrets/**)' } });
      expect(r.text).not.toMatch(/K[12]/);
    }
  });
});

describe('a hook whose session directory is gone', () => {
  it('runs in the project directory instead, as Claude Code falls back to its original cwd, and still blocks (it used to fail to start, letting the call through)', async () => {
    const dir = tmpDir();
    const guard = bashScript(
      dir,
      'no-rm-rf.sh',
      `cmd=$(jq -r '.tool_input.command')
case "$cmd" in *"rm -rf"*) echo "no rm -rf (ran in $(pwd))" >&2; exit 2 ;; esac
exit 0`,
    );
    t = await makeApp({ permissions: { allow: ['Bash'] }, hooks: pre(guard, 'Bash') });
    fs.mkdirSync(path.join(t.workspace, 'important'));
    expect((await run(t, 'Bash', { command: 'mkdir d && cd d' })).exec.status).toBe('succeeded');
    // The shell's directory is removed under it: the session keeps a directory that no longer exists.
    expect((await run(t, 'Bash', { command: 'rmdir ../d' })).exec.status).toBe('succeeded');
    const r = await run(t, 'Bash', { command: 'rm -rf important' });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toBe(`PreToolUse:Bash hook error: [${guard}]: no rm -rf (ran in ${t.workspace})`);
    expect(fs.existsSync(path.join(t.workspace, 'important'))).toBe(true);
  });
});

describe('pitfall 10: after the call', () => {
  it('a PostToolUse exit 1 never blocks nor reaches the model (a message for people); exit 2 reaches the model but the file stays written', async () => {
    const dir = tmpDir();
    const warn = bashScript(dir, 'warn.sh', 'cat >/dev/null; echo "lint: 3 warnings" >&2; exit 1');
    const block = bashScript(dir, 'block.sh', 'cat >/dev/null; echo "lint: 1 error" >&2; exit 2');
    t = await makeApp({ permissions: { allow: ['Write'] }, hooks: { PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: warn }] }] } });
    const a = path.join(t.workspace, 'a.ts');
    const w = await run(t, 'Write', { file_path: a, content: 'x\n' });
    expect(w.exec.status).toBe('succeeded');
    expect(w.text).not.toContain('lint');
    expect(w.messages).toEqual([expect.objectContaining({ event: 'PostToolUse', kind: 'non_blocking_error', exitCode: 1, text: 'Failed with non-blocking status code: lint: 3 warnings' })]);
    await t.close();
    t = await makeApp({ permissions: { allow: ['Write'] }, hooks: { PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: block }] }] } });
    const b = path.join(t.workspace, 'b.ts');
    const x = await run(t, 'Write', { file_path: b, content: 'y\n' });
    expect(x.exec.status).toBe('succeeded');
    expect(x.text).toContain(`PostToolUse:Write hook blocking error from command: "${block}": [${block}]: lint: 1 error`);
    expect(fs.readFileSync(b, 'utf8')).toBe('y\n');
  });
});

describe('continue: false in Claude Code’s words', () => {
  it('before the call: "Execution stopped by PreToolUse hook" (with ": <stopReason>" when given); after it: "<Event>:<Tool> hook stopped continuation: …" in a system reminder, as a block is', async () => {
    const dir = tmpDir();
    const bare = printing(dir, 'bare', { continue: false });
    const calls: unknown[] = [];
    t = await makeApp({ hooks: pre(bare, 'Probe') }, { extraTools: [probeTool({ permission: 'allow', calls })] });
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('denied');
    expect(r.text).toBe('Execution stopped by PreToolUse hook');
    expect(calls).toEqual([]);
    await t.close();
    t = await makeApp({ hooks: { PostToolUse: [{ matcher: 'Probe', hooks: [{ type: 'command', command: bare }] }] } }, { extraTools: [probeTool({ permission: 'allow' })] });
    expect((await run(t, 'Probe', { value: 'b' })).text).toBe('value=b\n\n<system-reminder>\nPostToolUse:Probe hook stopped continuation: Execution stopped by PostToolUse hook\n</system-reminder>');
    await t.close();
    // A block after the call without a reason: Claude Code's "Blocked by hook", named by its command.
    const block = printing(dir, 'block', { decision: 'block' });
    t = await makeApp({ hooks: { PostToolUse: [{ matcher: 'Probe', hooks: [{ type: 'command', command: block }] }] } }, { extraTools: [probeTool({ permission: 'allow' })] });
    expect((await run(t, 'Probe', { value: 'c' })).text).toBe(`value=c\n\n<system-reminder>\nPostToolUse:Probe hook blocking error from command: "${block}": Blocked by hook\n</system-reminder>`);
  });
});

describe('additionalContext as the model reads it', () => {
  const reminder = (event: string, tool: string, text: string) => `<system-reminder>\n${event}:${tool} hook additional context: ${text}\n</system-reminder>`;

  it('each hook’s context comes in Claude Code’s system reminder, named "<Event>:<Tool>" (PreToolUse, PostToolUse, PostToolUseFailure)', async () => {
    const dir = tmpDir();
    const preCtx = printing(dir, 'pre', { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'USE pnpm NOT npm' } });
    t = await makeApp({ hooks: pre(preCtx, 'Probe') }, { extraTools: [probeTool({ permission: 'allow' })] });
    expect((await run(t, 'Probe', { value: 'a' })).text).toBe(`value=a\n\n${reminder('PreToolUse', 'Probe', 'USE pnpm NOT npm')}`);
    await t.close();
    const postCtx = printing(dir, 'post', { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'formatted by prettier' } });
    t = await makeApp({ hooks: { PostToolUse: [{ matcher: 'Probe', hooks: [{ type: 'command', command: postCtx }] }] } }, { extraTools: [probeTool({ permission: 'allow' })] });
    expect((await run(t, 'Probe', { value: 'b' })).text).toBe(`value=b\n\n${reminder('PostToolUse', 'Probe', 'formatted by prettier')}`);
    await t.close();
    const failCtx = printing(dir, 'fail', { hookSpecificOutput: { hookEventName: 'PostToolUseFailure', additionalContext: 'the tests need a database' } });
    t = await makeApp({ permissions: { allow: ['Bash(exit:*)'] }, hooks: { PostToolUseFailure: [{ matcher: 'Bash', hooks: [{ type: 'command', command: failCtx }] }] } });
    const f = await run(t, 'Bash', { command: 'exit 3' });
    expect(f.exec.status).toBe('failed');
    expect(f.text).toBe(`Exit code 3\n\n${reminder('PostToolUseFailure', 'Bash', 'the tests need a database')}`);
  });
});

describe('permissionDecision "defer"', () => {
  it('is no decision of the hook’s own: no error, the normal permission flow decides, its additionalContext still reaches the model, its updatedInput goes with it', async () => {
    const dir = tmpDir();
    const defer = printing(dir, 'defer', {
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'defer', updatedInput: { value: 'rewritten' }, additionalContext: 'deferred by policy' },
    });
    const calls: unknown[] = [];
    t = await makeApp({ permissions: { allow: ['Probe'] }, hooks: pre(defer, 'Probe') }, { extraTools: [probeTool({ calls })] });
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec).toMatchObject({ status: 'succeeded', decision: { reason: { type: 'rule' } } });
    expect(r.messages.filter((m) => m.kind === 'non_blocking_error')).toEqual([]);
    expect(calls).toEqual([{ value: 'a' }]);
    expect(r.text).toBe('value=a\n\n<system-reminder>\nPreToolUse:Probe hook additional context: deferred by policy\n</system-reminder>');
  });

  it('outranks another hook’s allow (deny > defer > ask > allow): the call goes to the normal flow, which asks, and headless that is a denial', async () => {
    const dir = tmpDir();
    const defer = printing(dir, 'defer', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'defer' } });
    const allow = printing(dir, 'allow', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } });
    const calls: unknown[] = [];
    t = await makeApp(
      { hooks: { PreToolUse: [{ matcher: 'Probe', hooks: [{ type: 'command', command: defer }, { type: 'command', command: allow }] }] } },
      { extraTools: [probeTool({ calls })] },
    );
    const r = await run(t, 'Probe', { value: 'a' });
    expect(r.exec.status).toBe('denied');
    expect(r.exec.decision?.reason.type).not.toBe('hook');
    expect(calls).toEqual([]);
  });
});
