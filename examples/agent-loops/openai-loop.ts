/**
 * The same agent loop on OpenAI's Chat Completions API: the assistant
 * message's `tool_calls` go to POST /execute as they are, and toolexec's
 * `messages` (role "tool", one per call) are appended to the conversation.
 *
 *   npx tsc -p examples
 *   npx toolexec serve --config examples/agent-loops/toolexec.json --workspace /tmp/demo
 *   node examples/dist/agent-loops/openai-loop.js --url http://127.0.0.1:8787
 * With --live and OPENAI_API_KEY set, the real API answers instead.
 */
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { openaiCheck, replayFetch } from './replay-fetch.js';
import { Toolexec } from './toolexec.js';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

export interface OpenAILoopOptions {
  client: OpenAI;
  toolexec: Toolexec;
  model: string;
  prompt: string;
  system?: string;
  maxTurns?: number;
  onMessage?: (m: Message) => void;
}

export interface OpenAILoopResult {
  messages: Message[];
  final: OpenAI.Chat.Completions.ChatCompletion;
  turns: number;
}

export async function runOpenAILoop(opts: OpenAILoopOptions): Promise<OpenAILoopResult> {
  const { tools } = await opts.toolexec.catalog<OpenAI.Chat.Completions.ChatCompletionFunctionTool>('openai');
  const messages: Message[] = [];
  const push = (m: Message): void => {
    messages.push(m);
    opts.onMessage?.(m);
  };
  if (opts.system) push({ role: 'system', content: opts.system });
  push({ role: 'user', content: opts.prompt });
  const maxTurns = opts.maxTurns ?? 20;
  for (let turn = 1; turn <= maxTurns; turn++) {
    const completion = await opts.client.chat.completions.create({ model: opts.model, messages, tools });
    const choice = completion.choices[0];
    if (!choice) throw new Error('the API answered without a choice');
    const message = choice.message;
    const calls = (message.tool_calls ?? []).filter(
      (c): c is OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall => c.type === 'function',
    );
    push({ role: 'assistant', content: message.content, ...(calls.length > 0 ? { tool_calls: calls } : {}) });
    if (calls.length === 0) return { messages, final: completion, turns: turn };

    // One `tool` message per call, in order; errors and denials are messages too.
    const answer = await opts.toolexec.execute<never, OpenAI.Chat.Completions.ChatCompletionToolMessageParam>(calls);
    for (const m of answer.messages) push(m);
  }
  throw new Error(`the model did not finish within ${maxTurns} turns`);
}

function show(m: Message): void {
  if (m.role === 'assistant') {
    if (typeof m.content === 'string' && m.content) console.log(`assistant: ${m.content}`);
    for (const c of m.tool_calls ?? []) if (c.type === 'function') console.log(`assistant: → ${c.function.name} ${c.function.arguments}`);
  } else if (m.role === 'tool') {
    const text = typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join('\n');
    console.log(`tool: ← ${text.split('\n').slice(0, 4).join('\n   ')}`);
  } else if (typeof m.content === 'string') {
    console.log(`${m.role}: ${m.content}`);
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: process.env.TOOLEXEC_URL ?? 'http://127.0.0.1:8787' },
      token: { type: 'string', default: process.env.TOOLEXEC_TOKEN },
      recording: { type: 'string', default: 'examples/agent-loops/recorded/openai.json' },
      live: { type: 'boolean', default: false },
      model: { type: 'string', default: 'gpt-4.1' },
    },
  });
  const recording = JSON.parse(fs.readFileSync(values.recording!, 'utf8')) as { prompt: string; system: string; responses: unknown[] };
  const client = values.live ? new OpenAI() : new OpenAI({ apiKey: 'replay', maxRetries: 0, fetch: replayFetch(recording.responses, openaiCheck) });
  const toolexec = new Toolexec({ url: values.url!, token: values.token, sessionId: `example-${randomUUID()}` });
  const { turns, final } = await runOpenAILoop({ client, toolexec, model: values.model!, prompt: recording.prompt, system: recording.system, onMessage: show });
  console.log(`(${turns} turns, finish_reason ${final.choices[0]?.finish_reason}, session ${toolexec.sessionId})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
