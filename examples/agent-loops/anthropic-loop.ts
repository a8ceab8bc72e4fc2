/**
 * An agent loop on Anthropic's Messages API whose tools run in toolexec.
 *
 * Each turn: the model answers; its `tool_use` blocks go to POST /execute as
 * they are; the `tool_result` blocks that come back are the next user
 * message. That is the whole integration: toolexec runs the tools the way
 * Claude Code does (permissions, hooks, file state, large results).
 *
 * Run it against a toolexec, replaying the recorded model answers (no API key):
 *   npx tsc -p examples
 *   npx toolexec serve --config examples/agent-loops/toolexec.json --workspace /tmp/demo
 *   node examples/dist/agent-loops/anthropic-loop.js --url http://127.0.0.1:8787
 * With --live and ANTHROPIC_API_KEY set, the real API answers instead.
 */
import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import Anthropic from '@anthropic-ai/sdk';
import { anthropicCheck, replayFetch, type RecordedRequest } from './replay-fetch.js';
import { Toolexec } from './toolexec.js';

export interface AnthropicLoopOptions {
  client: Anthropic;
  toolexec: Toolexec;
  model: string;
  prompt: string;
  system?: string;
  maxTurns?: number;
  /** Called with each message as it joins the conversation (for printing). */
  onMessage?: (m: Anthropic.Messages.MessageParam) => void;
}

export interface AnthropicLoopResult {
  messages: Anthropic.Messages.MessageParam[];
  final: Anthropic.Messages.Message;
  turns: number;
}

export async function runAnthropicLoop(opts: AnthropicLoopOptions): Promise<AnthropicLoopResult> {
  // toolexec serves definitions in the API's own shape: pass them through.
  const { tools } = await opts.toolexec.catalog<Anthropic.Messages.Tool>('anthropic');
  const messages: Anthropic.Messages.MessageParam[] = [{ role: 'user', content: opts.prompt }];
  opts.onMessage?.(messages[0]!);
  const maxTurns = opts.maxTurns ?? 20;
  for (let turn = 1; turn <= maxTurns; turn++) {
    const response = await opts.client.messages.create({
      model: opts.model,
      max_tokens: 4096,
      tools,
      messages,
      ...(opts.system ? { system: opts.system } : {}),
    });
    const assistant: Anthropic.Messages.MessageParam = { role: 'assistant', content: response.content };
    messages.push(assistant);
    opts.onMessage?.(assistant);

    const toolUses = response.content.filter((b): b is Anthropic.Messages.ToolUseBlock => b.type === 'tool_use');
    if (response.stop_reason !== 'tool_use' || toolUses.length === 0) return { messages, final: response, turns: turn };

    // Denials and tool failures come back as results with is_error: the model reads them and adapts.
    const answer = await opts.toolexec.execute<Anthropic.Messages.ToolResultBlockParam, never>(toolUses);
    const results: Anthropic.Messages.MessageParam = { role: 'user', content: answer.tool_results };
    messages.push(results);
    opts.onMessage?.(results);
  }
  throw new Error(`the model did not finish within ${maxTurns} turns`);
}

function show(m: Anthropic.Messages.MessageParam): void {
  const blocks = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
  for (const b of blocks) {
    if (b.type === 'text') console.log(`${m.role}: ${b.text}`);
    else if (b.type === 'tool_use') console.log(`${m.role}: → ${b.name} ${JSON.stringify(b.input)}`);
    else if (b.type === 'tool_result') {
      const text = typeof b.content === 'string' ? b.content : (b.content ?? []).map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
      console.log(`${m.role}: ← ${b.is_error ? 'error: ' : ''}${text.split('\n').slice(0, 4).join('\n   ')}`);
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string', default: process.env.TOOLEXEC_URL ?? 'http://127.0.0.1:8787' },
      token: { type: 'string', default: process.env.TOOLEXEC_TOKEN },
      recording: { type: 'string', default: 'examples/agent-loops/recorded/anthropic.json' },
      live: { type: 'boolean', default: false },
      model: { type: 'string', default: 'claude-sonnet-4-6' },
    },
  });
  const recording = JSON.parse(fs.readFileSync(values.recording!, 'utf8')) as { prompt: string; system: string; responses: unknown[] };
  const client = values.live
    ? new Anthropic()
    : new Anthropic({ apiKey: 'replay', maxRetries: 0, fetch: replayFetch(recording.responses, anthropicCheck, [] as RecordedRequest[]) });
  const toolexec = new Toolexec({ url: values.url!, token: values.token, sessionId: `example-${randomUUID()}` });
  const { turns, final } = await runAnthropicLoop({ client, toolexec, model: values.model!, prompt: recording.prompt, system: recording.system, onMessage: show });
  console.log(`(${turns} turns, stop_reason ${final.stop_reason}, session ${toolexec.sessionId})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
