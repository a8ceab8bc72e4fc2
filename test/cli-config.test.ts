/**
 * The command line's contract: usage, help, exit codes, and configuration
 * errors reported in one line naming the field (exit 2), with unknown fields
 * warned about by every command that loads the configuration.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { unknownKeys, unknownNestedKeys } from '../src/config/load.js';
import { Config, UNRUN_HOOK_TYPES } from '../src/config/schema.js';
import { cleanupTmp, tmpDir } from './helpers.js';
import { BIN, ROOT, cleanEnv, cli, runBin, serveBin } from './helpers-cli.js';

afterAll(cleanupTmp);

function configFile(content: unknown): string {
  const dir = tmpDir('toolexec-cli-config-');
  fs.mkdirSync(path.join(dir, 'ws'));
  const file = path.join(dir, 'config.json');
  fs.writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('the binary', () => {
  it('is dist/cli.js with a shebang and an executable mode, and runs as a program', async () => {
    expect(fs.readFileSync(BIN, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(fs.statSync(BIN).mode & 0o111).toBe(0o111);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; version: string };
    expect(pkg.bin.toolexec).toBe('dist/cli.js');
    // Executed directly (through the shebang), not through node.
    const r = await runBin(['--version'], { command: [BIN] });
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it('runs as `npx toolexec` from the checkout', async () => {
    const r = await runBin(['--no-install', 'toolexec', 'tools', '--help'], { command: ['npx'] });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('usage: toolexec tools');
  });

  it('names the option a JSON file given as an argument was meant for', async () => {
    const hint = (cmd: string, arg: string, option: string) =>
      `toolexec: ${cmd}: unexpected argument "${arg}": a file is given with an option, here ${option} ${arg} (see: toolexec ${cmd} --help)\n`;
    expect(await cli(['serve', 'toolexec.json'])).toMatchObject({ code: 2, stderr: hint('serve', 'toolexec.json', '--config') });
    expect(await cli(['tools', '.claude/settings.json'])).toMatchObject({ code: 2, stderr: hint('tools', '.claude/settings.json', '--claude-settings') });
    expect(await cli(['serve', '.mcp.json'])).toMatchObject({ code: 2, stderr: hint('serve', '.mcp.json', '--mcp-config') });
    // Not a file, or a command that takes no configuration: the plain message.
    expect((await cli(['serve', 'now'])).stderr).toBe('toolexec: serve: unexpected argument "now" (see: toolexec serve --help)\n');
    expect((await cli(['health', 'x.json'])).stderr).toBe('toolexec: health: unexpected argument "x.json" (see: toolexec health --help)\n');
  });

  it('exits 2 with the usage for no command and for an unknown one', async () => {
    const none = await runBin([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('usage: toolexec <command>');
    const unknown = await runBin(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  it('exits 2 naming an unknown option, and 2 for a malformed value', async () => {
    const r = await runBin(['tools', '--colour']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^toolexec: tools: Unknown option '--colour'.*toolexec tools --help/);
    const port = await runBin(['serve', '--port', 'eighty']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port: expected an integer from 0 to 65535, got "eighty"');
  });
});

describe('help', () => {
  it.each([
    ['serve', '--data-dir DIR'],
    ['tools', '--include-deferred'],
    ['check', 'TOOL [INPUT]'],
    ['exec', '--session ID'],
    ['audit', '--follow'],
    ['approve', '--remember SCOPE'],
    ['health', '--ready'],
  ])('`%s --help` prints its options and exits 0', async (command, option) => {
    const r = await cli([command, '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`usage: toolexec ${command}`);
    expect(r.stdout).toContain(option);
    expect(r.stderr).toBe('');
  });

  it('`--help` lists every command', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['serve', 'tools', 'check', 'exec', 'audit', 'approve', 'health']) expect(r.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
  });
});

describe('configuration errors', () => {
  it.each([
    [{ server: { port: '80' } }, 'server.port: expected number, received string'],
    [{ server: { port: 70000 } }, 'server.port: expected number to be <=65535'],
    [{ permissions: { defaultMode: 'yolo' } }, 'permissions.defaultMode: expected one of "default"|"acceptEdits"|"plan"|"dontAsk"|"bypassPermissions"|"auto", got "yolo"'],
    [{ hooks: { PreToolUse: [{ hooks: [{ type: 'comand', command: 'x' }] }] } }, `hooks.PreToolUse[0].hooks[0].type: expected 'command' | 'http' | 'prompt' | 'agent' | 'mcp_tool', got "comand"`],
    [{ grep: { engine: 'ripgrep' } }, 'grep.engine: expected one of "auto"|"rg"|"js", got "ripgrep"'],
    [{ server: { tokens: [{ name: 'ci', token: 'short' }] } }, 'server.tokens[0].token: a token must be at least 16 characters'],
    [{ server: { tokens: [{ token: 'a'.repeat(20) }] } }, 'server.tokens[0].name: expected string, but it is missing'],
    [{ mcpServers: { docs: { type: 'http' } } }, 'mcpServers.docs: matches none of the accepted shapes (type: expected "stdio"; or url: expected string, but it is missing)'],
    [{ classifier: { url: 'not a url' } }, 'classifier.url: expected a URL'],
    [{ mcpServers: { docs: { type: 'http', url: 'not a url' } } }, 'mcpServers.docs.url: expected a URL'],
    [{ permissions: { defaultMode: 'bypassPermissions' } }, 'permissions.defaultMode: "bypassPermissions" needs permissions.allowBypass: true'],
    ['{"server": {"port": 1,}}', 'is not valid JSON'],
    ['[1, 2]', '(root): expected a JSON object'],
  ])('%j is reported in one line naming the field, with exit 2', async (content, expected) => {
    const file = configFile(content);
    for (const command of ['tools', 'check', 'serve']) {
      const r = await cli(command === 'check' ? [command, '--config', file, 'Read', '{}'] : [command, '--config', file]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      const line = `toolexec: invalid configuration: ${file}: ${expected}`;
      // The JSON parser's own words follow "is not valid JSON"; every other message is exact.
      if (expected === 'is not valid JSON') expect(r.stderr.startsWith(`${line} (`)).toBe(true);
      else expect(r.stderr).toBe(`${line}\n`);
      expect(r.stderr.endsWith('\n')).toBe(true);
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  it('prints the unknown fields it met before the error: a typo is often its cause', async () => {
    const file = configFile({ server: { prot: 8080 }, permissions: { defaultMode: 'acceptEdit' } });
    const r = await cli(['serve', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `toolexec: warning: ${file}: unknown field "server.prot" is ignored`,
      `toolexec: invalid configuration: ${file}: permissions.defaultMode: expected one of "default"|"acceptEdits"|"plan"|"dontAsk"|"bypassPermissions"|"auto", got "acceptEdit"`,
    ]);
  });

  it('reports a file that cannot be read, from the option or from TOOLEXEC_CONFIG', async () => {
    const missing = path.join(tmpDir(), 'nope.json');
    const r = await cli(['tools', '--config', missing]);
    expect(r).toMatchObject({ code: 2, stderr: `toolexec: invalid configuration: ${missing}: cannot be read (ENOENT)\n` });
    const env = await cli(['tools'], { env: cleanEnv({ TOOLEXEC_CONFIG: missing }) });
    expect(env).toMatchObject({ code: 2, stderr: `toolexec: invalid configuration: ${missing}: cannot be read (ENOENT)\n` });
  });

  it('reports a bad Claude Code settings file and a bad .mcp.json by file and field', async () => {
    const dir = tmpDir();
    const settings = path.join(dir, 'settings.json');
    fs.writeFileSync(settings, JSON.stringify({ permissions: { allow: 'Read' } }));
    const r = await cli(['tools', '--claude-settings', settings, '--workspace', dir]);
    expect(r).toMatchObject({ code: 2, stderr: `toolexec: invalid configuration: ${settings}: permissions.allow: expected array, received string\n` });
    const mcp = path.join(dir, '.mcp.json');
    fs.writeFileSync(mcp, JSON.stringify({ mcpServers: { a: { command: 7 } } }));
    const m = await cli(['tools', '--mcp-config', mcp, '--workspace', dir]);
    expect(m.code).toBe(2);
    expect(m.stderr).toMatch(new RegExp(`^toolexec: invalid configuration: ${mcp.replace(/[.]/g, '\\.')}: mcpServers\\.a: matches none of the accepted shapes \\(command: expected string, received number`));
  });

  it('a .claude/settings.json brings its settings.local.json, as in Claude Code, and --claude-settings repeats', async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, '.claude'));
    const settings = path.join(dir, '.claude', 'settings.json');
    fs.writeFileSync(settings, JSON.stringify({ permissions: { allow: ['Bash(touch:*)', 'Bash(mkdir:*)'] } }));
    fs.writeFileSync(path.join(dir, '.claude', 'settings.local.json'), JSON.stringify({ permissions: { deny: ['Bash(touch:*)'] } }));
    const other = path.join(tmpDir(), 'team.json');
    fs.writeFileSync(other, JSON.stringify({ permissions: { ask: ['Bash(mkdir:*)'] } }));
    const check = async (command: string, ...files: string[]) => {
      const r = await cli(['check', ...files.flatMap((f) => ['--claude-settings', f]), '--workspace', dir, '--json', 'Bash', JSON.stringify({ command })]);
      expect(r.code).toBe(0);
      return JSON.parse(r.stdout) as { behavior: string; reason: { type: string; detail: string } };
    };
    // The developer's local deny holds over the project's allow.
    expect(await check('touch x', settings)).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'Bash(touch:*)' } });
    expect(await check('mkdir y', settings)).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'Bash(mkdir:*)' } });
    // A second file adds its rules; the first file's stay.
    expect(await check('mkdir y', settings, other)).toMatchObject({ behavior: 'ask', reason: { type: 'rule', detail: 'Bash(mkdir:*)' } });
    expect(await check('touch x', settings, other)).toMatchObject({ behavior: 'deny' });
  });

  it("says which of a Claude Code settings file's session settings are not applied (env, sandbox), and honours disabledMcpjsonServers", async () => {
    const dir = tmpDir();
    fs.mkdirSync(path.join(dir, '.claude'));
    const settings = path.join(dir, '.claude', 'settings.json');
    fs.writeFileSync(settings, JSON.stringify({ env: { NODE_ENV: 'test', API_BASE: 'x' }, sandbox: { enabled: true }, model: 'opus', includeCoAuthoredBy: false }));
    const local = path.join(dir, '.claude', 'settings.local.json');
    fs.writeFileSync(local, JSON.stringify({ disabledMcpjsonServers: ['off'] }));
    const mcp = path.join(dir, '.mcp.json');
    fs.writeFileSync(mcp, JSON.stringify({ mcpServers: { off: { command: 'true' }, on: { command: 'true' } } }));
    const r = await cli(['tools', '--claude-settings', settings, '--mcp-config', mcp, '--workspace', dir, '--no-mcp', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `toolexec: warning: ${settings}: env (NODE_ENV, API_BASE) is not applied: Bash commands, hooks and MCP servers get the environment toolexec was started with; set the variables there`,
      `toolexec: warning: ${settings}: sandbox.enabled is Claude Code's switch and does not sandbox toolexec's Bash; set bash.sandbox.mode ("auto" or "bubblewrap") in toolexec's configuration`,
      // The server the developer rejected is not started.
      'toolexec: warning: MCP servers not connected (--no-mcp): on',
    ]);
    // With toolexec's own sandbox on, Claude Code's switch has its counterpart: nothing to say about it.
    const file = path.join(dir, 'toolexec.json');
    fs.writeFileSync(file, JSON.stringify({ bash: { sandbox: { mode: 'auto' } } }));
    const sandboxed = await cli(['tools', '--config', file, '--claude-settings', settings, '--workspace', dir, '--json']);
    expect(sandboxed.stderr).not.toContain('sandbox.enabled');
  });

  it('refuses a workspace that is not a directory (exit 2)', async () => {
    const dir = tmpDir();
    const r = await cli(['tools', '--workspace', path.join(dir, 'missing')]);
    expect(r).toMatchObject({ code: 2, stderr: `toolexec: invalid configuration: workspace.root: ${path.join(dir, 'missing')} is not a directory\n` });
  });

  it('warns on stderr about unknown fields for every command that loads the configuration, and goes on', async () => {
    const file = configFile({ server: { hots: '0.0.0.0' }, permisions: {}, workspace: { root: './ws' } });
    const warning = [
      `toolexec: warning: ${file}: unknown field "server.hots" is ignored`,
      `toolexec: warning: ${file}: unknown field "permisions" is ignored`,
    ];
    const tools = await cli(['tools', '--config', file, '--json']);
    expect(tools.code).toBe(0);
    expect(tools.stderr.trimEnd().split('\n')).toEqual(warning);
    expect(JSON.parse(tools.stdout)).toHaveProperty('tools');
    const check = await cli(['check', '--config', file, 'Read', '{"file_path":"x"}']);
    expect(check.code).toBe(0);
    expect(check.stderr.trimEnd().split('\n')).toEqual(warning);
    // serve warns before anything else, here before it refuses an unsafe bind.
    const served = await runBin(['serve', '--config', file, '--host', '0.0.0.0', '--port', '0'], { env: cleanEnv() });
    expect(served.code).toBe(2);
    expect(served.stderr).toBe(`${warning.join('\n')}\ntoolexec: refusing to listen on 0.0.0.0 without tokens: set server.tokens in the configuration or TOOLEXEC_TOKEN, or listen on 127.0.0.1\n`);
  });

  it('warns about typos inside MCP server entries and hook groups and handlers too', async () => {
    const file = configFile({
      workspace: { root: './ws' },
      mcpServers: {
        local: { command: 'true', alwayLoad: true },
        remote: { type: 'http', url: 'http://127.0.0.1:1/mcp', requird: true },
      },
      hooks: { PreToolUse: [{ matcher: 'Bash', matchr: 'x', hooks: [{ type: 'command', command: 'true', timout: 5 }, { type: 'http', url: 'http://127.0.0.1:1/h', header: {} }] }] },
    });
    const r = await cli(['tools', '--config', file, '--no-mcp', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `toolexec: warning: ${file}: unknown field "mcpServers.local.alwayLoad" is ignored`,
      `toolexec: warning: ${file}: unknown field "mcpServers.remote.requird" is ignored`,
      `toolexec: warning: ${file}: unknown field "hooks.PreToolUse[0].matchr" is ignored`,
      `toolexec: warning: ${file}: unknown field "hooks.PreToolUse[0].hooks[0].timout" is ignored`,
      `toolexec: warning: ${file}: unknown field "hooks.PreToolUse[0].hooks[1].header" is ignored`,
      'toolexec: warning: MCP servers not connected (--no-mcp): local, remote',
    ]);
  });

  it('rejects --url together with configuration options (exit 2)', async () => {
    const file = configFile({});
    const r = await cli(['check', '--url', 'http://127.0.0.1:1', '--config', file, 'Read']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--url asks a running service, which has its own configuration');
  });

  it('rejects a tool input that is not a JSON object (exit 2)', async () => {
    const file = configFile({ workspace: { root: './ws' } });
    const bad = await cli(['check', '--config', file, 'Read', '{file_path:1}']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^toolexec: check: the input is not valid JSON: /);
    const arr = await cli(['check', '--config', file, 'Read', '[1]']);
    expect(arr.code).toBe(2);
    expect(arr.stderr).toContain('the input must be a JSON object');
    const stdin = await cli(['check', '--config', file, 'Read', '-'], { stdin: '{"file_path":"a.txt"}' });
    expect(stdin.code).toBe(0);
    expect(stdin.stdout).toContain('Read {"file_path":"a.txt"}');
  });
});

describe('what the configuration runs that cannot run', () => {
  /** A workspace with hook scripts: one executable, one not, one for an interpreter. */
  function workspace(): string {
    const ws = tmpDir('toolexec-cli-preflight-');
    fs.mkdirSync(path.join(ws, 'hooks'));
    for (const [name, mode] of [['ok.sh', 0o755], ['noexec.sh', 0o644], ['lib.sh', 0o644]] as const) {
      fs.writeFileSync(path.join(ws, 'hooks', name), '#!/bin/sh\nexit 2\n');
      fs.chmodSync(path.join(ws, 'hooks', name), mode);
    }
    return ws;
  }

  it('warns, naming the file and the fix, about a hook whose script is missing or not executable or whose program is not on PATH, and an MCP command that is not there', async () => {
    const ws = workspace();
    const file = configFile({
      workspace: { root: ws },
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/hooks/noexec.sh' }, { type: 'command', command: './hooks/gone.sh --strict' }] },
          { matcher: 'Edit|Write', hooks: [{ type: 'command', command: 'sh "$CLAUDE_PROJECT_DIR/hooks/missing.sh"' }, { type: 'command', command: 'toolexec-no-such-program --check' }] },
        ],
        PostToolUse: [{ hooks: [{ type: 'command', command: 'FOO=1 ./hooks' }] }],
      },
      mcpServers: { gone: { command: 'toolexec-no-such-server' }, local: { command: './hooks/noexec.sh' } },
    });
    const r = await cli(['tools', '--config', file, '--no-mcp', '--json']);
    expect(r.code).toBe(0);
    const goes = 'every call it matches goes on without it (a non-blocking hook error), so it blocks nothing';
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `toolexec: warning: hooks: a PreToolUse hook (matcher "Bash") cannot run: ${ws}/hooks/noexec.sh is not executable (chmod +x ${ws}/hooks/noexec.sh); ${goes}`,
      `toolexec: warning: hooks: a PreToolUse hook (matcher "Bash") cannot run: ${ws}/hooks/gone.sh does not exist; ${goes}`,
      `toolexec: warning: hooks: a PreToolUse hook (matcher "Edit|Write") cannot run: its script ${ws}/hooks/missing.sh does not exist; ${goes}`,
      `toolexec: warning: hooks: a PreToolUse hook (matcher "Edit|Write") cannot run: "toolexec-no-such-program" is not on PATH; ${goes}`,
      `toolexec: warning: hooks: a PostToolUse hook cannot run: ${ws}/hooks is a directory; ${goes}`,
      'toolexec: warning: mcpServers.gone: the command cannot start: "toolexec-no-such-server" is not on PATH; its tools will be missing until it does',
      `toolexec: warning: mcpServers.local: the command cannot start: ${ws}/hooks/noexec.sh is not executable (chmod +x ${ws}/hooks/noexec.sh); its tools will be missing until it does`,
      'toolexec: warning: MCP servers not connected (--no-mcp): gone, local',
    ]);
  });

  it('says nothing of hooks and servers that can run, nor of lines it cannot judge without running them', async () => {
    const ws = workspace();
    const file = configFile({
      workspace: { root: ws },
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash',
            hooks: [
              { type: 'command', command: '"$CLAUDE_PROJECT_DIR"/hooks/ok.sh' },
              { type: 'command', command: './hooks/ok.sh' },
              { type: 'command', command: 'sh ./hooks/lib.sh' },
              { type: 'command', command: 'sh -c "exit 0"' },
              { type: 'command', command: 'true' },
              { type: 'command', command: 'cd hooks && ./anything.sh' },
              { type: 'command', command: '$MY_HOOK --flag' },
              { type: 'command', command: 'time ./hooks/ok.sh' },
              { type: 'command', command: '[ -x ./hooks/ok.sh ] && ./hooks/ok.sh' },
            ],
          },
        ],
      },
      mcpServers: { here: { command: 'node', args: ['server.js'] } },
    });
    const r = await cli(['tools', '--config', file, '--no-mcp', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('toolexec: warning: MCP servers not connected (--no-mcp): here\n');
    // Shell keywords and builtins are never looked up on PATH, whatever PATH holds.
    const words = configFile({ workspace: { root: ws }, hooks: { PreToolUse: [{ hooks: ['time ./hooks/ok.sh', 'let n=1', 'exec ./hooks/ok.sh'].map((command) => ({ type: 'command', command })) }] } });
    expect((await cli(['tools', '--config', words, '--json'], { env: cleanEnv({ PATH: path.join(ws, 'nothing-here') }) })).stderr).toBe('');
    // disableAllHooks: no hook runs, so none is judged.
    const off = configFile({ workspace: { root: ws }, disableAllHooks: true, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: './hooks/noexec.sh' }] }] } });
    expect((await cli(['tools', '--config', off, '--json'])).stderr).toBe('');
  });

  it('warns about a hook matcher that is not a valid regular expression (its hooks never run) and a rule naming no tool, in check and in serve', async () => {
    const ws = workspace();
    const file = configFile({
      workspace: { root: ws },
      hooks: { PreToolUse: [{ matcher: 'Edit|Write(', hooks: [{ type: 'command', command: 'true' }] }, { matcher: 'mcp__.*', hooks: [{ type: 'command', command: 'true' }] }] },
      permissions: { deny: ['Reed(./.env)', 'KillShell', 'mcp__later__tool'], allow: ['Bash(npm run test:*'] },
    });
    const tools = 'Bash, Edit, Glob, Grep, NotebookEdit, Read, TaskOutput, TaskStop, TodoWrite, ToolSearch, WebFetch, Write';
    const expected = [
      'toolexec: warning: hooks: the PreToolUse matcher "Edit|Write(" is not a valid regular expression (Invalid regular expression: /Edit|Write(/: Unterminated group), so its hooks never run',
      'toolexec: warning: permission rule "Bash(npm run test:*" (config) is ignored: "Bash(npm run test:*" opens "(" without a closing ")" at the end',
      `toolexec: warning: permission rule "Reed(./.env)" (config) names no tool of this service (a typo, or a Claude Code tool toolexec does not provide), so it matches nothing; the tools are ${tools} and mcp__server__tool`,
    ];
    const r = await cli(['check', '--config', file, 'Read', '{"file_path":"a"}']);
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n')).toEqual(expected);
    // serve says the same, before its summary.
    const served = await serveBin(['--config', file, '--data-dir', tmpDir()]);
    try {
      await served.proc.waitFor(/API docs/);
      expect(served.proc.stderr().split('\n').slice(0, 3)).toEqual(expected);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });

  it('warns about an MCP rule that can match nothing whatever connects: a raw server name, a server name holding __, content', async () => {
    const ws = workspace();
    const file = configFile({
      workspace: { root: ws },
      mcpServers: { 'github.com': { command: 'true' }, 'a__b': { command: 'true' }, gh: { command: 'true' } },
      permissions: { deny: ['mcp__github.com__delete_repo', 'mcp__a__b', 'mcp__gh__run(rm -rf *)', 'mcp__later__tool', 'mcp__github_com__delete_repo', 'mcp__gh'] },
    });
    const r = await cli(['check', '--no-mcp', '--config', file, 'Read', '{"file_path":"a"}']);
    expect(r.code).toBe(0);
    const warnings = r.stderr.trimEnd().split('\n').filter((l) => l.includes('permission rule'));
    expect(warnings).toEqual([
      'toolexec: warning: permission rule "mcp__github.com__delete_repo" (config) names the MCP server "github.com" as written, but its tools are named mcp__github_com__…, so it matches nothing; write mcp__github_com__delete_repo',
      'toolexec: warning: permission rule "mcp__a__b" (config) is meant for every tool of the MCP server "a__b", but a server name holding "__" cannot be matched by a server-wide rule (mcp__a__b reads as the tool b of the server a), so it matches nothing; rename the server, or name each tool',
      'toolexec: warning: permission rule "mcp__gh__run(rm -rf *)" (config) is a rule with content, which MCP tools do not take (only mcp__server, mcp__server__* and mcp__server__tool match), so it matches nothing',
    ]);
  });

  it("warns when a project's .claude/settings.json is loaded for another workspace, naming --workspace as the fix", async () => {
    const project = workspace();
    fs.mkdirSync(path.join(project, '.claude'));
    const settings = path.join(project, '.claude', 'settings.json');
    fs.writeFileSync(settings, JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: '"$CLAUDE_PROJECT_DIR"/hooks/ok.sh' }] }] } }));
    fs.writeFileSync(path.join(project, '.claude', 'settings.local.json'), '{}');
    const elsewhere = tmpDir('toolexec-cli-elsewhere-');
    const r = await cli(['tools', '--claude-settings', settings, '--json'], { cwd: elsewhere });
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `toolexec: warning: ${settings}: these are the settings of the project ${project}, but the workspace is ${elsewhere}: their hooks get CLAUDE_PROJECT_DIR=${elsewhere} and their ./ rules are judged from there; to work on that project as Claude Code would, add --workspace ${project}`,
      `toolexec: warning: hooks: a PreToolUse hook (matcher "Bash") cannot run: ${elsewhere}/hooks/ok.sh does not exist; every call it matches goes on without it (a non-blocking hook error), so it blocks nothing`,
    ]);
    const fixed = await cli(['tools', '--claude-settings', settings, '--workspace', project, '--json'], { cwd: elsewhere });
    expect(fixed).toMatchObject({ code: 0, stderr: '' });
    // Run from the project itself, as a Claude Code user would: nothing to say.
    expect(await cli(['tools', '--claude-settings', '.claude/settings.json', '--json'], { cwd: project })).toMatchObject({ code: 0, stderr: '' });
  });

  it("warns when the project of a .claude/settings.json holds a .mcp.json that is not loaded, naming --mcp-config as the fix", async () => {
    const project = workspace();
    fs.mkdirSync(path.join(project, '.claude'));
    fs.writeFileSync(path.join(project, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Read'] } }));
    const mcpJson = path.join(project, '.mcp.json');
    fs.writeFileSync(mcpJson, JSON.stringify({ mcpServers: { everything: { type: 'stdio', command: 'true' } } }));
    // Claude Code would start its servers; toolexec, given the settings alone, does not, and says so.
    const r = await cli(['tools', '--no-mcp', '--claude-settings', '.claude/settings.json', '--json'], { cwd: project });
    expect(r.code).toBe(0);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `toolexec: warning: ${mcpJson}: the project's MCP servers are not started: Claude Code reads .mcp.json by itself, toolexec only when given it; add --mcp-config ${mcpJson}`,
    ]);
    // Given it, only that --no-mcp left its server unconnected.
    const given = await cli(['tools', '--no-mcp', '--claude-settings', '.claude/settings.json', '--mcp-config', '.mcp.json', '--json'], { cwd: project });
    expect(given).toMatchObject({ code: 0, stderr: 'toolexec: warning: MCP servers not connected (--no-mcp): everything\n' });
  });
});

