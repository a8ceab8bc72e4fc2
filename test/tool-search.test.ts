/**
 * ToolSearch: its query forms and scoring over a realistic set of deferred
 * tools, its result blocks through POST /execute, and GET /tools/search on a
 * Fastify instance with the route registered.
 */
import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { installErrorHandling } from '../src/http/error-handler.js';
import { toolSearchRoutes } from '../src/http/routes/tool-search.js';
import { isDeferred } from '../src/pool/pool.js';
import { buildTool } from '../src/tool/build-tool.js';
import type { AnyTool, ContentBlock, ToolContext } from '../src/tool/types.js';
import { NO_MATCH, parseToolName, searchTools, toolSearchTool } from '../src/tools/tool-search.js';
import { readTool } from '../src/tools/read.js';
import { cleanupTmp, execute, makeApp, use, type TestApp } from './helpers.js';

afterAll(cleanupTmp);

function mcp(server: string, tool: string, description: string, props: Record<string, z.ZodType> = { text: z.string() }): AnyTool {
  return buildTool({
    name: `mcp__${server}__${tool}`,
    description,
    inputSchema: z.object(props),
    maxResultSizeChars: 100_000,
    mcpInfo: { serverName: server, toolName: tool },
    call: async () => ({ data: 'ok' }),
  });
}

function deferredBuiltin(name: string, description: string, searchHint?: string): AnyTool {
  return buildTool({
    name,
    description,
    searchHint,
    shouldDefer: true,
    inputSchema: z.object({ x: z.string().optional() }),
    maxResultSizeChars: 100_000,
    call: async () => ({ data: 'ok' }),
  });
}

const SLACK_SEND = mcp('slack', 'send_message', 'Send a message to a Slack channel', { channel: z.string(), text: z.string() });
const SLACK_LIST = mcp('slack', 'list_channels', 'List the channels of the workspace');
const GH_ISSUE = mcp('github', 'create_issue', 'Create an issue in a repository');
const GH_SEARCH = mcp('github', 'search_code', 'Search code across repositories; returns matching files');
const NOTION = mcp('notion', 'query_database', 'Query a Notion database and return pages');
const NOTEBOOK = deferredBuiltin('NotebookEdit', 'Replace the contents of a cell in a Jupyter notebook.', 'edit jupyter notebook cells');
const TODO = deferredBuiltin('TodoWrite', 'Create and manage a structured task list for the session; send updates as you work.');
const WEB = deferredBuiltin('WebFetch', 'Fetches a URL and returns its content as Markdown.', 'fetch a web page');
const ALWAYS = { ...mcp('always', 'ping', 'Send a ping message'), alwaysLoad: true } as AnyTool;

/** Built-ins first, then MCP tools, like a pool view. */
const TOOLS: AnyTool[] = [NOTEBOOK, readTool, TODO, WEB, toolSearchTool, ALWAYS, GH_ISSUE, GH_SEARCH, NOTION, SLACK_LIST, SLACK_SEND];
const names = (q: string, max?: number) => searchTools(TOOLS, q, max).matches.map((t) => t.name);

