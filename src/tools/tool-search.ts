/**
 * ToolSearch (contract §5): finds deferred tools — those the catalog lists by
 * name only — and returns their full definitions. Never deferred itself.
 *
 * Query forms, as in Claude Code: `select:A,B` picks tools by name; an exact
 * tool name; an `mcp__server` prefix; otherwise keywords, where `+term` must
 * appear (in a name part, the description or the search hint). Each term
 * scores: a name part equal to it +10 (+12 for MCP tools), a name part
 * containing it +5 (+6), the full name containing it +3 (only while the score
 * is still 0), a search-hint word +4, a description word +2. Tools scoring 0
 * are dropped; the rest are sorted by score (ties keep catalog order) and
 * capped at max_results.
 *
 * The result holds `tool_reference` blocks (Anthropic's tool search), and —
 * because other models cannot use those — a text block with each match's
 * name, description and input JSON Schema.
 */
import { z } from 'zod';
import { isDeferred } from '../pool/pool.js';
import { buildTool } from '../tool/build-tool.js';
import type { AnyTool, ContentBlock } from '../tool/types.js';
import { loadPrompt } from './prompt.js';

export const DEFAULT_MAX_RESULTS = 5;

export const ToolSearchInput = z.strictObject({
  query: z
    .string()
    .describe('Query to find deferred tools. Use "select:<tool_name>" for direct selection, or keywords to search.'),
  max_results: z.number().int().positive().max(100).default(DEFAULT_MAX_RESULTS).describe('Maximum number of results to return (default: 5)'),
});
export type ToolSearchInput = z.infer<typeof ToolSearchInput>;

export interface ToolSearchOutput {
  matches: string[];
  query: string;
  total_deferred_tools: number;
  /** The matches' definitions (name, description, input JSON Schema). */
  definitions: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
}

interface ParsedName {
  parts: string[];
  full: string;
  isMcp: boolean;
}

/** Name parts as Claude Code splits them: MCP names on `__` and `_`, others on CamelCase and `_`. */
export function parseToolName(name: string): ParsedName {
  if (name.startsWith('mcp__')) {
    const rest = name.slice(5).toLowerCase();
    return {
      parts: rest.split('__').flatMap((p) => p.split('_')).filter(Boolean),
      full: rest.replace(/__/g, ' ').replace(/_/g, ' '),
      isMcp: true,
    };
  }
  const parts = name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
  return { parts, full: parts.join(' '), isMcp: false };
}

