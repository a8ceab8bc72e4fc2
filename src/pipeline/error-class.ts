/**
 * The classes a failed call is put in (contract §3 step 6), so that agents and
 * dashboards can act on a failure without parsing its text.
 */
export type ErrorClass =
  | 'validation'
  | 'permission'
  | 'timeout'
  | 'cancelled'
  | 'network'
  | 'not_found'
  | 'io'
  | 'mcp_disconnected'
  | 'tool_error'
  | 'internal';

export const ERROR_CLASSES: readonly ErrorClass[] = [
  'validation',
  'permission',
  'timeout',
  'cancelled',
  'network',
  'not_found',
  'io',
  'mcp_disconnected',
  'tool_error',
  'internal',
];

/** A tool throws this to name its failure's class. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly errorClass: ErrorClass = 'tool_error',
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

const IO = new Set(['EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'EMFILE', 'ENFILE', 'ENOSPC', 'EIO', 'EROFS', 'EEXIST', 'ENOTEMPTY', 'EBUSY', 'ELOOP', 'ENAMETOOLONG', 'EFBIG', 'EXDEV']);
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'ECONNABORTED']);

export function classifyError(e: unknown): ErrorClass {
  if (e instanceof ToolError) return e.errorClass;
  if (typeof e !== 'object' || e === null) return 'tool_error';
  const err = e as { name?: unknown; code?: unknown; cause?: unknown };
  if (err.name === 'AbortError') return 'cancelled';
  if (err.name === 'TimeoutError') return 'timeout';
  const code = typeof err.code === 'string' ? err.code : undefined;
  if (code === 'ENOENT') return 'not_found';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (code && IO.has(code)) return 'io';
  if (code && NETWORK.has(code)) return 'network';
  if (err.cause && err.cause !== e) {
    const c = classifyError(err.cause);
    if (c !== 'tool_error') return c;
  }
  if (e instanceof TypeError && (e as Error).message === 'fetch failed') return 'network';
  return 'tool_error';
}

/** The text the model sees for a thrown error, without a stack. */
export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (typeof e === 'string') return e;
  try {
    return JSON.stringify(e) ?? 'Unknown error';
  } catch {
    return 'Unknown error';
  }
}
