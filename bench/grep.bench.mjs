// Grep through POST /execute (app.inject, no sockets) with `grep.engine: "rg"`
// against the same queries with `"js"`, in the same run: multiline searches
// over a big tree (this repository's node_modules, or BENCH_GREP_TREE), and
// the long-line cases of test/grep-huge.test.ts (a 12 MB line, plain; a 3 MB
// line, multiline), which must stay fast. Each figure is the median of
// BENCH_ROUNDS runs, engines alternating; the answers must be equal.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../dist/app.js';
import { quick, root, table, writeResult } from './lib.mjs';

const rounds = Number(process.env.BENCH_ROUNDS ?? (quick ? 1 : 3));
const tree = fs.realpathSync(process.env.BENCH_GREP_TREE ?? path.join(root, 'node_modules'));

async function app(dir, engine) {
  return buildApp({
    logger: false,
    config: {
      workspace: { root: dir },
      storage: { path: ':memory:' },
      grep: { engine },
      permissions: { allow: ['Grep'] },
      logging: { level: 'warn' },
    },
  });
}

async function grepOnce(a, input) {
  const t0 = performance.now();
  const res = await a.inject({
    method: 'POST',
    url: '/execute',
    payload: { session_id: 'bench-grep', tool_uses: [{ type: 'tool_use', id: `toolu_${Math.random().toString(36).slice(2, 10)}`, name: 'Grep', input }] },
  });
  const ms = performance.now() - t0;
  const block = res.json().tool_results[0];
  const text = typeof block.content === 'string' ? block.content : block.content.map((b) => b.text ?? '').join('\n');
  return { ms, text, isError: block.is_error === true };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

async function measure(label, dir, input) {
  const apps = { rg: await app(dir, 'rg'), js: await app(dir, 'js') };
  try {
    const ms = { rg: [], js: [] };
    const texts = {};
    for (let i = 0; i < rounds; i++) {
      for (const e of ['rg', 'js']) {
        const r = await grepOnce(apps[e], input);
        if (r.isError) throw new Error(`${label} (${e}): ${r.text}`);
        ms[e].push(r.ms);
        // A persisted result's id differs between the two apps; its size and preview must not.
        texts[e] = r.text.replace(/result:\/\/res_[\w-]+/g, 'result://ID');
      }
    }
    const rg = Math.round(median(ms.rg));
    const js = Math.round(median(ms.js));
    return { case: label, rg_ms: rg, js_ms: js, js_over_rg: +(js / Math.max(1, rg)).toFixed(2), same: texts.rg === texts.js, lines: texts.rg.split('\n').length };
  } finally {
    await Promise.all([apps.rg.close(), apps.js.close()]);
  }
}

export async function grepBench() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-grep-bench-'));
  try {
    const huge = path.join(tmp, 'huge');
    fs.mkdirSync(huge);
    fs.writeFileSync(path.join(huge, 'one-line.txt'), Buffer.alloc(12_000_000, 'a'));
    fs.writeFileSync(path.join(huge, 'small.txt'), 'a\n');
    const bundle = path.join(tmp, 'bundle');
    fs.mkdirSync(bundle);
    fs.writeFileSync(path.join(bundle, 'a-small.txt'), 'ab\nc\n');
    fs.writeFileSync(path.join(bundle, 'bundle.min.js'), `x\n${'a'.repeat(3_000_000)}\nb\n`);
    const rel = tree === fs.realpathSync(path.join(root, 'node_modules')) ? 'node_modules' : tree;
    const rows = [];
    const cases = [
      [`${rel}: multiline count`, tree, { pattern: 'async function\\s*\\w*\\([^)]*\\)\\s*\\{\\n', multiline: true, output_mode: 'count', head_limit: 0 }],
      [`${rel}: multiline content`, tree, { pattern: 'import \\{[^}]*\\n[^}]*\\}', multiline: true, output_mode: 'content', head_limit: 0 }],
      [`${rel}: multiline files`, tree, { pattern: 'export default\\s*\\{\\n', multiline: true, head_limit: 0 }],
      ['12 MB line: content `a`', huge, { pattern: 'a', output_mode: 'content' }],
      ['12 MB line: count `a`', huge, { pattern: 'a', output_mode: 'count' }],
      ['3 MB line: multiline count `.`', bundle, { pattern: '.', multiline: true, output_mode: 'count' }],
      ['3 MB line: multiline content `^a`', bundle, { pattern: '^a', multiline: true, output_mode: 'content' }],
    ];
    for (const [label, dir, input] of cases) rows.push(await measure(label, dir, input));
    console.log(`\nGrep through /execute, rg engine vs JS engine (median of ${rounds}, ms)`);
    table(rows);
    writeResult('grep', { rows, tree: rel });
    return rows;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await grepBench();
