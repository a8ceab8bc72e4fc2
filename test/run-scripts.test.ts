/**
 * Scripts toolexec runs itself (command hooks, stdio MCP servers) are
 * protected: in acceptEdits mode (or with an Edit allow rule) the agent could
 * otherwise rewrite the PreToolUse hook that holds it to a policy, or the
 * script of an MCP server, and have its own code run with the service's
 * rights outside any sandbox. Writing one always asks, as `.git/` and
 * `.claude/` do.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandWords, scriptsRunByService } from '../src/permissions/run-scripts.js';
import { bashServiceTests } from './helpers-bash.js';
import { run } from './helpers-hooks.js';

const openApp = bashServiceTests();

describe('the scripts a configuration runs', () => {
  it('reads them from hook commands and stdio MCP servers', () => {
    const hook = (command: string) => ({ hooks: [{ type: 'command' as const, command }] });
    const s = scriptsRunByService(
      {
        PreToolUse: [hook('./hooks/guard.sh'), hook('"$CLAUDE_PROJECT_DIR"/tools/check.py --strict'), hook('python3 -u tools/lint.py'), hook("bash -c 'echo hi'")],
        PostToolUse: [hook('env A=1 B=2 ./post.sh && echo done'), hook('node ${CLAUDE_PROJECT_DIR}/h.mjs'), hook('jq -r .tool_name'), hook('/opt/hooks/audit')],
      },
      {
        srv: { command: 'node', args: ['./mcp/server.js', '--port', '1'], cwd: 'services' },
        bin: { command: './bin/mcp', args: [] },
        remote: { type: 'http', url: 'http://127.0.0.1:1/mcp' },
      },
      '/ws',
    );
    expect(s.absolute.sort()).toEqual(['/opt/hooks/audit', '/ws/bin/mcp', '/ws/h.mjs', '/ws/services/mcp/server.js', '/ws/tools/check.py'].sort());
    expect(s.relative.sort()).toEqual(['hooks/guard.sh', 'post.sh', 'tools/lint.py'].sort());
  });

  it('takes the configuration and policy files a hook line names, which decide what it does (an ESLint configuration can load code)', () => {
    const hook = (command: string) => ({ hooks: [{ type: 'command' as const, command }] });
    const s = scriptsRunByService({ PreToolUse: [hook('node hooks/lint.mjs --config .eslintrc.json'), hook('python3 guard.py policy.yaml --rules=rules.toml'), hook('jq -r .tool_input.file_path')] }, {}, '/ws');
    expect(s.relative.sort()).toEqual(['.eslintrc.json', 'guard.py', 'hooks/lint.mjs', 'policy.yaml', 'rules.toml'].sort());
  });

  it('takes every script a hook line may run, not only the first command\'s: shells\' -c strings, later commands, option values, runners, $HOME, python -m', () => {
    const hook = (command: string) => ({ hooks: [{ type: 'command' as const, command }] });
    const cmds = ["sh -c './x.sh'", 'cd dir && ./y.sh', 'bash -e ./z.sh', 'node --import ./a.mjs ./b.mjs', 'npx tsx ./h.ts', 'uv run h.py', 'make -f hooks.mk', 'node --require=./r.js x.js', 'python3 -m pkg.mod', '$HOME/.claude/hooks/g.sh', './guard.sh 2>/dev/null'];
    const s = scriptsRunByService({ PreToolUse: cmds.map(hook) }, {}, '/ws');
    expect(s.relative.sort()).toEqual(['x.sh', 'y.sh', 'z.sh', 'a.mjs', 'b.mjs', 'h.ts', 'h.py', 'hooks.mk', 'r.js', 'x.js', 'pkg/mod.py', 'pkg/mod/__main__.py', 'guard.sh'].sort());
    // Devices a hook redirects to are no scripts.
    expect(s.absolute).toEqual([path.join(os.homedir(), '.claude/hooks/g.sh')]);
  });

  it('splits a command as the shell would, up to its first operator', () => {
    expect(commandWords(`'my hooks'/a\\ b.sh "x y" z; rm -rf /`, '/p')).toEqual(['my hooks/a b.sh', 'x y', 'z']);
    expect(commandWords('$CLAUDE_PROJECT_DIR/x|tee log', '/p')).toEqual(['/p/x']);
  });
});

describe('writing them asks, in every mode that would otherwise allow it', () => {
  const hooks = {
    PreToolUse: [
      { matcher: 'Bash', hooks: [{ type: 'command' as const, command: '"$CLAUDE_PROJECT_DIR"/hooks/guard.sh' }] },
      { matcher: 'Write', hooks: [{ type: 'command' as const, command: 'sh tools/check.sh' }] },
    ],
  };

  async function app(mode: 'acceptEdits' | 'bypassPermissions') {
    const t = await openApp({ hooks, permissions: { defaultMode: mode, allowBypass: true, headless: 'deny', allow: ['Bash(echo:*)', 'Bash(rm:*)', 'Bash(cp:*)'] } });
    fs.mkdirSync(path.join(t.workspace, 'hooks'));
    fs.mkdirSync(path.join(t.workspace, 'tools'));
    fs.mkdirSync(path.join(t.workspace, 'sub', 'tools'), { recursive: true });
    fs.writeFileSync(path.join(t.workspace, 'hooks', 'guard.sh'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    fs.writeFileSync(path.join(t.workspace, 'tools', 'check.sh'), 'exit 0\n');
    return t;
  }

  for (const mode of ['acceptEdits', 'bypassPermissions'] as const) {
    it(`${mode}: Write, Edit and Bash leave the hook scripts alone; other files are written`, async () => {
      const a = await app(mode);
      const guard = path.join(a.workspace, 'hooks', 'guard.sh');
      const attempts: Array<[string, Record<string, unknown>]> = [
        ['Write', { file_path: guard, content: '#!/bin/sh\nexit 0 # mine now\n' }],
        ['Write', { file_path: 'tools/check.sh', content: 'exit 0 # mine\n' }],
        ['Edit', { file_path: guard, old_string: 'exit 0', new_string: 'exit 0 # mine now' }],
        // A relative hook path is relative to the session's directory: any directory of the workspace.
        ['Write', { file_path: 'sub/tools/check.sh', content: 'exit 0 # mine\n' }],
        ['Bash', { command: 'echo "exit 0" > hooks/guard.sh' }],
        ['Bash', { command: 'rm tools/check.sh' }],
        ['Bash', { command: 'cp /dev/null hooks/guard.sh' }],
      ];
      // Write replaces only what was read (as in Claude Code).
      for (const f of [guard, 'tools/check.sh']) expect((await run(a, 'Read', { file_path: f })).exec.status).toBe('succeeded');
      for (const [tool, input] of attempts) {
        const r = await run(a, tool, input);
        expect(r.exec.status, `${tool} ${JSON.stringify(input)}`).toBe('denied');
        // Asked (no approver here, so denied), and for that reason.
        expect(r.chain.map((c) => c.detail).join('\n'), `${tool} ${JSON.stringify(input)}`).toMatch(/is a script toolexec runs itself \(a hook or an MCP server\)/);
      }
      expect(fs.readFileSync(guard, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
      expect(fs.readFileSync(path.join(a.workspace, 'tools', 'check.sh'), 'utf8')).toBe('exit 0\n');
      expect(fs.existsSync(path.join(a.workspace, 'sub', 'tools', 'check.sh'))).toBe(false);
      // Anything else is written as the mode allows.
      const ok = await run(a, 'Write', { file_path: 'tools/notes.md', content: 'x\n' });
      expect(ok.exec.status).toBe('succeeded');
    });
  }

  it("a script a hook runs through a shell's -c string is protected (acceptEdits)", async () => {
    const t = await openApp({
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command' as const, command: "sh -c 'cd hooks && ./guard.sh'" }] }] },
      permissions: { defaultMode: 'acceptEdits', headless: 'deny' },
    });
    const r = await run(t, 'Write', { file_path: 'hooks/guard.sh', content: 'exit 0\n' });
    expect(r.exec.status).toBe('denied');
    expect(r.chain.map((c) => c.detail).join('\n')).toMatch(/guard\.sh is a script toolexec runs itself/);
    expect(fs.existsSync(path.join(t.workspace, 'hooks', 'guard.sh'))).toBe(false);
  });

  it('moving or removing a directory that holds one asks, and so does writing through a hard link to one', async () => {
    const a = await app('acceptEdits');
    fs.mkdirSync(path.join(a.workspace, 'other'));
    fs.linkSync(path.join(a.workspace, 'hooks', 'guard.sh'), path.join(a.workspace, 'other', 'alias.sh'));
    for (const [tool, input] of [
      ['Bash', { command: 'mv hooks hooks2' }],
      ['Bash', { command: 'rm -rf tools' }],
      // A relative hook path: a directory of that name anywhere in the workspace.
      ['Bash', { command: 'rm -r sub/tools' }],
      ['Bash', { command: 'echo "exit 0" > other/alias.sh' }],
      ['Write', { file_path: 'other/alias.sh', content: 'exit 0\n' }],
    ] as Array<[string, Record<string, unknown>]>) {
      if (tool === 'Write') expect((await run(a, 'Read', { file_path: 'other/alias.sh' })).exec.status).toBe('succeeded');
      const r = await run(a, tool, input);
      expect(r.exec.status, `${tool} ${JSON.stringify(input)}`).toBe('denied');
      expect(r.chain.map((c) => c.detail).join('\n'), `${tool} ${JSON.stringify(input)}`).toMatch(/(holds|is a hard link to) .*a script toolexec runs itself/);
    }
    expect(fs.readFileSync(path.join(a.workspace, 'hooks', 'guard.sh'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(fs.existsSync(path.join(a.workspace, 'tools', 'check.sh'))).toBe(true);
    // Other directories are the mode's to allow.
    expect((await run(a, 'Bash', { command: 'rm -rf other' })).exec.status).toBe('succeeded');
  });

  it('a glob is judged by the scripts among its matches, not by the directory it starts in, which it neither moves nor removes', async () => {
    const a = await app('acceptEdits');
    for (const f of ['a.log', 'b.log', 'tools/old.txt', 'hooks/notes.md']) fs.writeFileSync(path.join(a.workspace, f), 'x\n');
    // The workspace root holds hooks/guard.sh, tools/ holds check.sh, hooks/ holds guard.sh: none of them is touched.
    for (const command of ['rm -f *.log', 'rm -f tools/*.txt', "sed -i 's/x/y/' hooks/*.md"]) {
      expect((await run(a, 'Bash', { command })).exec.status, command).toBe('succeeded');
    }
    expect(fs.existsSync(path.join(a.workspace, 'a.log'))).toBe(false);
    expect(fs.readFileSync(path.join(a.workspace, 'hooks', 'notes.md'), 'utf8')).toBe('y\n');
    // A glob that matches a script, or a directory holding one, still asks; and so does one that leads back to where it starts.
    for (const command of ['rm -f hooks/*.sh', 'rm -rf *', 'rm -rf t*', "sed -i 's/0/1/' */guard.sh", 'mv too*/.. ../moved']) {
      expect((await run(a, 'Bash', { command })).exec.status, command).toBe('denied');
    }
    expect(fs.readFileSync(path.join(a.workspace, 'hooks', 'guard.sh'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(fs.existsSync(path.join(a.workspace, 'tools', 'check.sh'))).toBe(true);
  });

  it("a stdio MCP server's script is protected too", async () => {
    const t = await openApp({
      mcpServers: { local: { command: process.execPath, args: ['./mcp/server.mjs'] } },
      permissions: { defaultMode: 'acceptEdits', headless: 'deny' },
    });
    const r = await run(t, 'Write', { file_path: 'mcp/server.mjs', content: 'process.exit(0)\n' });
    expect(r.exec.status).toBe('denied');
    expect(r.chain.map((c) => c.detail).join('\n')).toMatch(/mcp\/server\.mjs is a script toolexec runs itself/);
    expect(fs.existsSync(path.join(t.workspace, 'mcp', 'server.mjs'))).toBe(false);
  });
});

