// Cold start to ready: `toolexec serve` from process start until /readyz
// answers 200, without and with MCP servers (and until those are connected),
// beside a bare Fastify server's start in the same run.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchDir, quick, root, table, writeResult } from './lib.mjs';

async function startAndTime(args, { waitMcp = false } = {}) {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = await new Promise((resolve, reject) => {
    const onData = (b) => {
      out += b;
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)|LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1] ?? m[2]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (c) => reject(new Error(`exited ${c}: ${out}`)));
  });
  const listening = performance.now() - t0;
  let ready = listening;
  if (!args.some((a) => a.endsWith('bare-start.mjs'))) {
    for (;;) {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
      if (r?.status === 200) break;
      await new Promise((res) => setTimeout(res, 5));
    }
    ready = performance.now() - t0;
  }
  let mcp = null;
  if (waitMcp) {
    for (;;) {
      const r = await (await fetch(`http://127.0.0.1:${port}/mcp/servers`)).json();
      if (r.servers.every((s) => s.state === 'connected')) break;
      await new Promise((res) => setTimeout(res, 10));
    }
    mcp = performance.now() - t0;
  }
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  return { listening, ready, mcp };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function coldStartBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  const bareFile = path.join(dir, 'bare-start.mjs');
  fs.writeFileSync(bareFile, `import Fastify from '${path.join(root, 'node_modules/fastify/fastify.js')}';\nconst a = Fastify();\na.get('/', async () => ({ ok: true }));\nawait a.listen({ host: '127.0.0.1', port: 0 });\nconsole.log('LISTENING ' + a.server.address().port);\nprocess.on('SIGTERM', () => process.exit(0));\n`);
  const plain = path.join(dir, 'plain.json');
  fs.writeFileSync(plain, JSON.stringify({ workspace: { root: './ws' }, storage: { path: './plain.db' }, logging: { level: 'warn' } }));
  const withMcp = path.join(dir, 'mcp.json');
  fs.writeFileSync(
    withMcp,
    JSON.stringify({
      workspace: { root: './ws' },
      storage: { path: './mcp.db' },
      logging: { level: 'warn' },
      mcpServers: {
        everything: { command: process.execPath, args: [path.join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'] },
        fixture: { command: process.execPath, args: [path.join(root, 'test/fixtures/mcp/fixture-server.mjs')] },
      },
    }),
  );
  const cli = path.join(root, 'dist/cli.js');
  const runs = quick ? 3 : 7;
  const measure = async (args, opts) => {
    const xs = [];
    for (let i = 0; i < runs; i++) xs.push(await startAndTime(args, opts));
    return { listening: median(xs.map((x) => x.listening)), ready: median(xs.map((x) => x.ready)), mcp: xs[0].mcp === null ? null : median(xs.map((x) => x.mcp)) };
  };
  const bare = await measure([bareFile]);
  const noMcp = await measure([cli, 'serve', '--config', plain, '--port', '0']);
  const mcp = await measure([cli, 'serve', '--config', withMcp, '--port', '0'], { waitMcp: true });
  fs.rmSync(dir, { recursive: true, force: true });
  const rows = [
    { case: 'bare Fastify (baseline)', listening_ms: Math.round(bare.listening), ready_ms: Math.round(bare.ready), mcp_connected_ms: '-' },
    { case: 'toolexec, no MCP servers', listening_ms: Math.round(noMcp.listening), ready_ms: Math.round(noMcp.ready), mcp_connected_ms: '-' },
    { case: 'toolexec, 2 stdio MCP servers', listening_ms: Math.round(mcp.listening), ready_ms: Math.round(mcp.ready), mcp_connected_ms: Math.round(mcp.mcp) },
  ];
  console.log(`\nCold start to ready (median of ${runs}; target ≤ 500 ms without MCP servers)`);
  table(rows);
  writeResult('cold-start', { target: 'ready_ms <= 500 without MCP', rows });
  void benchDir;
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await coldStartBench();