/**
 * What operators read against what the code accepts: the README's
 * configuration example names every key the schema has (and only those), with
 * the default the code uses wherever it shows one, and every environment
 * variable the code reads.
 */
describe('the README’s configuration section', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Configuration\n'), readme.indexOf('\n## Command line\n'));
  const block = /```jsonc\n([\s\S]*?)\n```/.exec(section)?.[1] ?? '';

  /** JSON with // comments, comments outside strings only (URLs hold "//"). */
  function parseJsonc(text: string): unknown {
    let out = '';
    let inString = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (inString) {
        out += c;
        if (c === '\\') out += text[++i] ?? '';
        else if (c === '"') inString = false;
      } else if (c === '"') {
        inString = true;
        out += c;
      } else if (c === '/' && text[i + 1] === '/') {
        while (i < text.length && text[i] !== '\n') i++;
        out += '\n';
      } else out += c;
    }
    return JSON.parse(out);
  }

  type Seg = string; // a key, '*' (any key of a record) or '[]' (any element)
  /** Every key path the schema accepts; records and arrays as '*' and '[]'. */
  function schemaPaths(s: z.ZodType, prefix: Seg[] = []): Seg[][] {
    const def = (s as unknown as { def: Record<string, unknown> & { type: string } }).def;
    switch (def.type) {
      case 'default':
      case 'optional':
      case 'prefault':
      case 'nullable':
        return schemaPaths(def.innerType as z.ZodType, prefix);
      case 'object': {
        const shape = def.shape as Record<string, z.ZodType>;
        // Handlers toolexec accepts and never runs (prompt, agent, mcp_tool) need no example.
        const type = shape.type && (shape.type as unknown as { def: { values?: unknown[] } }).def.values?.[0];
        if (typeof type === 'string' && UNRUN_HOOK_TYPES.has(type)) return [];
        return Object.entries(shape).flatMap(([k, v]) => [[...prefix, k], ...schemaPaths(v, [...prefix, k])]);
      }
      case 'record': {
        const value = def.valueType as z.ZodType;
        const inner = schemaPaths(value, [...prefix, '*']);
        return inner;
      }
      case 'array':
        return schemaPaths(def.element as z.ZodType, [...prefix, '[]']);
      case 'union':
        return (def.options as z.ZodType[]).flatMap((o) => schemaPaths(o, prefix));
      default:
        return [];
    }
  }

  function holds(v: unknown, p: Seg[]): boolean {
    if (p.length === 0) return v !== undefined;
    const [head, ...rest] = p;
    if (head === '[]') return Array.isArray(v) && v.some((e) => holds(e, rest));
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
    if (head === '*') return Object.values(v).some((e) => holds(e, rest));
    return holds((v as Record<string, unknown>)[head!], rest);
  }

  function at(v: unknown, p: readonly string[]): unknown {
    return p.reduce<unknown>((o, k) => (o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), v);
  }

  const example = parseJsonc(block) as Record<string, unknown>;

  it('is a configuration the service accepts, with no unknown field', () => {
    const parsed = Config.safeParse(example);
    expect(parsed.success ? [] : parsed.error.issues).toEqual([]);
    expect([...unknownKeys(example), ...unknownNestedKeys(example)]).toEqual([]);
  });

  it('shows every key the schema accepts', () => {
    const missing = schemaPaths(Config)
      .filter((p) => !holds(example, p))
      .map((p) => p.join('.').replace(/\.\[\]/g, '[]'));
    expect(missing).toEqual([]);
  });

  it('shows, for every key with a default, the default the code uses', () => {
    // Optional sections (classifier) get their defaults once present.
    const defaults = Config.parse({ classifier: { url: (example.classifier as { url: string }).url } }) as unknown;
    const wrong: string[] = [];
    for (const p of schemaPaths(Config)) {
      if (p.includes('*') || p.includes('[]')) continue;
      const shown = at(example, p);
      const dflt = at(defaults, p);
      // Scalars only: lists and maps in the example are examples (rules, tokens).
      if (shown === null || typeof shown === 'object' || dflt === undefined) continue;
      if (shown !== dflt) wrong.push(`${p.join('.')}: README ${JSON.stringify(shown)}, code ${JSON.stringify(dflt)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('names every TOOLEXEC_* environment variable the code reads', () => {
    const names = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const f = path.join(dir, e.name);
        if (e.isDirectory()) walk(f);
        else if (/\.(ts|mjs|js)$/.test(e.name)) for (const m of fs.readFileSync(f, 'utf8').matchAll(/\bTOOLEXEC_(?!ERR_)[A-Z][A-Z_]*[A-Z]\b/g)) names.add(m[0]);
      }
    };
    walk(path.join(ROOT, 'src'));
    expect(names.size).toBeGreaterThan(3);
    expect([...names].filter((n) => !readme.includes(`\`${n}\``))).toEqual([]);
  });
});