function wordPattern(term: string): RegExp {
  return new RegExp(`\\b${term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
}

export interface SearchResult {
  matches: AnyTool[];
  totalDeferred: number;
}

/**
 * The search itself, over the tools a session sees (`ctx.listTools()` or a
 * pool view): only deferred tools are searched, though `select:` and an
 * exact name also find a loaded tool, as in Claude Code.
 */
export function searchTools(tools: readonly AnyTool[], query: string, maxResults = DEFAULT_MAX_RESULTS): SearchResult {
  const deferred = tools.filter(isDeferred);
  const result = (matches: AnyTool[]): SearchResult => ({ matches, totalDeferred: deferred.length });
  const byName = (list: readonly AnyTool[], name: string): AnyTool | undefined =>
    list.find((t) => t.name === name) ?? list.find((t) => t.name.toLowerCase() === name.toLowerCase());

  const select = /^select:(.+)$/is.exec(query.trim());
  if (select) {
    const found: AnyTool[] = [];
    for (const name of select[1]!.split(',').map((s) => s.trim()).filter(Boolean)) {
      const t = byName(deferred, name) ?? byName(tools, name);
      if (t && !found.includes(t)) found.push(t);
    }
    return result(found);
  }

  const q = query.toLowerCase().trim();
  if (q.length === 0) return result([]);
  const exact = deferred.find((t) => t.name.toLowerCase() === q) ?? tools.find((t) => t.name.toLowerCase() === q);
  if (exact) return result([exact]);
  if (q.startsWith('mcp__') && q.length > 5) {
    const prefixed = deferred.filter((t) => t.name.toLowerCase().startsWith(q)).slice(0, maxResults);
    if (prefixed.length > 0) return result(prefixed);
  }

  const terms = q.split(/\s+/).filter(Boolean);
  const required: string[] = [];
  const optional: string[] = [];
  for (const term of terms) {
    if (term.startsWith('+') && term.length > 1) required.push(term.slice(1));
    else optional.push(term);
  }
  const scoring = required.length > 0 ? [...required, ...optional] : terms;
  const patterns = new Map(scoring.map((t) => [t, wordPattern(t)]));
  const texts = (t: AnyTool) => ({ name: parseToolName(t.name), desc: t.description.toLowerCase(), hint: t.searchHint?.toLowerCase() ?? '' });

  let candidates = deferred;
  if (required.length > 0) {
    candidates = deferred.filter((t) => {
      const x = texts(t);
      return required.every((term) => {
        const p = patterns.get(term)!;
        return x.name.parts.some((part) => part.includes(term)) || p.test(x.desc) || (x.hint !== '' && p.test(x.hint));
      });
    });
  }
  const scored = candidates.map((t, index) => {
    const x = texts(t);
    let score = 0;
    for (const term of scoring) {
      const p = patterns.get(term)!;
      if (x.name.parts.includes(term)) score += x.name.isMcp ? 12 : 10;
      else if (x.name.parts.some((part) => part.includes(term))) score += x.name.isMcp ? 6 : 5;
      if (score === 0 && x.name.full.includes(term)) score += 3;
      if (x.hint !== '' && p.test(x.hint)) score += 4;
      if (p.test(x.desc)) score += 2;
    }
    return { t, score, index };
  });
  return result(
    scored
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .slice(0, maxResults)
      .map((s) => s.t),
  );
}

export const NO_MATCH = 'No matching deferred tools found';

/** The definitions as the model-facing text block gives them (Claude Code's <functions> encoding). */
export function definitionsText(defs: ToolSearchOutput['definitions']): string {
  const lines = defs.map((d) => `<function>${JSON.stringify({ description: d.description, name: d.name, parameters: d.input_schema })}</function>`);
  return (
    `${defs.length} deferred tool${defs.length === 1 ? '' : 's'} found. Their definitions follow; each is now callable like any other tool.\n` +
    `<functions>\n${lines.join('\n')}\n</functions>`
  );
}

export const toolSearchTool = buildTool({
  name: 'ToolSearch',
  description: loadPrompt(new URL('./tool-search.md', import.meta.url)),
  inputSchema: ToolSearchInput,
  maxResultSizeChars: 100_000,
  mayBeReadOnly: true,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  // It reads only the catalog this session already sees.
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'ToolSearch reads the tool catalog only' }),
  call: async (input, ctx) => {
    const { matches, totalDeferred } = searchTools(ctx.listTools(), input.query, input.max_results);
    const data: ToolSearchOutput = {
      matches: matches.map((t) => t.name),
      query: input.query,
      total_deferred_tools: totalDeferred,
      definitions: matches.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputJSONSchema })),
    };
    return { data };
  },
  renderToolUseMessage: (input) => `ToolSearch(${JSON.stringify(input.query)})`,
  getToolUseSummary: (input) => input.query,
  renderToolResultMessage: (out) => (out.matches.length === 0 ? NO_MATCH : `Found ${out.matches.join(', ')}`),
  toAutoClassifierInput: () => '',
  mapToolResultToToolResultBlockParam: (out, toolUseId) => {
    if (out.matches.length === 0) return { type: 'tool_result', tool_use_id: toolUseId, content: NO_MATCH };
    const content: ContentBlock[] = [
      ...out.matches.map((name): ContentBlock => ({ type: 'tool_reference', tool_name: name })),
      { type: 'text', text: definitionsText(out.definitions) },
    ];
    return { type: 'tool_result', tool_use_id: toolUseId, content };
  },
});
