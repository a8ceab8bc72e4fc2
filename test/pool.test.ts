/**
 * The tool pool (contract §2) and the catalog GET /tools serves: stages,
 * ordering, MCP merge and clashes, mode views, ETag, byte-identical restarts.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileRules, RuleIndex } from '../src/permissions/rule-index.js';
import { buildCatalog } from '../src/pool/catalog.js';
import { mcpToolName } from '../src/pool/mcp-names.js';
import { ToolPool } from '../src/pool/pool.js';
import { buildTool } from '../src/tool/build-tool.js';
import { toJSONSchema } from '../src/tool/json-schema.js';
import type { AnyTool } from '../src/tool/types.js';
import { builtinTools } from '../src/tools/index.js';
import { cleanupTmp, makeApp, tmpDir, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const tool = (name: string, extra: Partial<AnyTool> = {}): AnyTool => ({
  ...buildTool({
    name,
    description: `the ${name} tool`,
    inputSchema: z.strictObject({ a: z.string() }),
    maxResultSizeChars: 1000,
    call: async () => ({ data: 'x' }),
  }),
  ...extra,
});
const mcp = (server: string, name: string, extra: Partial<AnyTool> = {}) =>
  tool(mcpToolName(server, name), { mcpInfo: { serverName: server, toolName: name }, ...extra });
const rules = (deny: string[] = [], allow: string[] = []) =>
  new RuleIndex(
    compileRules([
      ...deny.map((raw) => ({ raw, behavior: 'deny' as const, source: 'config' as const })),
      ...allow.map((raw) => ({ raw, behavior: 'allow' as const, source: 'config' as const })),
    ]).rules,
  );

describe('ToolPool', () => {
  it('puts built-ins first, then MCP tools, each sorted by name', () => {
    const pool = new ToolPool({
      builtins: [tool('Zeta'), tool('Alpha'), tool('Mid')],
      features: {},
      rules: rules(),
      mcpTools: [mcp('srv', 'b'), mcp('aaa', 'z'), mcp('srv', 'a')],
    });
    expect(pool.all.map((x) => x.name)).toEqual(['Alpha', 'Mid', 'Zeta', 'mcp__aaa__z', 'mcp__srv__a', 'mcp__srv__b']);
  });

  it('normalises MCP names and reports clashes instead of merging them', () => {
    expect(mcpToolName('my.server', 'get file/v2')).toBe('mcp__my_server__get_file_v2');
    const pool = new ToolPool({
      builtins: [tool('Read')],
      features: {},
      rules: rules(),
      mcpTools: [mcp('a.b', 'x'), mcp('a_b', 'x'), tool('Read', { mcpInfo: { serverName: 's', toolName: 'Read' } }), mcp('s', 'y'), mcp('s', 'n'.repeat(80))],
    });
    expect(pool.all.map((x) => x.name)).toEqual(['Read', 'mcp__s__y']);
    expect(pool.lookup('Read')!.mcpInfo).toBeUndefined();
    expect(pool.problems.map((p) => p.kind).sort()).toEqual(['mcp_name_clash', 'name_too_long', 'shadows_builtin']);
    const clash = pool.problems.find((p) => p.kind === 'mcp_name_clash')!;
    expect(clash.servers.sort()).toEqual(['a.b', 'a_b']);
  });

  it('drops tools switched off by feature flags or isEnabled, and hides blanket-denied ones from the catalog', () => {
    const pool = new ToolPool({
      builtins: [tool('A'), tool('B'), tool('C', { isEnabled: () => false }), tool('D')],
      features: { B: false },
      rules: rules(['D', 'mcp__srv']),
      mcpTools: [mcp('srv', 'x'), mcp('other', 'y')],
    });
    expect(pool.all.map((x) => x.name)).toEqual(['A', 'D', 'mcp__other__y', 'mcp__srv__x']);
    expect(pool.visible.map((x) => x.name)).toEqual(['A', 'mcp__other__y']);
    // Still resolvable, so that calling it gets an audited denial.
    expect(pool.lookup('D')?.name).toBe('D');
  });

  it('gives plan the tools that can be read-only and dontAsk also those an allow rule covers', () => {
    const pool = new ToolPool({
      builtins: [tool('Ro', { mayBeReadOnly: true }), tool('Rw'), tool('Allowed'), tool('Content')],
      features: {},
      rules: rules([], ['Allowed', 'Content(x)']),
      mcpTools: [],
    });
    expect(pool.view('plan').map((x) => x.name)).toEqual(['Ro']);
    expect(pool.view('dontAsk').map((x) => x.name)).toEqual(['Allowed', 'Content', 'Ro']);
    expect(pool.view('default').map((x) => x.name)).toEqual(['Allowed', 'Content', 'Ro', 'Rw']);
  });

  it('lists ToolSearch only when something is deferred', () => {
    const search = tool('ToolSearch');
    const withDeferred = new ToolPool({ builtins: [search, tool('A'), tool('B', { shouldDefer: true })], features: {}, rules: rules(), mcpTools: [] });
    expect(withDeferred.view('default').map((x) => x.name)).toEqual(['A', 'B', 'ToolSearch']);
    const without = new ToolPool({ builtins: [search, tool('A')], features: {}, rules: rules(), mcpTools: [] });
    expect(without.view('default').map((x) => x.name)).toEqual(['A']);
  });
});

describe('catalog', () => {
  it('lists deferred tools by name only, and reports tokens with and without deferral', () => {
    const tools = [tool('A'), tool('B', { shouldDefer: true }), mcp('s', 'x'), mcp('s', 'y', { alwaysLoad: true })];
    const c = JSON.parse(buildCatalog(tools, 'anthropic', false).json);
    expect(c.tools.map((x: { name: string }) => x.name)).toEqual(['A', 'mcp__s__y']);
    expect(c.deferred_tools).toEqual(['B', 'mcp__s__x']);
    expect(c.tokens.deferred).toBeLessThan(c.tokens.full);
    const all = JSON.parse(buildCatalog(tools, 'anthropic', true).json);
    expect(all.tools.map((x: { name: string; defer_loading?: boolean }) => [x.name, x.defer_loading ?? false])).toEqual([
      ['A', false],
      ['B', true],
      ['mcp__s__x', true],
      ['mcp__s__y', false],
    ]);
    expect(all.deferred_tools).toEqual([]);
  });

  it('serves the anthropic, openai and mcp shapes', async () => {
    t = await makeApp();
    const a = (await t.app.inject({ url: '/tools' })).json();
    const name = a.tools[0].name as string;
    expect(a.tools[0]).toEqual({ name, description: expect.any(String), input_schema: expect.objectContaining({ type: 'object' }) });
    const o = (await t.app.inject({ url: '/tools?format=openai' })).json();
    expect(o.tools[0]).toEqual({ type: 'function', function: { name, description: expect.any(String), parameters: expect.objectContaining({ type: 'object' }) } });
    const m = (await t.app.inject({ url: '/tools?format=mcp' })).json();
    expect(m.tools[0]).toEqual({ name, description: expect.any(String), inputSchema: expect.objectContaining({ type: 'object' }) });
    const bad = await t.app.inject({ url: '/tools?format=yaml' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
  });

  it('answers If-None-Match with 304 and the same ETag; the ETag follows the content', async () => {
    t = await makeApp();
    const first = await t.app.inject({ url: '/tools' });
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(first.json().etag).toBe(etag);
    const again = await t.app.inject({ url: '/tools', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const other = await t.app.inject({ url: '/tools?format=openai', headers: { 'if-none-match': etag } });
    expect(other.statusCode).toBe(200);
    expect(other.headers.etag).not.toBe(etag);
    t.app.toolexec.setMcpTools([mcp('srv', 'new')]);
    const changed = await t.app.inject({ url: '/tools', headers: { 'if-none-match': etag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.json().deferred_tools).toContain('mcp__srv__new');
    expect(first.json().deferred_tools).not.toContain('mcp__srv__new');
  });

  it('gives every built-in tool a JSON Schema that lists its properties', () => {
    for (const bt of builtinTools()) {
      const s = bt.inputJSONSchema as { type?: string; properties?: Record<string, unknown> };
      expect(s.type, bt.name).toBe('object');
      expect(Object.keys(s.properties ?? {}).length, bt.name).toBeGreaterThan(0);
      expect(s.properties, bt.name).toEqual((toJSONSchema(bt.inputSchema) as { properties: unknown }).properties);
    }
  });

  it('is byte-identical across restarts of the service with the same configuration', async () => {
    const dir = tmpDir();
    const config = path.join(dir, 'config.json');
    fs.mkdirSync(path.join(dir, 'ws'));
    fs.writeFileSync(config, JSON.stringify({ workspace: { root: './ws' }, storage: { path: './data/db.sqlite' }, permissions: { deny: ['Glob'] } }));
    const cli = path.resolve('dist/cli.js');
    const fetchCatalog = async (): Promise<string> => {
      const child = spawn(process.execPath, [cli, 'serve', '--config', config, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      const port = await new Promise<number>((resolve, reject) => {
        child.stderr.on('data', (b: Buffer) => {
          err += b.toString();
          const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(err);
          if (m) resolve(Number(m[1]));
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      try {
        const body = await (await fetch(`http://127.0.0.1:${port}/tools?format=anthropic`)).text();
        return body;
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.on('exit', r));
      }
    };
    const a = await fetchCatalog();
    const b = await fetchCatalog();
    expect(b).toBe(a);
    expect(JSON.parse(a).tools.map((x: { name: string }) => x.name)).not.toContain('Glob');
  });
});
