// The cost of the permission step per call: `decide(...)` (rules, the tool's
// own check, mode) with a realistic set of 30 rules, for a few representative
// calls, against a baseline of the same loop without the decide call.
// Figures are µs per call. Run after `npm run build`:
//   node bench/permission.bench.mjs      (BENCH_QUICK=1 for a short run)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { initBashParser } from '../dist/bash/parser.js';
import { Config } from '../dist/config/schema.js';
import { decide } from '../dist/permissions/engine.js';
import { SessionPermissionQuery } from '../dist/permissions/query.js';
import { makeContext } from '../dist/pipeline/context.js';
import { createServices } from '../dist/services.js';
import { quick, table, writeResult } from './lib.mjs';

/** 30 rules of the kinds a project writes: Bash prefixes, paths, domains, MCP servers. */
export const RULES = {
  allow: [
    'Bash(git status:*)',
    'Bash(git diff:*)',
    'Bash(git log:*)',
    'Bash(npm test:*)',
    'Bash(npm run lint:*)',
    'Bash(npm run build:*)',
    'Bash(npx tsc:*)',
    'Bash(ls:*)',
    'Read(./src/**)',
    'Read(./test/**)',
    'Edit(./src/**)',
    'Edit(./test/**)',
    'WebFetch(domain:docs.example.com)',
    'WebFetch(domain:*.npmjs.com)',
    'WebFetch(domain:github.com)',
    'mcp__github',
    'mcp__docs__search',
    'Glob',
    'Grep',
  ],
  deny: [
    'Bash(rm -rf:*)',
    'Bash(curl:*)',
    'Bash(git push --force:*)',
    'Read(./.env)',
    'Read(./secrets/**)',
    'Edit(./.github/workflows/**)',
    'WebFetch(domain:evil.example)',
    'mcp__prod_db',
  ],
  ask: ['Bash(git push:*)', 'Bash(npm publish:*)', 'Edit(./package.json)'],
};

function setup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-perm-'));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'index.ts'), 'export const x = 1;\n');
  fs.writeFileSync(path.join(ws, 'src', 'app.ts'), 'export const app = 1;\n');
  const config = Config.parse({ workspace: { root: ws }, storage: { path: path.join(dir, 'db.sqlite') }, permissions: RULES });
  const svc = createServices({ config, logger: pino({ level: 'silent' }) });
  return { svc, dir, ws };
}

const CALLS = [
  { name: 'Read inside the workspace', tool: 'Read', input: (ws) => ({ file_path: path.join(ws, 'src', 'index.ts') }) },
  { name: 'Bash `git status && npm test`', tool: 'Bash', input: () => ({ command: 'git status && npm test' }) },
  // The parser keeps recent analyses; a command never seen before pays the tree-sitter parse.
  { name: 'Bash, a new command each call', tool: 'Bash', input: () => ({ command: 'git status && npm test' }), each: (i) => ({ command: `git status && npm test -- --shard=${i}` }) },
  { name: 'Edit of a file', tool: 'Edit', input: (ws) => ({ file_path: path.join(ws, 'src', 'app.ts'), old_string: 'app = 1', new_string: 'app = 2' }) },
  { name: 'WebFetch', tool: 'WebFetch', input: () => ({ url: 'https://docs.example.com/guide/intro', prompt: 'Summarise' }) },
];

let serial = 0;
async function loop(n, fn) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(serial++);
  return Number(process.hrtime.bigint() - t0) / 1e3 / n;
}