describe('what a hook only writes, or only runs in', () => {
  it('is not taken for a script: what tee writes, and the project directory itself', () => {
    const hook = (command: string) => ({ hooks: [{ type: 'command' as const, command }] });
    const s = scriptsRunByService(
      {
        PostToolUse: [
          hook('jq -c . | tee -a "$CLAUDE_PROJECT_DIR"/logs/tools.jsonl'),
          hook('cd "$CLAUDE_PROJECT_DIR" && ./hooks/fmt.sh'),
          hook('npx prettier --write "$CLAUDE_PROJECT_DIR"'),
          hook('npm --prefix "${CLAUDE_PROJECT_DIR}" run lint'),
        ],
      },
      {},
      '/ws',
    );
    expect(s.absolute).toEqual([]);
    expect(s.relative).toEqual(['hooks/fmt.sh']);
  });


  it('is not taken for a script: the target of an output redirection', () => {
    const hook = (command: string) => ({ hooks: [{ type: 'command' as const, command }] });
    const s = scriptsRunByService({ PreToolUse: [hook("printf 'x\\n' >> '/ws/a.txt' && ./check.sh 2>/tmp/err.log >| out.txt &> all.txt < ./policy.txt")] }, {}, '/ws');
    expect(s.absolute).toEqual([]);
    expect(s.relative.sort()).toEqual(['check.sh', 'policy.txt']);
  });
});
