/**
 * A `fetch` for the model provider's SDK that answers from a recording
 * instead of the network: each request gets the next recorded response. It
 * checks what a real API checks about tool calls — every call of the
 * previous answer must be answered, in the next message, by id — so a loop
 * that drops or misorders results fails here as it would against the API.
 */

export interface RecordedRequest {
  url: string;
  body: Record<string, unknown>;
}

/** Returns a complaint about the conversation in a request body, or undefined if the API would accept it. */
export type ConversationCheck = (body: Record<string, unknown>) => string | undefined;

type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'request-id': `req_replay_${Date.now()}` } });
}

export function replayFetch(responses: readonly unknown[], check: ConversationCheck, requests: RecordedRequest[] = []): Fetch {
  let next = 0;
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as Record<string, unknown>;
    requests.push({ url, body });
    const complaint = check(body);
    if (complaint) return json(400, { type: 'error', error: { type: 'invalid_request_error', message: complaint } });
    const response = responses[next++];
    if (response === undefined) return json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'the recording has no more responses' } });
    return json(200, response);
  };
}

interface AnthropicBlock {
  type: string;
  id?: string;
  tool_use_id?: string;
}

/** Anthropic: each assistant tool_use is answered by a tool_result at the start of the next user message. */
export const anthropicCheck: ConversationCheck = (body) => {
  const messages = (body.messages ?? []) as Array<{ role: string; content: string | AnthropicBlock[] }>;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    const ids = m.content.filter((b) => b.type === 'tool_use').map((b) => b.id);
    if (ids.length === 0) continue;
    const reply = messages[i + 1];
    if (!reply) return `messages.${i}: tool_use ids were found without tool_result blocks immediately after: ${ids.join(', ')}`;
    const blocks = typeof reply.content === 'string' ? [] : reply.content;
    const answered = blocks.slice(0, ids.length).map((b) => (b.type === 'tool_result' ? b.tool_use_id : undefined));
    for (const id of ids) {
      if (!answered.includes(id)) return `messages.${i + 1}: tool_use id ${id} has no tool_result block at the start of the next message`;
    }
  }
  return undefined;
};

/** OpenAI: each assistant tool_call is answered by a `tool` message with its id before the next other message. */
export const openaiCheck: ConversationCheck = (body) => {
  const messages = (body.messages ?? []) as Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j]!.role === 'tool'; j++) answered.add(messages[j]!.tool_call_id ?? '');
    for (const c of m.tool_calls) {
      if (!answered.has(c.id)) return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing: ${c.id}`;
    }
  }
  return undefined;
};
