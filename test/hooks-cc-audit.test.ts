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
import { cleanupTmp, makeApp, tmpDir, type TestApp } from './helpers.js';
import { pre, run } from './helpers-hooks.js';

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
