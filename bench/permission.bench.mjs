// The cost of the permission step per call: `decide(...)` (rules, the tool's
// own check, mode) with a realistic set of 30 rules, for a few representative
// calls, against a baseline of the same loop without the decide call.
// Figures are µs per call. Run after `npm run build`:
//   node --expose-gc bench/permission.bench.mjs      (BENCH_QUICK=1 for a short run)
// `--against DIR` also measures another build's dist/ (an older commit's, built
// elsewhere) in the same process, its rounds alternating with this one's, both
// in CPU time (then every figure is CPU time): on a shared machine, runs
// minutes apart differ by 2-4x, rounds a few ms apart much less.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { quick, root, table, writeResult } from './lib.mjs';

/** The modules the bench uses, from a build's dist/ directory. */
async function loadDist(dist) {
  const m = async (p) => import(pathToFileURL(path.join(dist, p)).href);
  return {
    initBashParser: (await m('bash/parser.js')).initBashParser,
    Config: (await m('config/schema.js')).Config,
    decide: (await m('permissions/engine.js')).decide,
    SessionPermissionQuery: (await m('permissions/query.js')).SessionPermissionQuery,
    makeContext: (await m('pipeline/context.js')).makeContext,
    createServices: (await m('services.js')).createServices,
  };
}

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

function setup(d) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-perm-'));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(path.join(ws, 'src', 'lib'), { recursive: true });
  fs.writeFileSync(path.join(ws, 'src', 'index.ts'), 'export const x = 1;\n');
  fs.writeFileSync(path.join(ws, 'src', 'app.ts'), 'export const app = 1;\n');
  // A repository below the workspace (its own .git, config and the global ones read by every Edit there).
  execFileSync('git', ['init', '-q', path.join(ws, 'src', 'lib')]);
  fs.writeFileSync(path.join(ws, 'src', 'lib', 'lib.ts'), 'export const lib = 1;\n');
  const config = d.Config.parse({ workspace: { root: ws }, storage: { path: path.join(dir, 'db.sqlite') }, permissions: RULES });
  const svc = d.createServices({ config, logger: pino({ level: 'silent' }) });
  return { svc, dir, ws };
}

const CALLS = [
  { name: 'Read inside the workspace', tool: 'Read', input: (ws) => ({ file_path: path.join(ws, 'src', 'index.ts') }) },
  { name: 'Bash `git status && npm test`', tool: 'Bash', input: () => ({ command: 'git status && npm test' }) },
  // The parser keeps recent analyses; a command never seen before pays the tree-sitter parse.
  { name: 'Bash, a new command each call', tool: 'Bash', input: () => ({ command: 'git status && npm test' }), each: (i) => ({ command: `git status && npm test -- --shard=${i}` }) },
  { name: 'Edit of a file', tool: 'Edit', input: (ws) => ({ file_path: path.join(ws, 'src', 'app.ts'), old_string: 'app = 1', new_string: 'app = 2' }) },
  { name: 'Write of a file', tool: 'Write', input: (ws) => ({ file_path: path.join(ws, 'src', 'app.ts'), content: 'export const app = 2;\n' }) },
  { name: 'Edit of a file in a git repository', tool: 'Edit', input: (ws) => ({ file_path: path.join(ws, 'src', 'lib', 'lib.ts'), old_string: 'lib = 1', new_string: 'lib = 2' }) },
  { name: 'WebFetch', tool: 'WebFetch', input: () => ({ url: 'https://docs.example.com/guide/intro', prompt: 'Summarise' }) },
];

let serial = 0;
/** µs per call of `fn`: elapsed, or (`cpu`) the process's CPU time, which other processes' load on a shared machine moves less. */
async function loop(n, fn, cpu = false) {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await fn(serial++);
  if (cpu) {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / n;
  }
  return Number(process.hrtime.bigint() - t0) / 1e3 / n;
}

/** One build's service and, per call, the decide loop and its baseline. */
async function variant(dist) {
  const d = await loadDist(dist);
  await d.initBashParser();
  const { svc, dir, ws } = setup(d);
  const session = svc.sessions.get('bench');
  const rules = svc.deps.rulesFor(session);
  const query = new d.SessionPermissionQuery(rules, session.mode, svc.deps.workspace);
  const signal = new AbortController().signal;
  const calls = [];
  for (const c of CALLS) {
    const tool = svc.pool().lookup(c.tool);
    if (!tool) throw new Error(`no tool ${c.tool}`);
    const ctx = d.makeContext(svc.deps, session, tool, { executionId: 'ex_bench', toolUseId: 'tu_bench' }, signal, query, svc.log);
    const input = tool.inputSchema.parse(c.input(ws));
    const args = { tool, input, ctx, mode: session.mode, rules, hook: undefined };
    // The same loop, minus decide: building its argument and awaiting a resolved promise.
    const argsOf = c.each ? (i) => ({ ...args, input: c.each(i) }) : (i) => ({ ...args, i });
    calls.push({ first: () => d.decide(args), baseline: (i) => Promise.resolve(argsOf(i)), measured: (i) => d.decide(argsOf(i)) });
  }
  return { calls, close: async () => (await svc.close(), fs.rmSync(dir, { recursive: true, force: true })) };
}

