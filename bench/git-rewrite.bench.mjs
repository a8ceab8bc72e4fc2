// The cost of asking git what a work-tree rewrite writes (permissions/git-rewrites.ts): a Bash
// decision of `git checkout clean` under Edit(.env), which runs git (two passes of the check and
// its git runs), against the same decision without git (the single pass that asked before, where
// the rule reaches the tree), the command under a rule that does not reach the tree, and one git
// process for scale.
// Interleaved rounds in one process; figures are ms per decision (median, p90). Run after `npm run build`:
//   node bench/git-rewrite.bench.mjs      (BENCH_QUICK=1 for a short run)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { quick, table, writeResult } from './lib.mjs';
import { analyseBash, initBashParser } from '../dist/bash/parser.js';
import { checkBashPermission, decideBashPermission } from '../dist/permissions/bash-rules.js';
import { SessionPermissionQuery } from '../dist/permissions/query.js';
import { compileRules, RuleIndex } from '../dist/permissions/rule-index.js';
import { Session } from '../dist/sessions/session.js';
import { Workspace } from '../dist/workspace.js';
import { runChild } from '../dist/util/child.js';

function repository(ws) {
  const git = (...a) => execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], { cwd: ws, stdio: 'pipe' });
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(ws, 'src', `f${i}.ts`), `export const x${i} = ${i};\n`);
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-qm', 'one');
  git('checkout', '-q', '-b', 'clean');
  for (let i = 0; i < 20; i++) fs.writeFileSync(path.join(ws, 'src', `f${i}.ts`), `export const x${i} = ${i + 1};\n`);
  git('commit', '-qam', 'two');
  git('checkout', '-q', 'main');
}

function context(deny) {
  const ws = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-gitrw-')), 'ws');
  fs.mkdirSync(ws);
  repository(ws);
  const workspace = new Workspace(ws);
  const { rules } = compileRules(deny.map((raw) => ({ raw, behavior: 'deny', source: 'config' })));
  const index = new RuleIndex(rules, { root: workspace.root, cwd: workspace.root, home: workspace.home, caseInsensitive: workspace.caseInsensitive });
  const session = new Session({ id: 's', mode: 'bypassPermissions', cwd: workspace.root, todos: [], created_at: 0, updated_at: 0 }, () => {});
  return { permissions: new SessionPermissionQuery(index, 'bypassPermissions', workspace), workspace, session };
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)], p90: s[Math.floor(s.length * 0.9)] };
}

await initBashParser();
const command = 'git checkout clean';
const env = context(['Edit(.env)']);
const far = context(['Edit(//nowhere-toolexec/**)']);
const a = await analyseBash(command);
const cases = {
  'git asked (Edit(.env), narrowed)': async () => checkBashPermission(command, env),
  'no git (Edit(.env), one pass: the old ask)': async () => decideBashPermission(command, a, env),
  'rule not reaching the tree': async () => checkBashPermission(command, far),
  // For scale: one git process, as the check starts it (it waits for two rounds of them).
  'one git process (rev-parse HEAD)': async () => runChild({ file: 'git', args: ['rev-parse', 'HEAD'], cwd: env.workspace.root, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 3000 }).then(() => ({ behavior: '-' })),
};
// The decisions are what they should be.
console.log(Object.fromEntries(await Promise.all(Object.entries(cases).map(async ([k, f]) => [k, (await f()).behavior]))));
const rounds = quick ? 30 : 200;
const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let r = 0; r < rounds; r++) {
  for (const [k, f] of Object.entries(cases)) {
    const t0 = performance.now();
    await f();
    if (r >= 5) times[k].push(performance.now() - t0);
  }
}
const rows = Object.entries(times).map(([k, xs]) => ({ case: k, ...Object.fromEntries(Object.entries(stats(xs)).map(([n, v]) => [`${n} ms`, v.toFixed(3)])) }));
table(rows);
writeResult('git-rewrite', rows);