describe('searchTools', () => {
  it('searches deferred tools only: MCP tools and shouldDefer tools, never ToolSearch or alwaysLoad tools', () => {
    expect(TOOLS.filter(isDeferred).map((t) => t.name)).toEqual([
      'NotebookEdit',
      'TodoWrite',
      'WebFetch',
      'mcp__github__create_issue',
      'mcp__github__search_code',
      'mcp__notion__query_database',
      'mcp__slack__list_channels',
      'mcp__slack__send_message',
    ]);
    expect(searchTools(TOOLS, 'x').totalDeferred).toBe(8);
  });

  it('splits names as Claude Code does', () => {
    expect(parseToolName('mcp__slack__send_message')).toEqual({ parts: ['slack', 'send', 'message'], full: 'slack send message', isMcp: true });
    expect(parseToolName('NotebookEdit')).toEqual({ parts: ['notebook', 'edit'], full: 'notebook edit', isMcp: false });
  });

  it('select: picks tools by name, in the order asked, without repeats, skipping unknown names', () => {
    expect(names('select:WebFetch,mcp__slack__send_message,Nope,WebFetch')).toEqual(['WebFetch', 'mcp__slack__send_message']);
    expect(names('SELECT: notebookedit')).toEqual(['NotebookEdit']);
    expect(names('select:Read')).toEqual(['Read']);
  });

  it('an exact name wins outright, whatever its case', () => {
    expect(names('webfetch')).toEqual(['WebFetch']);
  });

  it('an mcp__server prefix lists that server’s tools, capped', () => {
    expect(names('mcp__slack')).toEqual(['mcp__slack__list_channels', 'mcp__slack__send_message']);
    expect(names('mcp__github', 1)).toEqual(['mcp__github__create_issue']);
  });

  it('scores name parts, hints and descriptions with Claude Code’s weights', () => {
    // "send": slack send_message has the part (12) + description word (2) = 14;
    // TodoWrite has it in its description only (2).
    expect(names('send')).toEqual(['mcp__slack__send_message', 'TodoWrite']);
    // "notebook": NotebookEdit part (10) + hint (4) + description (2) = 16; query_database's
    // description says "Notion", not "notebook".
    expect(names('notebook')).toEqual(['NotebookEdit']);
    // "jupyter" is in NotebookEdit's hint and description: 4 + 2.
    expect(names('jupyter')).toEqual(['NotebookEdit']);
    // A partial name part: "chan" in list_channels (6) beats nothing else.
    expect(names('chan')).toEqual(['mcp__slack__list_channels']);
    // Two terms add up; ties keep catalog order.
    expect(names('search code')).toEqual(['mcp__github__search_code']);
    expect(names('repository issue')).toEqual(['mcp__github__create_issue']);
  });

  it('+term is required', () => {
    expect(names('message send')).toEqual(['mcp__slack__send_message', 'TodoWrite']);
    expect(names('+slack send')).toEqual(['mcp__slack__send_message', 'mcp__slack__list_channels']);
    expect(names('+github +issue')).toEqual(['mcp__github__create_issue']);
    expect(names('+nothingmatches send')).toEqual([]);
  });

  it('drops tools that score nothing and caps the count', () => {
    expect(names('zebra')).toEqual([]);
    expect(names('a', 3)).toHaveLength(3);
  });
});