/** The README's synopsis of each command names exactly the options its --help lists. */
describe('the README’s command line section', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Command line\n'), readme.indexOf('\n## Security model'));
  const synopsis = /```\n([\s\S]*?)\n```/.exec(section)?.[1] ?? '';
  const flags = (text: string): string[] => [...new Set([...text.matchAll(/(?<![\w-])(--[a-z][a-z-]*|-[a-zA-Z])\b/g)].map((m) => m[1]!))].sort();
  const config = /^CONFIG = (.*)$/m.exec(synopsis)?.[1] ?? '';

  /** The synopsis lines of one command: its own line and the indented ones after it, CONFIG spelled out. */
  function readmeFlags(command: string): string[] {
    const lines = synopsis.split('\n');
    const start = lines.findIndex((l) => l.startsWith(`toolexec ${command} `));
    if (start < 0) return [];
    let text = lines[start]!;
    for (let i = start + 1; i < lines.length && /^\s+\S/.test(lines[i]!); i++) text += ` ${lines[i]}`;
    return flags(text.replace(/\bCONFIG\b/g, config));
  }

  it.each(['serve', 'tools', 'check', 'exec', 'audit', 'approve', 'health'])('`%s`: the same options as its --help', async (command) => {
    const help = await cli([command, '--help']);
    expect(config).toContain('--config');
    expect(readmeFlags(command)).toEqual(flags(help.stdout));
  });
});
