/**
 * Every error the service can raise, with its stable code and HTTP status.
 *
 * Codes follow TOOLEXEC_ERR_<AREA>_<REASON>. Tests assert on codes, never on
 * messages; `test/errors.test.ts` checks that each code is documented in
 * docs/errors.md. Tool failures are not here: they are `tool_result` blocks with
 * `is_error: true` and an error class (see pipeline/error-class.ts).
 */

export const ERROR_CODES = {
  TOOLEXEC_ERR_REQUEST_INVALID: { status: 400, message: 'The request is malformed' },
  TOOLEXEC_ERR_REQUEST_BODY_TOO_LARGE: { status: 413, message: 'The request body is too large' },
  TOOLEXEC_ERR_REQUEST_TOO_DEEP: { status: 400, message: 'The JSON body is nested too deeply' },
  TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA: { status: 415, message: 'The request body must be JSON' },
  TOOLEXEC_ERR_REQUEST_TIMEOUT: { status: 408, message: 'The request did not arrive within server.requestTimeoutMs' },
  TOOLEXEC_ERR_REQUEST_HEADERS_TOO_LARGE: { status: 431, message: 'The request line and headers are larger than the server accepts' },
  TOOLEXEC_ERR_ROUTE_NOT_FOUND: { status: 404, message: 'No such route' },
  TOOLEXEC_ERR_AUTH_MISSING: { status: 401, message: 'A bearer token is required: send the header Authorization: Bearer TOKEN' },
  TOOLEXEC_ERR_AUTH_INVALID: { status: 401, message: 'The token is not valid' },
  TOOLEXEC_ERR_AUTH_SCOPE: { status: 403, message: 'The token lacks the scope this route needs' },
  TOOLEXEC_ERR_ORIGIN_FORBIDDEN: {
    status: 403,
    message:
      'Without tokens, toolexec answers only requests addressed to a loopback host (or a name in server.allowedHosts) from such an origin; configure tokens to serve other names',
  },
  TOOLEXEC_ERR_RATE_LIMITED: { status: 429, message: 'Too many requests' },
  TOOLEXEC_ERR_OVERLOADED: { status: 503, message: 'The service is overloaded; retry later' },
  TOOLEXEC_ERR_SHUTTING_DOWN: { status: 503, message: 'The service is shutting down' },
  TOOLEXEC_ERR_EXECUTION_NOT_FOUND: { status: 404, message: 'No such execution' },
  TOOLEXEC_ERR_EXECUTION_NOT_RUNNING: { status: 409, message: 'The execution is not running' },
  TOOLEXEC_ERR_TOOL_USE_ID_REUSED: { status: 409, message: 'The tool_use id already names another call of this session' },
  TOOLEXEC_ERR_RESULT_NOT_FOUND: { status: 404, message: 'No such stored result' },
  TOOLEXEC_ERR_RANGE_NOT_SATISFIABLE: { status: 416, message: 'The requested range is not satisfiable' },
  TOOLEXEC_ERR_SESSION_NOT_FOUND: { status: 404, message: 'No such session' },
  TOOLEXEC_ERR_SESSION_MODE_FORBIDDEN: {
    status: 403,
    message: 'bypassPermissions is not allowed by the configuration',
  },
  TOOLEXEC_ERR_PERMISSION_REQUEST_NOT_FOUND: { status: 404, message: 'No such permission request' },
  TOOLEXEC_ERR_PERMISSION_REQUEST_RESOLVED: {
    status: 409,
    message: 'The permission request was already answered or has expired',
  },
  TOOLEXEC_ERR_RULE_INVALID: { status: 400, message: 'The permission rule is not valid' },
  TOOLEXEC_ERR_RULE_NOT_FOUND: { status: 404, message: 'No such rule' },
  TOOLEXEC_ERR_RULE_READ_ONLY: { status: 409, message: 'Configured rules are read-only' },
  TOOLEXEC_ERR_TOOL_NOT_FOUND: { status: 404, message: 'No such tool' },
  TOOLEXEC_ERR_CONFIG_INVALID: { status: 500, message: 'The configuration is not valid' },
  TOOLEXEC_ERR_CONFIG_UNSAFE_HOST: {
    status: 500,
    message: 'Refusing to listen on a non-loopback host without tokens',
  },
  TOOLEXEC_ERR_STORAGE_UNAVAILABLE: { status: 503, message: 'The database is not writable' },
  TOOLEXEC_ERR_MCP_SERVER_NOT_FOUND: { status: 404, message: 'No such MCP server' },
  TOOLEXEC_ERR_WS_FRAME_INVALID: { status: 400, message: 'The websocket frame is not valid' },
  TOOLEXEC_ERR_INTERNAL: { status: 500, message: 'Internal error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** An error whose code and status are safe to show to the caller. */
export class ToolexecError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>) {
    super(message ?? ERROR_CODES[code].message);
    this.name = 'ToolexecError';
    this.code = code;
    this.statusCode = ERROR_CODES[code].status;
    this.details = details;
  }

  toBody(): { error: { code: ErrorCode; message: string; details?: Record<string, unknown> } } {
    return this.details === undefined
      ? { error: { code: this.code, message: this.message } }
      : { error: { code: this.code, message: this.message, details: this.details } };
  }
}

export function isToolexecError(e: unknown): e is ToolexecError {
  return e instanceof ToolexecError;
}