export async function permissionBench(against = undefined) {
  const N = quick ? 5_000 : 50_000;
  const mine = await variant(path.join(root, 'dist'));
  const other = against === undefined ? undefined : await variant(path.resolve(against));
  // The repositories' configurations were written a moment ago: a file changed within a clock tick is read
  // again by every decision (kept-reads.ts), which is not the steady state measured here.
  await new Promise((r) => setTimeout(r, 1100));
  const rows = [];
  for (const [k, c] of CALLS.entries()) {
    const first = await mine.calls[k].first();
    const a = mine.calls[k];
    const o = other?.calls[k];
    if (o) {
      const theirs = await o.first();
      if (theirs.behavior !== first.behavior) throw new Error(`${c.name}: ${first.behavior} here, ${theirs.behavior} in ${against}`);
    }
    for (const f of [a.measured, a.baseline, ...(o ? [o.measured] : [])]) await loop(Math.min(N, 2000), f);
    // Alternate them and keep each one's best of the rounds: JIT tiering and GC land in the other rounds.
    // Against another build, more and shorter rounds, in CPU time: the two are compared, not timed.
    const rounds = o ? 20 : 5;
    let b = Infinity;
    let m = Infinity;
    let t = Infinity;
    for (let round = 0; round < rounds; round++) {
      globalThis.gc?.();
      b = Math.min(b, await loop(N / rounds, a.baseline, !!o));
      globalThis.gc?.();
      m = Math.min(m, await loop(N / rounds, a.measured, !!o));
      if (o) {
        globalThis.gc?.();
        t = Math.min(t, await loop(N / rounds, o.measured, true));
      }
    }
    const row = {
      call: c.name,
      decision: `${first.behavior} (${first.reason.type}: ${first.reason.detail})`,
      calls: N,
      baseline_us: +b.toFixed(3),
      decide_us: +m.toFixed(3),
      cost_us: +(m - b).toFixed(3),
    };
    if (o) Object.assign(row, { against_cost_us: +(t - b).toFixed(3), ratio: +((m - b) / (t - b)).toFixed(3) });
    rows.push(row);
  }
  await mine.close();
  await other?.close();
  const walks = await walkBench();
  const ruleCount = RULES.allow.length + RULES.deny.length + RULES.ask.length;
  console.log(`\nPermission step (decide) per call, µs, ${ruleCount} rules, mode default${against ? `; against ${against} (ratio: this build's cost / that one's)` : ''}`);
  table(rows);
  console.log(`\nBash \`tar -xf\` (walks the denied files first), ${HELD} denied files held open, µs per decision`);
  table(walks);
  // The machine's load is recorded: on a shared 2-core machine it moves these figures by 2-4x.
  writeResult('permission', { rules: ruleCount, loadavg: os.loadavg().map((l) => +l.toFixed(2)), ...(against ? { against } : {}), rows, walks });
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
  const d = await loadDist(path.join(root, 'dist'));
  const { svc, dir, ws } = setup(d);
  fs.mkdirSync(path.join(ws, 'secrets'));
  for (let i = 0; i < HELD; i++) fs.writeFileSync(path.join(ws, 'secrets', `k${i}.pem`), 'KEY\n');
  const session = svc.sessions.get('bench');
  const rules = svc.deps.rulesFor(session);
  const query = new d.SessionPermissionQuery(rules, session.mode, svc.deps.workspace);
  const tool = svc.pool().lookup('Bash');
  const ctx = d.makeContext(svc.deps, session, tool, { executionId: 'ex_bench', toolUseId: 'tu_bench' }, new AbortController().signal, query, svc.log);
  const args = { tool, input: tool.inputSchema.parse({ command: 'tar -xf a.tar' }), ctx, mode: session.mode, rules, hook: undefined };
  const first = await d.decide(args);
  const memory = svc.deniedFiles;
  if (memory.pinnedFiles !== HELD) throw new Error(`${memory.pinnedFiles} denied files held, not ${HELD}`);
  const kinds = ['Read', 'Edit'].filter((k) => RULES.deny.some((r) => r.startsWith(`${k}(`))).length;
  const variants = {
    baseline: (i) => Promise.resolve({ ...args, i }),
    walks_now: () => d.decide(args),
    walks_before: () => {
      for (let k = 0; k < kinds; k++) memory.prune();
      return d.decide(args);
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--against');
  await permissionBench(i === -1 ? undefined : process.argv[i + 1]);
}
