// The benchmark summary: one Markdown table built from bench/results/*.json,
// each figure beside its same-run baseline and its target. `npm run
// bench:report` prints it; `npm run bench:report -- --write` also puts it in
// README.md between the bench:start and bench:end markers.
import fs from 'node:fs';
import path from 'node:path';
import { benchDir, root } from './lib.mjs';

function load(name) {
  const file = path.join(benchDir, 'results', `${name}.json`);
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined;
}

const yes = (ok) => (ok ? 'met' : '**not met**');
// Mean (when measured) / p50 / p99 in ms; autocannon's percentiles are whole milliseconds.
const lat = (r, who) => `${r[`${who}_mean_ms`] !== undefined ? `mean ${r[`${who}_mean_ms`]}, ` : ''}p50 ${r[`${who}_p50_ms`]}, p99 ${r[`${who}_p99_ms`]} ms`;
const when = (r) => `${r.at.slice(0, 10)}${r.quick ? ', quick' : ''}`;

export function reportRows() {
  const rows = [];
  const http = load('http-execute');
  if (http) {
    for (const r of http.rows) {
      rows.push([
        `POST /execute, no-op tool, auth + audit + metrics, ${r.connections} conn.`,
        `bare Fastify ${r.bare_rps} req/s; latency ${lat(r, 'bare')}` +
          // The second baseline (bench/servers/bare-durable.mjs), in results that have it.
          (r.durable_rps !== undefined ? `; bare + the same two durable rows ${r.durable_rps} req/s, CPU ${r.durable_cpu_us} µs/req` : ''),
        `${r.toolexec_rps} req/s = **${r.ratio}×**; latency ${lat(r, 'toolexec')}; CPU ${r.toolexec_cpu_us} vs ${r.bare_cpu_us} µs/req` +
          (r.durable_rps !== undefined ? `; ${r.ratio_vs_durable}× the durable route` : ''),
        '≥ 0.6×',
        yes(r.ratio >= 0.6),
        when(http),
      ]);
    }
  }
  const mcp = load('mcp');
  if (mcp) {
    const sdk = mcp.rows.find((r) => r.case === 'MCP SDK server');
    const tx = mcp.rows.find((r) => r.case === 'toolexec POST /mcp');
    if (sdk && tx) {
      rows.push([
        `tools/call over /mcp, ${mcp.connections} conn.`,
        `MCP SDK server ${sdk.calls_per_s} calls/s (${sdk.cpu_us_per_call} µs CPU/call)`,
        `${tx.calls_per_s} calls/s = **${mcp.ratio}×** (${tx.cpu_us_per_call} µs CPU/call)`,
        '≥ 2×',
        yes(mcp.ratio >= 2),
        when(mcp),
      ]);
    }
  }
  const pipe = load('pipeline');
  if (pipe) {
    for (const r of pipe.rows) {
      rows.push([
        `In-process pipeline, ${r.hooks} PreToolUse command hook${r.hooks === 1 ? '' : 's'}`,
        `direct call ${r.direct_us} µs`,
        `**${r.overhead_concurrent_us} µs**/call overhead concurrent, ${r.overhead_sequential_us} µs sequential`,
        r.hooks === 0 ? '≤ 10 µs' : '—',
        r.hooks === 0 ? yes(r.overhead_concurrent_us <= 10) : '—',
        when(pipe),
      ]);
    }
  }
  const perm = load('permission');
  if (perm) {
    const cost = perm.rows.map((r) => `${r.call.replace(/`/g, '')}: ${r.cost_us}`).join('; ');
    rows.push([`Permission step (${perm.rules} rules)`, 'the same call with no rules', `µs/call — ${cost}`, '—', '—', when(perm)]);
  }
  const orch = load('orchestration');
  if (orch) {
    for (const r of orch.rows) {
      rows.push([
        `${r.calls} concurrency-safe calls of ${r.call_ms} ms`,
        `serial ${r.serial_ms} ms (ideal ${r.ideal_ms} ms)`,
        `${r.wall_ms} ms = **${r.speedup}×** faster than serial`,
        '—',
        '—',
        when(orch),
      ]);
    }
  }
  const big = load('large-result');
  if (big) {
    const r = big.rows[0];
    rows.push([
      `A ${r.size_mb} MB Bash result`,
      `producing it ${r.produce_baseline_ms} ms; reading the file ${r.read_file_baseline_ms} ms`,
      `RSS growth **${r.rss_growth_mb} MB**; store ${r.store_ms} ms (${r.store_vs_baseline}×), serve ${r.serve_ms} ms (${r.serve_vs_baseline}×)`,
      '≤ 64 MB',
      yes(r.rss_growth_mb <= 64),
      when(big),
    ]);
  }
  const cat = load('catalog');
  if (cat) {
    const bare = cat.rows.find((r) => r.vs_bare === 1);
    const hit = cat.rows.find((r) => /304/.test(r.case));
    rows.push([
      `Catalog of ${cat.tokens.tools} tools`,
      `${cat.tokens.full} tokens without deferral`,
      `${cat.tokens.deferred} tokens with deferral (**−${Math.round(cat.tokens.saving * 1000) / 10}%**)`,
      '—',
      '—',
      when(cat),
    ]);
    if (bare && hit) rows.push([`GET /tools, ETag hits (304)`, `bare Fastify, same bytes: ${bare.rps} req/s`, `${hit.rps} req/s = ${hit.vs_bare}×`, '—', '—', when(cat)]);
  }
  const cold = load('cold-start');
  if (cold) {
    const bare = cold.rows.find((r) => /bare/.test(r.case));
    for (const r of cold.rows.filter((x) => !/bare/.test(x.case))) {
      const noMcp = /no MCP/.test(r.case);
      rows.push([
        `Cold start to ready, ${r.case.replace('toolexec, ', '')}`,
        bare ? `bare Fastify ${bare.ready_ms} ms` : '—',
        `${r.ready_ms} ms ready${r.mcp_connected_ms !== '-' ? `, MCP connected ${r.mcp_connected_ms} ms` : ''}`,
        noMcp ? '≤ 500 ms' : '—',
        noMcp ? yes(r.ready_ms <= 500) : '—',
        when(cold),
      ]);
    }
  }
  const spawn = load('spawn');
  if (spawn) {
    const of = (k, w) => spawn.rows.filter((r) => r.spawner === w).map((r) => r[k]).join(' / ');
    rows.push([
      'Bash `echo hi`, 4 conn., commands started by the spawn helper',
      `forked by the service: ${of('service_cpu_ms_per_bash_call', 'direct')} ms CPU/call; no-op calls beside: ${of('noop_rps_beside', 'direct')} req/s, p99 ${of('noop_p99_ms_beside', 'direct')} ms`,
      `${of('service_cpu_ms_per_bash_call', 'helper')} ms CPU/call (**${spawn.cpu_ratio}× less**); no-op calls beside: ${of('noop_rps_beside', 'helper')} req/s (**${spawn.noop_rate_ratio}×**), p99 ${of('noop_p99_ms_beside', 'helper')} ms`,
      '—',
      '—',
      when(spawn),
    ]);
  }
  const grep = load('grep');
  if (grep) {
    for (const r of grep.rows) {
      rows.push([`Grep ${r.case}`, `JS engine ${r.js_ms} ms`, `rg engine ${r.rg_ms} ms (the JS engine takes **${r.js_over_rg}×** as long)${r.same ? '' : '; **the answers differ**'}`, '—', '—', when(grep)]);
    }
  }
  const soak = load('soak');
  if (soak) {
    const g = soak.growth ?? {};
    rows.push([`Soak, ${soak.seconds} s`, 'its first samples', `${soak.calls} calls, ${soak.errors} errors; growth: ${Object.entries(g).map(([k, v]) => `${k} ${v}`).join(', ')}`, 'no growth', '—', when(soak)]);
  }
  return rows;
}

export function reportMarkdown() {
  const head = ['Benchmark', 'Baseline (same run)', 'toolexec', 'Target', '', 'Measured'];
  const esc = (c) => String(c).replace(/\|/g, '\\|');
  return [head, head.map(() => '---'), ...reportRows()].map((r) => `| ${r.map(esc).join(' | ')} |`).join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const md = reportMarkdown();
  console.log(md);
  if (process.argv.includes('--write')) {
    const readme = path.join(root, 'README.md');
    const text = fs.readFileSync(readme, 'utf8');
    const re = /<!-- bench:start -->[\s\S]*?<!-- bench:end -->/;
    if (!re.test(text)) {
      console.error('README.md has no <!-- bench:start --> … <!-- bench:end --> markers');
      process.exit(1);
    }
    fs.writeFileSync(readme, text.replace(re, `<!-- bench:start -->\n${md}\n<!-- bench:end -->`));
    console.error('README.md updated');
  }
}
