/**
 * What a failed MCP request means for the call: the transport failed (the
 * server is gone: `mcp_disconnected`), the server timed out, rejected the
 * arguments or does not know the tool, or the tool failed.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorClass } from '../pipeline/error-class.js';
import { oneLine } from '../util/text.js';

const MAX_ERROR_CHARS = 500;

export function clip(s: string): string {
  return oneLine(s, MAX_ERROR_CHARS);
}

/** A zod error: the SDK parses with zod's core (`$ZodError`), toolexec with zod (`ZodError`). */
export function isZodError(e: unknown): boolean {
  const name = (e as { name?: unknown } | null)?.name;
  return (name === 'ZodError' || name === '$ZodError') && Array.isArray((e as { issues?: unknown }).issues);
}

/** A zod error as its first issues with their paths, not the JSON dump its message is. */
function describeIssues(e: unknown): string | undefined {
  if (!isZodError(e)) return undefined;
  const issues = (e as { issues: unknown[] }).issues;
  if (issues.length === 0) return undefined;
  const parts = (issues.slice(0, 3) as Array<{ path?: unknown; message?: unknown }>).map((i) => {
    const where = Array.isArray(i.path) && i.path.length > 0 ? i.path.join('.') : '(root)';
    return `${where}: ${String(i.message)}`;
  });
  return parts.join('; ') + (issues.length > 3 ? `; and ${issues.length - 3} more` : '');
}

export function describeError(e: unknown): string {
  const issues = describeIssues(e);
  if (issues) return clip(issues);
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    const c = cause instanceof Error && cause.message && !e.message.includes(cause.message) ? ` (${cause.message})` : '';
    return clip(`${e.message || e.name}${c}`);
  }
  return clip(String(e));
}

export function isConnectionClosed(e: unknown): boolean {
  return e instanceof McpError && e.code === ErrorCode.ConnectionClosed;
}

/** A failure that says the transport, not the tool, failed. */
export function isTransportFailure(e: unknown): boolean {
  if (isConnectionClosed(e)) return true;
  if (e instanceof McpError) return false;
  const name = (e as { name?: unknown })?.name;
  const msg = e instanceof Error ? e.message : '';
  return (
    name === 'StreamableHTTPError' ||
    name === 'SseError' ||
    (e instanceof TypeError && /fetch failed/i.test(msg)) ||
    /Not connected|ECONNREFUSED|ECONNRESET|EPIPE|socket hang up|terminated/i.test(msg)
  );
}

export function callErrorClass(e: unknown): ErrorClass {
  if (!(e instanceof McpError)) return 'tool_error';
  if (e.code === ErrorCode.RequestTimeout) return 'timeout';
  if (e.code === ErrorCode.InvalidParams) return 'validation';
  if (e.code === ErrorCode.MethodNotFound) return 'not_found';
  return 'tool_error';
}
