// A catalog with 200 MCP tools: its size in tokens with and without deferral,
// and GET /tools requests per second (with If-None-Match answered 304, and
// without) against a bare Fastify route serving the same bytes, same run.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { z } from 'zod';
import { buildApp } from '../dist/app.js';
import { buildTool } from '../dist/tool/build-tool.js';
import { cannon, quick, summarise, table, writeResult } from './lib.mjs';

function mcpTools(n) {
  const tools = [];
  for (let i = 0; i < n; i++) {
    const server = `srv${i % 8}`;
    const name = `tool_${i}`;
    tools.push({
      ...buildTool({
        name: `mcp__${server}__${name}`,
        description: `Performs operation ${i} against the ${server} service: reads or updates records, with paging, filtering and sorting options as described by its parameters.`,
        inputSchema: z.strictObject({
          id: z.string().describe('The record id'),
          filter: z.string().optional().describe('A filter expression'),
          limit: z.number().int().optional().describe('At most this many'),
          cursor: z.string().optional().describe('Where the previous page ended'),
        }),
        maxResultSizeChars: 100_000,
        call: async () => ({ data: 'ok' }),
      }),
      mcpInfo: { serverName: server, toolName: name },
    });
  }
  return tools;
}

export async function catalogBench() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-'));
  fs.mkdirSync(path.join(dir, 'ws'));
  const app = await buildApp({ logger: false, mcpTools: mcpTools(200), config: { workspace: { root: path.join(dir, 'ws') }, storage: { path: path.join(dir, 'db.sqlite') } } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${app.server.address().port}/tools`;
  const first = await fetch(url);
  const etag = first.headers.get('etag');
  const catalog = await first.json();
  const bodyText = JSON.stringify(catalog);

  const bare = Fastify({ logger: false });
  bare.get('/tools', async (_req, reply) => reply.type('application/json').header('etag', etag).send(bodyText));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${bare.server.address().port}/tools`;

  const duration = quick ? 3 : 8;
  const run = async (u, headers = {}) => summarise(await cannon({ url: u, connections: 10, duration, headers }));
  await run(bareUrl);
  await run(url);
  const b = await run(bareUrl);
  const full = await run(url);
  const hit = await run(url, { 'if-none-match': etag });
  await app.close();
  await bare.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const tokens = { tools: catalog.tools.length + catalog.deferred_tools.length, full: catalog.tokens.full, deferred: catalog.tokens.deferred, saving: +(1 - catalog.tokens.deferred / catalog.tokens.full).toFixed(3) };
  const rows = [
    { case: 'bare Fastify, same bytes', rps: b.rps, vs_bare: 1 },
    { case: 'GET /tools (200)', rps: full.rps, vs_bare: +(full.rps / b.rps).toFixed(3) },
    { case: 'GET /tools If-None-Match (304)', rps: hit.rps, vs_bare: +(hit.rps / b.rps).toFixed(3) },
  ];
  console.log(`\nCatalog of ${tokens.tools} tools (200 from MCP): ${tokens.full} tokens in full, ${tokens.deferred} with deferral (saving ${(tokens.saving * 100).toFixed(1)}%)`);
  table(rows);
  writeResult('catalog', { tokens, rows });
  return { tokens, rows };
}

if (import.meta.url === `file://${process.argv[1]}`) await catalogBench();
