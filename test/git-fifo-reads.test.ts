/**
 * The permission checks read git's small files (a `commondir`, `.git/config`, the index, ignore files)
 * without blocking on a FIFO: `git init --separate-git-dir=gd sub` (allowed by Bash(git:*)) then
 * `cp -s FIFO gd/commondir` (allowed in acceptEdits) made every later write under sub wait for a
 * writer that never came, in toolexec's event loop: the whole service stopped answering (a link to
 * /dev/zero read without end instead). A FIFO at .git/config or .git/index did the same to `git add
 * -A`. Here a writer child holds each FIFO open and only then, long after, leaves a marker: a check
 * that read the FIFO returns only once the writer is done, so finds the marker.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ruleEnv } from './helpers-bash.js';

const writers: ChildProcess[] = [];
afterEach(() => {
  for (const w of writers.splice(0)) w.kill('SIGKILL');
});

/** A FIFO at `at` whose writer opens it, waits 20 s, then writes `marker`: a reader that blocks on it is still blocked till then. */
function heldFifo(at: string, marker: string): void {
  execFileSync('mkfifo', [at]);
  writers.push(spawn('sh', ['-c', 'exec 3>"$1"; sleep 20; : > "$2"', 'sh', at, marker], { stdio: 'ignore' }));
}

describe('a FIFO among the files git reads', () => {
  it('commondir of a separate git directory (a link to a FIFO): a write under the work tree is judged without waiting', async () => {
    const env = ruleEnv({ allow: ['Bash(git:*)', 'Bash(echo:*)'], deny: ['Read(./.env)'], mode: 'acceptEdits' });
    execFileSync('git', ['init', '-q', '--separate-git-dir=gd', 'sub'], { cwd: env.ws });
    const marker = path.join(env.ws, 'marker');
    heldFifo(path.join(env.ws, 'fifo'), marker);
    fs.symlinkSync(path.join(env.ws, 'fifo'), path.join(env.ws, 'gd', 'commondir'));
    const r = await env.check('echo x > sub/x.txt');
    expect(fs.existsSync(marker), 'the FIFO was not waited on').toBe(false);
    expect(r.behavior).toBe('allow');
  }, 60000);

  it('.git/config or .git/index a FIFO: git add -A asks without waiting', async () => {
    for (const name of ['config', 'index']) {
      const env = ruleEnv({ allow: ['Bash(git:*)'], deny: ['Read(./.env)'] });
      execFileSync('git', ['init', '-q'], { cwd: env.ws });
      fs.writeFileSync(path.join(env.ws, '.env'), 'SECRET=x\n');
      fs.writeFileSync(path.join(env.ws, '.gitignore'), '.env\n');
      const marker = path.join(env.ws, 'marker');
      fs.rmSync(path.join(env.ws, '.git', name), { force: true });
      heldFifo(path.join(env.ws, '.git', name), marker);
      const r = await env.check('git add -A');
      expect(fs.existsSync(marker), `${name}: the FIFO was not waited on`).toBe(false);
      expect(r, name).toMatchObject({ behavior: 'ask', type: 'safety' });
    }
  }, 60000);
});
