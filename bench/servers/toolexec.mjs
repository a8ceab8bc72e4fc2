// toolexec from dist/ with a no-op tool, auth on, auditing on (always), metrics
// on where the build has them. Storage in a temp dir.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { buildApp } from '../../dist/app.js';
import { buildTool } from '../../dist/tool/build-tool.js';
import { serveBench } from './serve.mjs';

export const BENCH_TOKEN = 'bench-token-0123456789abcdef';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolexec-bench-'));
fs.mkdirSync(path.join(dir, 'ws'));
const noop = buildTool({
  name: 'Noop',
  description: 'Does nothing',
  inputSchema: z.strictObject({}),
  maxResultSizeChars: 1000,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  call: async () => ({ data: 'ok' }),
});
const hooks = Number(process.env.BENCH_HOOKS ?? '0');
const app = await buildApp({
  logger: false,
  extraTools: [noop],
  config: {
    workspace: { root: path.join(dir, 'ws') },
    storage: { path: process.env.BENCH_STORAGE === 'memory' ? ':memory:' : path.join(dir, 'toolexec.db') },
    server: { tokens: [{ name: 'bench', token: BENCH_TOKEN, scopes: ['execute', 'read'] }], maxInFlightCalls: 100000 },
    permissions: { allow: ['Noop', ...(process.env.BENCH_ALLOW_BASH === '1' ? ['Bash'] : [])] },
    ...(process.env.BENCH_SPAWNER ? { execution: { spawner: process.env.BENCH_SPAWNER } } : {}),
    logging: { level: 'warn' },
    hooks: hooks > 0 ? { PreToolUse: [{ matcher: 'Noop', hooks: Array.from({ length: hooks }, (_, i) => ({ type: 'command', command: `exit 0 # ${i}` })) }] } : {},
  },
});
await serveBench(app, () => fs.rmSync(dir, { recursive: true, force: true }));
// Exported for ad-hoc profiling drivers that import this server to read its state (none is kept in bench/).
export { app };
