/**
 * `toolexec health`: asks GET /healthz (or /readyz with --ready) and exits 0
 * when the service answers 200. Small on purpose: the container's
 * HEALTHCHECK runs it every few seconds, so it loads nothing of the service.
 */
import { intOption, flag, parse, str } from './args.js';
import { request, serviceTarget } from './client.js';
import { EXIT_FAILURE, type CliIO, type CommandResult } from './io.js';

export const DEFAULT_URL = 'http://127.0.0.1:8787';

export const HEALTH_HELP = `usage: toolexec health [options]

Exits 0 when the service is alive (GET /healthz answers 200), 1 otherwise.
Needs no token.

  --ready                  ask GET /readyz instead: the database takes writes and
                           every required MCP server is connected
  --timeout MS             give up after MS milliseconds (default 3000)
  --url URL                the service (default: $TOOLEXEC_URL, else ${DEFAULT_URL})
`;

const OPTIONS = { url: { type: 'string' }, ready: { type: 'boolean' }, timeout: { type: 'string' } } as const;

export async function healthCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, help } = parse('health', args, OPTIONS, 0);
  if (help) {
    io.stdout.write(HEALTH_HELP);
    return 0;
  }
  const timeout = intOption('health', values, 'timeout', 3000, 1, 600_000);
  const target = serviceTarget('health', { url: str(values, 'url') ?? io.env.TOOLEXEC_URL ?? DEFAULT_URL }, { ...io, env: {} })!;
  const path = flag(values, 'ready') ? '/readyz' : '/healthz';
  const { status, body } = await request<{ status?: string; failing?: string[] }>(target, path, { timeoutMs: timeout, accept: [503] });
  const what = body?.status ?? String(status);
  io.stdout.write(`${path}: ${what}${body?.failing?.length ? ` (${body.failing.join(', ')})` : ''}\n`);
  return status === 200 ? 0 : EXIT_FAILURE;}
