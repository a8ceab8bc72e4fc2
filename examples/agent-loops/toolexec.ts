/**
 * The two requests an agent loop makes to toolexec: the tool catalog once
 * (GET /tools, in the model provider's shape), then each assistant turn's
 * tool calls (POST /execute), answered with blocks ready to append to the
 * conversation. Plain fetch: nothing of toolexec's own code is needed.
 */

export interface ToolexecOptions {
  /** The service, e.g. http://127.0.0.1:8787. */
  url: string;
  /** Bearer token (TOOLEXEC_TOKEN), when the service has tokens. */
  token?: string | undefined;
  /** One session per conversation: file state (Read before Edit), mode and remembered rules live in it. */
  sessionId: string;
}

export interface Catalog<Tool> {
  tools: Tool[];
  /** Deferred tools, by name: the model loads them through the ToolSearch tool. */
  deferred_tools: string[];
  tokens: { full: number; deferred: number };
  etag: string;
}

export interface Execution {
  id: string;
  tool_use_id: string;
  tool: string;
  status: string;
  decision: { behavior: 'allow' | 'deny' | 'ask'; reason: { type: string; detail: string } } | null;
  error_class: string | null;
  result_id: string | null;
}

export interface ExecuteAnswer<ToolResult, ToolMessage> {
  session_id: string;
  /** Anthropic `tool_result` blocks, in the order of the calls. */
  tool_results: ToolResult[];
  /** OpenAI `role: "tool"` messages, for the calls that came in OpenAI's shape. */
  messages: ToolMessage[];
  executions: Execution[];
}

export class ToolexecError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`toolexec answered ${status} ${code}: ${message}`);
    this.name = 'ToolexecError';
  }
}

export class Toolexec {
  constructor(private readonly opts: ToolexecOptions) {}

  get sessionId(): string {
    return this.opts.sessionId;
  }

  private async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.opts.token) headers.authorization = `Bearer ${this.opts.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(new URL(path, this.opts.url), { method, headers, body: body === undefined ? null : JSON.stringify(body) });
    const json = (await res.json()) as T & { error?: { code: string; message: string } };
    if (!res.ok) throw new ToolexecError(res.status, json.error?.code ?? 'unknown', json.error?.message ?? res.statusText);
    return json;
  }

  /** The catalog in Anthropic's or OpenAI's shape; the same configuration gives the same bytes (prompt caches stay warm). */
  catalog<Tool>(format: 'anthropic' | 'openai'): Promise<Catalog<Tool>> {
    return this.call('GET', `/tools?format=${format}&session_id=${encodeURIComponent(this.opts.sessionId)}`);
  }

  /**
   * Runs one assistant turn's tool calls: Anthropic `tool_use` blocks or
   * OpenAI `tool_calls`, as the model produced them. A tool's failure or a
   * denial comes back as a result with `is_error`, never as an exception.
   */
  execute<ToolResult, ToolMessage>(toolUses: readonly unknown[]): Promise<ExecuteAnswer<ToolResult, ToolMessage>> {
    return this.call('POST', '/execute', { session_id: this.opts.sessionId, tool_uses: toolUses, wait: true });
  }
}
