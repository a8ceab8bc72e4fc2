/**
 * `toolexec tools`: the tool catalog, from the configuration (built
 * in-process, no server needed) or from a running service (--url).
 */
import { CONFIG_HELP, CONFIG_OPTIONS, REMOTE_HELP, REMOTE_OPTIONS, choice, flag, intOption, parse, str } from './args.js';
import { loadCliConfig, namesConfig } from './config.js';
import { CliError, EXIT_FAILURE, usageError, type CliIO, type CommandResult } from './io.js';
import { injectJson, openLocalApp } from './local.js';
import { chooseTarget, request } from './client.js';

export const TOOLS_HELP = `usage: toolexec tools [options]

Prints the tool catalog a model would be given: each tool's name, whether it
is loaded up front or deferred (found through ToolSearch), and the catalog's
size in tokens. Built from the configuration (no server needed), or asked of
a running service with --url.

  --json                   print the catalog exactly as GET /tools returns it
  --format FORMAT          anthropic (default), openai or mcp (with --json)
  --include-deferred       full definitions of deferred tools too (with --json)
  --session ID             the catalog as that session's mode sees it
  --no-mcp                 do not connect the configured MCP servers (local only)
  --mcp-wait MS            how long to wait for MCP servers to connect (default 15000)
${CONFIG_HELP}
${REMOTE_HELP}
`;

const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...REMOTE_OPTIONS,
  json: { type: 'boolean' },
  format: { type: 'string' },
  'include-deferred': { type: 'boolean' },
  session: { type: 'string' },
  'no-mcp': { type: 'boolean' },
  'mcp-wait': { type: 'string' },
} as const;

const FORMATS = ['anthropic', 'openai', 'mcp'] as const;

interface CatalogBody {
  tools: Array<Record<string, unknown>>;
  deferred_tools: string[];
  tokens: { full: number; deferred: number };
  etag: string;
}

/** Name and description of a definition in any of the three shapes. */
function nameAndDescription(def: Record<string, unknown>): { name: string; description: string } {
  const fn = def.function as { name?: unknown; description?: unknown } | undefined;
  const src = fn ?? def;
  return { name: String(src.name ?? ''), description: typeof src.description === 'string' ? src.description : '' };
}

function firstLine(s: string, max: number): string {
  const line = (s.split('\n').find((l) => l.trim().length > 0) ?? '').trim().replace(/^[-*]\s+/, '');
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function formatCatalog(all: CatalogBody): string {
  const rows = all.tools.map((def) => {
    const { name, description } = nameAndDescription(def);
    return { name, deferred: def.defer_loading === true, description };
  });
  const width = Math.max(4, ...rows.map((r) => r.name.length)) + 2;
  const out = [`${'TOOL'.padEnd(width)}${'LOADING'.padEnd(10)}DESCRIPTION`];
  for (const r of rows) out.push(`${r.name.padEnd(width)}${(r.deferred ? 'deferred' : 'up front').padEnd(10)}${firstLine(r.description, 90)}`);
  const deferred = rows.filter((r) => r.deferred).length;
  const n = (x: number): string => x.toLocaleString('en-US');
  out.push(
    `${rows.length} tools (${deferred} deferred, found through ToolSearch); ~${n(all.tokens.deferred)} tokens up front, ~${n(all.tokens.full)} without deferral`,
  );
  return `${out.join('\n')}\n`;
}

export async function toolsCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, help } = parse('tools', args, OPTIONS, 0);
  if (help) {
    io.stdout.write(TOOLS_HELP);
    return 0;
  }
  const json = flag(values, 'json');
  const format = choice('tools', values, 'format', FORMATS, 'anthropic');
  if (!json && (str(values, 'format') !== undefined || flag(values, 'include-deferred'))) {
    throw usageError('tools', '--format and --include-deferred shape the JSON output: add --json');
  }
  // The listing reads `defer_loading`, which only the Anthropic shape with every definition carries.
  const query = json
    ? { format, deferred: flag(values, 'include-deferred') ? 'include' : undefined, session_id: str(values, 'session') }
    : { format: 'anthropic', deferred: 'include', session_id: str(values, 'session') };
  const qs = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined)).toString();

  let body: CatalogBody;
  const target = chooseTarget('tools', values, io, namesConfig(values));
  if (target) {
    body = (await request<CatalogBody>(target, '/tools', { query , timeoutMs: 60_000 })).body;
  } else {
    const loaded = loadCliConfig(values, io);
    const local = await openLocalApp(loaded, io, { mcp: !flag(values, 'no-mcp'), mcpWaitMs: intOption('tools', values, 'mcp-wait', 15_000, 0) });
    try {
      const res = await injectJson<CatalogBody & { error?: { code: string; message: string } }>(local.app, 'GET', `/tools?${qs}`);
      if (res.status !== 200) throw new CliError(`tools: ${res.body.error?.code ?? res.status}: ${res.body.error?.message ?? ''}`, EXIT_FAILURE);
      body = res.body;
    } finally {
      await local.close();
    }
  }
  io.stdout.write(json ? `${JSON.stringify(body, null, 2)}\n` : formatCatalog(body));
  return 0;
}