describe('the ToolSearch tool', () => {
  it('returns tool_reference blocks and a text block with the full definitions', async () => {
    const ctx = { listTools: () => TOOLS } as unknown as ToolContext;
    const out = await toolSearchTool.call({ query: 'select:mcp__slack__send_message', max_results: 5 }, ctx, async () => ({ behavior: 'allow' }), undefined, () => {});
    expect(out.data).toMatchObject({ matches: ['mcp__slack__send_message'], query: 'select:mcp__slack__send_message', total_deferred_tools: 8 });
    const block = toolSearchTool.mapToolResultToToolResultBlockParam(out.data, 'tu1');
    const content = block.content as ContentBlock[];
    expect(content[0]).toEqual({ type: 'tool_reference', tool_name: 'mcp__slack__send_message' });
    const text = (content[1] as { text: string }).text;
    const fn = /<function>(.*)<\/function>/.exec(text)![1]!;
    expect(JSON.parse(fn)).toEqual({
      description: 'Send a message to a Slack channel',
      name: 'mcp__slack__send_message',
      parameters: SLACK_SEND.inputJSONSchema,
    });
    expect(toolSearchTool.mapToolResultToToolResultBlockParam({ ...out.data, matches: [], definitions: [] }, 'tu2').content).toBe(NO_MATCH);
  });

  describe('through the service', () => {
    let t: TestApp | undefined;
    afterAll(async () => t?.close());

    it('finds deferred tools of the session’s catalog, is never deferred, and needs no permission rule', async () => {
      t = await makeApp({}, { builtins: [readTool, WEB, toolSearchTool, NOTEBOOK], mcpTools: [SLACK_SEND, GH_ISSUE] });
      const catalog = (await t.app.inject({ method: 'GET', url: '/tools' })).json() as { tools: Array<{ name: string }>; deferred_tools: string[] };
      expect(catalog.tools.map((x) => x.name)).toContain('ToolSearch');
      expect(catalog.deferred_tools).toEqual(['NotebookEdit', 'WebFetch', 'mcp__github__create_issue', 'mcp__slack__send_message']);
      const r = await execute(t.app, { tool_uses: [use('ToolSearch', { query: 'slack message' }, 'a'), use('ToolSearch', { query: 'kubernetes' }, 'b')] });
      expect(r.body.executions.map((e) => e.status)).toEqual(['succeeded', 'succeeded']);
      const blocks = r.body.tool_results[0]!.content as ContentBlock[];
      expect(blocks[0]).toEqual({ type: 'tool_reference', tool_name: 'mcp__slack__send_message' });
      expect(blocks.at(-1)).toMatchObject({ type: 'text' });
      expect(r.body.tool_results[1]!.content).toBe(NO_MATCH);
    });

    it('GET /tools/search answers what ToolSearch answers, in the requested format', async () => {
      t ??= await makeApp({}, { builtins: [readTool, WEB, toolSearchTool, NOTEBOOK], mcpTools: [SLACK_SEND, GH_ISSUE] });
      const f = Fastify();
      installErrorHandling(f);
      toolSearchRoutes(f, t.app.toolexec);
      await f.ready();
      try {
        const a = (await f.inject({ method: 'GET', url: '/tools/search?q=slack%20message' })).json();
        expect(a).toEqual({
          matches: ['mcp__slack__send_message'],
          query: 'slack message',
          total_deferred_tools: 4,
          tools: [{ name: 'mcp__slack__send_message', description: 'Send a message to a Slack channel', input_schema: SLACK_SEND.inputJSONSchema }],
        });
        const o = (await f.inject({ method: 'GET', url: '/tools/search?q=select:WebFetch,NotebookEdit&format=openai&max_results=1' })).json();
        expect(o.matches).toEqual(['WebFetch', 'NotebookEdit']);
        expect(o.tools[0]).toEqual({ type: 'function', function: { name: 'WebFetch', description: WEB.description, parameters: WEB.inputJSONSchema } });
        const m = (await f.inject({ method: 'GET', url: '/tools/search?q=jupyter&format=mcp' })).json();
        expect(m.tools).toEqual([{ name: 'NotebookEdit', description: NOTEBOOK.description, inputSchema: NOTEBOOK.inputJSONSchema }]);
        const none = (await f.inject({ method: 'GET', url: '/tools/search?q=kubernetes' })).json();
        expect(none).toEqual({ matches: [], query: 'kubernetes', total_deferred_tools: 4, tools: [] });
        for (const url of ['/tools/search', '/tools/search?q=x&max_results=0', '/tools/search?q=x&format=xml']) {
          const bad = await f.inject({ method: 'GET', url });
          expect(bad.statusCode).toBe(400);
          expect(bad.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
        }
      } finally {
        await f.close();
      }
    });
  });
});

describe('a deferred tool called with parameters it does not take', () => {
  let t: TestApp | undefined;
  afterAll(async () => t?.close());

  it('tells the model to load its definition with ToolSearch select:, as Claude Code does; a loaded tool’s error has no such line', async () => {
    t = await makeApp({ permissions: { allow: ['TodoWrite', 'Read'] } });
    const r = await execute(t.app, {
      tool_uses: [use('TodoWrite', { items: ['a'] }, 'd1'), use('Read', { path: 'x' }, 'd2'), use('TodoWrite', { todos: [] }, 'd3')],
    });
    const [deferred, loaded, ok] = r.body.tool_results;
    expect(deferred!.is_error).toBe(true);
    expect(deferred!.content).toContain('The required parameter `todos` is missing');
    expect(deferred!.content).toContain('This tool is deferred');
    expect(deferred!.content).toContain('call ToolSearch with query "select:TodoWrite", then retry this call');
    expect(loaded!.is_error).toBe(true);
    expect(loaded!.content).not.toContain('ToolSearch');
    expect(ok!.is_error).toBeUndefined();
  });
});
