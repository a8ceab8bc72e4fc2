/**
 * The catalog reports its size in tokens with and without deferral (contract
 * §5): `full` is every definition loaded up front (no ToolSearch needed),
 * `deferred` is the loaded definitions (ToolSearch among them) plus the
 * deferred tools' names. Checked against an independent count over a pool of
 * the built-ins and 200 MCP tools, through GET /tools as well.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildCatalog, toolDefinition } from '../src/pool/catalog.js';
import { isDeferred, ToolPool } from '../src/pool/pool.js';
import { CHARS_PER_TOKEN } from '../src/pool/tokens.js';
import { RuleIndex } from '../src/permissions/rule-index.js';
import { buildTool } from '../src/tool/build-tool.js';
import type { AnyTool } from '../src/tool/types.js';
import { builtinTools } from '../src/tools/index.js';
import { grepTool } from '../src/tools/grep.js';
import { toolSearchTool } from '../src/tools/tool-search.js';
import { webFetchTool } from '../src/tools/web-fetch.js';
import { cleanupTmp, makeApp } from './helpers.js';

afterAll(cleanupTmp);

const VERBS = ['list', 'get', 'create', 'update', 'delete', 'search', 'export', 'sync', 'archive', 'restore'];
const NOUNS = ['issues', 'pages'];

/** Server N's tool M: a realistic description and a schema of a few documented fields. */
function fakeMcpTool(n: number, m: number): AnyTool {
  const verb = VERBS[m % VERBS.length]!;
  const noun = NOUNS[Math.floor(m / VERBS.length) % NOUNS.length]!;
  return buildTool({
    name: `mcp__srv${n}__tool${m}`,
    description:
      `${verb[0]!.toUpperCase()}${verb.slice(1)} ${noun} in the srv${n} workspace. Returns the affected ${noun} as JSON, ` +
      `with their ids, titles, owners and timestamps. Use the cursor from a previous call to page through long results; ` +
      `fails with a clear error when the caller lacks access to the project.`,
    inputSchema: z.object({
      project: z.string().describe(`The srv${n} project key, e.g. "CORE"`),
      query: z.string().optional().describe('A filter expression; see the server documentation for its syntax'),
      limit: z.number().int().min(1).max(100).optional().describe('How many results to return at most (default 25)'),
      cursor: z.string().optional().describe('Opaque cursor returned by a previous call'),
      state: z.enum(['open', 'closed', 'all']).optional().describe('Which items to include'),
    }),
    maxResultSizeChars: 100_000,
    mcpInfo: { serverName: `srv${n}`, toolName: `tool${m}` },
    call: async () => ({ data: 'ok' }),
  });
}

const MCP_TOOLS: AnyTool[] = [];
for (let n = 0; n < 10; n++) for (let m = 0; m < 20; m++) MCP_TOOLS.push(fakeMcpTool(n, m));

function builtins(): AnyTool[] {
  const list = [...builtinTools()];
  for (const t of [grepTool, webFetchTool, toolSearchTool]) if (!list.some((x) => x.name === t.name)) list.push(t);
  return list;
}

const NO_RULES = new RuleIndex([], { root: '/', cwd: '/', home: '/', caseInsensitive: false });

function independentCount(view: readonly AnyTool[]): { full: number; deferred: number } {
  let full = 0;
  let deferred = 0;
  for (const t of view) {
    const def = JSON.stringify(toolDefinition(t, 'anthropic', false)).length;
    if (t.name !== 'ToolSearch') full += def;
    deferred += isDeferred(t) ? t.name.length + 1 : def;
  }
  return { full: Math.ceil(full / CHARS_PER_TOKEN), deferred: Math.ceil(deferred / CHARS_PER_TOKEN) };
}

describe('catalog token figures', () => {
  it('with 200 MCP tools: deferral saves most of the catalog, and the figures add up', () => {
    const pool = new ToolPool({ builtins: builtins(), features: {}, rules: NO_RULES, mcpTools: MCP_TOOLS });
    const view = pool.view('default');
    expect(view.filter((t) => t.mcpInfo)).toHaveLength(200);
    const body = JSON.parse(buildCatalog(view, 'anthropic', false).json) as {
      tools: Array<{ name: string }>;
      deferred_tools: string[];
      tokens: { full: number; deferred: number };
    };
    expect(body.tools.map((t) => t.name)).toContain('ToolSearch');
    expect(body.deferred_tools).not.toContain('ToolSearch');
    expect(body.deferred_tools).toEqual(view.filter(isDeferred).map((t) => t.name));
    expect(body.tokens).toEqual(independentCount(view));
    expect(body.tokens.deferred).toBeLessThan(body.tokens.full);
    const saving = 1 - body.tokens.deferred / body.tokens.full;
    console.log(
      `catalog tokens (chars/${CHARS_PER_TOKEN}), ${view.length} tools (${view.length - 200} built-in, 200 MCP): ` +
        `full ${body.tokens.full}, deferred ${body.tokens.deferred}, saving ${(saving * 100).toFixed(1)}% ` +
        `(${body.deferred_tools.length} deferred tools listed by name)`,
    );
    // Anthropic's figure for tool search is "over 85 percent" on large MCP setups.
    expect(saving).toBeGreaterThan(0.85);
    // The figures do not depend on whether deferred schemas are included in the body.
    expect(JSON.parse(buildCatalog(view, 'anthropic', true).json).tokens).toEqual(body.tokens);
  });

  it('without deferred tools ToolSearch is not listed and both figures are equal', () => {
    const plain = builtins().filter((t) => !isDeferred(t) && t.name !== 'ToolSearch');
    const view = new ToolPool({ builtins: [...plain, toolSearchTool], features: {}, rules: NO_RULES, mcpTools: [] }).view('default');
    expect(view.map((t) => t.name)).not.toContain('ToolSearch');
    const { tokens } = JSON.parse(buildCatalog(view, 'anthropic', false).json) as { tokens: { full: number; deferred: number } };
    expect(tokens.full).toBe(tokens.deferred);
    expect(tokens.full).toBeGreaterThan(0);
  });

  it('GET /tools reports the same figures for the same pool', async () => {
    const t = await makeApp({}, { builtins: builtins(), mcpTools: MCP_TOOLS });
    try {
      const res = await t.app.inject({ method: 'GET', url: '/tools' });
      const body = res.json() as { tokens: { full: number; deferred: number }; deferred_tools: string[] };
      const view = t.app.toolexec.pool().view('default');
      expect(body.tokens).toEqual(independentCount(view));
      expect(body.deferred_tools.length).toBeGreaterThanOrEqual(200);
    } finally {
      await t.close();
    }
  });
});