export async function permissionBench() {
  await initBashParser();
  const N = quick ? 5_000 : 50_000;
  const { svc, dir, ws } = setup();
  const session = svc.sessions.get('bench');
  const rules = svc.deps.rulesFor(session);
  const query = new SessionPermissionQuery(rules, session.mode, svc.deps.workspace);
  const signal = new AbortController().signal;
  const rows = [];
  for (const c of CALLS) {
    const tool = svc.pool().lookup(c.tool);
    if (!tool) throw new Error(`no tool ${c.tool}`);
    const ctx = makeContext(svc.deps, session, tool, { executionId: 'ex_bench', toolUseId: 'tu_bench' }, signal, query, svc.log);
    const input = tool.inputSchema.parse(c.input(ws));
    const args = { tool, input, ctx, mode: session.mode, rules, hook: undefined };
    const first = await decide(args);
    // The same loop, minus decide: building its argument and awaiting a resolved promise.
    const argsOf = c.each ? (i) => ({ ...args, input: c.each(i) }) : (i) => ({ ...args, i });
    const baseline = (i) => Promise.resolve(argsOf(i));
    const measured = (i) => decide(argsOf(i));
    await loop(Math.min(N, 2000), measured);
    await loop(Math.min(N, 2000), baseline);
    // Alternate the two and keep each one's best of five rounds: JIT tiering and GC land in the other rounds.
    let b = Infinity;
    let d = Infinity;
    for (let round = 0; round < 5; round++) {
      globalThis.gc?.();
      b = Math.min(b, await loop(N / 5, baseline));
      globalThis.gc?.();
      d = Math.min(d, await loop(N / 5, measured));
    }
    rows.push({
      call: c.name,
      decision: `${first.behavior} (${first.reason.type}: ${first.reason.detail})`,
      calls: N,
      baseline_us: +b.toFixed(3),
      decide_us: +d.toFixed(3),
      cost_us: +(d - b).toFixed(3),
    });
  }
  await svc.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const walks = await walkBench();
  const ruleCount = RULES.allow.length + RULES.deny.length + RULES.ask.length;
  console.log(`\nPermission step (decide) per call, µs, ${ruleCount} rules, mode default`);
  table(rows);
  console.log(`\nBash \`tar -xf\` (walks the denied files first), ${HELD} denied files held open, µs per decision`);
  table(walks);
  // The machine's load is recorded: on a shared 2-core machine it moves these figures by 2-4x.
  writeResult('permission', { rules: ruleCount, loadavg: os.loadavg().map((l) => +l.toFixed(2)), rows, walks });
  return rows;
}

/** Denied files (`Read(./secrets/**)`) the memory of denied files holds open in walkBench. */
const HELD = 500;

/**
 * A command that may give a denied file another name unseen (`tar -xf`, hard-links.ts) has the denied
 * files walked before it, once per kind of deny rule (Read, Edit here): each walk used to prune the memory
 * of denied files, an fstat per file held (denied-memory.ts, Pruning); now it reads only the counts of
 * the files its rules remembered that it did not meet. `walks_before` is the same decision plus what the
 * walks paid before (a prune of every file held per walk), measured in the same run.
 */
async function walkBench() {
  const N = quick ? 200 : 2_000;
  const { svc, dir, ws } = setup();
  fs.mkdirSync(path.join(ws, 'secrets'));
  for (let i = 0; i < HELD; i++) fs.writeFileSync(path.join(ws, 'secrets', `k${i}.pem`), 'KEY\n');
  const session = svc.sessions.get('bench');
  const rules = svc.deps.rulesFor(session);
  const query = new SessionPermissionQuery(rules, session.mode, svc.deps.workspace);
  const tool = svc.pool().lookup('Bash');
  const ctx = makeContext(svc.deps, session, tool, { executionId: 'ex_bench', toolUseId: 'tu_bench' }, new AbortController().signal, query, svc.log);
  const args = { tool, input: tool.inputSchema.parse({ command: 'tar -xf a.tar' }), ctx, mode: session.mode, rules, hook: undefined };
  const first = await decide(args);
  const memory = svc.deniedFiles;
  if (memory.pinnedFiles !== HELD) throw new Error(`${memory.pinnedFiles} denied files held, not ${HELD}`);
  const kinds = ['Read', 'Edit'].filter((k) => RULES.deny.some((r) => r.startsWith(`${k}(`))).length;
  const variants = {
    baseline: (i) => Promise.resolve({ ...args, i }),
    walks_now: () => decide(args),
    walks_before: () => {
      for (let k = 0; k < kinds; k++) memory.prune();
      return decide(args);
    },
  };
  const best = {};
  const counts = {};
  for (const [name, fn] of Object.entries(variants)) {
    const before = memory.linkCountsRead;
    await loop(Math.min(N, 200), fn);
    counts[name] = (memory.linkCountsRead - before) / Math.min(N, 200);
    best[name] = Infinity;
  }
  for (let round = 0; round < 5; round++) {
    for (const [name, fn] of Object.entries(variants)) {
      globalThis.gc?.();
      best[name] = Math.min(best[name], await loop(N / 5, fn));
    }
  }
  await svc.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return ['walks_before', 'walks_now'].map((name) => ({
    call: `tar -xf a.tar, ${name === 'walks_now' ? 'now' : 'before (a prune per walk)'}`,
    decision: `${first.behavior} (${first.reason.type})`,
    calls: N,
    link_counts_read: counts[name],
    baseline_us: +best.baseline.toFixed(3),
    decide_us: +best[name].toFixed(3),
    cost_us: +(best[name] - best.baseline).toFixed(3),
  }));
}

if (import.meta.url === `file://${process.argv[1]}`) await permissionBench();
