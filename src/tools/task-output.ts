/**
 * TaskOutput: a background task's status and output, as Claude Code's
 * TaskOutputTool answers them (`<retrieval_status>`, `<task_id>`,
 * `<task_type>`, `<status>`, `<exit_code>`, `<output>`). With `block` it
 * waits for the task to end, for at most `timeout` ms. The output is read
 * from the task's file into an output sink, so a large one is persisted and
 * previewed like any large result instead of being held whole in memory.
 * While a task runs, only its last 16 KiB are shown (no copy stored per
 * poll). Reading touches nothing, so the tool allows itself. BashOutput's `bash_id`
 * is still accepted for the id.
 */
import { z } from 'zod';
import { formatPersisted } from '../results/output-sink.js';
import type { BackgroundTask } from '../tasks/background.js';
import { buildTool } from '../tool/build-tool.js';
import type { ToolContext } from '../tool/types.js';
import { loadPrompt } from './prompt.js';
import { withoutHalfAtStart } from '../util/text.js';

export const TASK_OUTPUT_MAX_TIMEOUT_MS = 600_000;

export const TaskOutputInput = z.strictObject({
  task_id: z.string().min(1).optional().describe('The task ID to get output from'),
  bash_id: z.string().min(1).optional().describe('Deprecated (BashOutput): use task_id instead'),
  block: z.boolean().default(true).describe('Whether to wait for completion'),
  timeout: z.number().min(0).max(TASK_OUTPUT_MAX_TIMEOUT_MS).default(30_000).describe('Max wait time in ms'),
});
export type TaskOutputInput = z.infer<typeof TaskOutputInput>;

export interface TaskOutputOutput {
  retrievalStatus: 'success' | 'timeout' | 'not_ready';
  taskId: string;
  status: BackgroundTask['status'];
  exitCode: number | null;
  output: string;
  resultId: string | undefined;
}

const idOf = (input: TaskOutputInput): string => input.task_id ?? input.bash_id ?? '';

/** The session's task, or undefined (another session's tasks are not there at all). */
export function sessionTask(ctx: ToolContext, id: string): BackgroundTask | undefined {
  return ctx.tasks?.get(ctx.session.id, id);
}

export function noTask(id: string): string {
  return `No task found with ID: ${id}`;
}

/**
 * The task's output as the model gets it: whole, or stored with its last
 * characters shown (the newest lines are what a log is read for). A finished
 * task's stored output is stored once and named again by later reads.
 */
function readOutput(task: BackgroundTask, ctx: ToolContext): { text: string; id: string | undefined } {
  const cached = stored.get(task);
  if (cached && ctx.results.exists(cached.id)) return cached;
  const tasks = ctx.tasks!;
  const dropped = tasks.dropped(task);
  const droppedNote = dropped > 0 ? `\n[${dropped} more bytes of output were not kept: a task keeps at most ${tasks.maxOutputBytes} bytes]` : '';
  const size = tasks.keptBytes(task);
  // While it runs, its newest lines, not a stored copy per poll.
  if (task.status === 'running' && size > RUNNING_TAIL_BYTES) {
    let text = '';
    tasks.readOutput(task, (s) => (text += s), size - RUNNING_TAIL_BYTES);
    // From a line's start (which also drops a character cut in two).
    const nl = text.indexOf('\n');
    if (nl >= 0 && nl < text.length - 1) text = text.slice(nl + 1);
    const hidden = size - Buffer.byteLength(text, 'utf8');
    return { text: `[... ${hidden} earlier bytes are not shown while the task runs; once it has ended, TaskOutput stores its whole output ...]\n${text}${droppedNote}`, id: undefined };
  }
  const sink = ctx.createOutput();
  const previewChars = ctx.config.results.previewChars;
  const ended = task.status !== 'running';
  let tail = '';
  const write = (s: string): void => {
    sink.write(s);
    tail = s.length >= previewChars ? s.slice(-previewChars) : (tail + s).slice(-previewChars);
  };
  try {
    tasks.readOutput(task, write);
    if (droppedNote) write(droppedNote);
    const r = sink.finish();
    if (r.kind === 'inline') return { text: r.text, id: undefined };
    // A cut that leaves half a surrogate pair first.
    const out = { text: formatPersisted({ ...r, preview: withoutHalfAtStart(tail) }, 'last'), id: r.id };
    if (ended) stored.set(task, out);
    return out;
  } catch (e) {
    sink.abort();
    throw e;
  }
}

/** How much of a running task's output is shown: its last lines, within the inline threshold. */
const RUNNING_TAIL_BYTES = 16 * 1024;

/** The stored output of finished tasks, by task. */
const stored = new WeakMap<BackgroundTask, { text: string; id: string }>();

export const taskOutputTool = buildTool({
  name: 'TaskOutput',
  aliases: ['BashOutputTool', 'BashOutput', 'AgentOutputTool'],
  searchHint: 'read the output of a background task or shell',
  description: loadPrompt(new URL('./task-output.md', import.meta.url)),
  inputSchema: TaskOutputInput,
  maxResultSizeChars: 30_000,
  shouldDefer: true,
  isConcurrencySafe: () => true,
  isReadOnly: () => true,
  validateInput: async (input, ctx) => {
    const id = idOf(input);
    if (id === '') return { ok: false, message: 'Missing required parameter: task_id', code: 1 };
    return sessionTask(ctx, id) ? { ok: true } : { ok: false, message: noTask(id), code: 1 };
  },
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'TaskOutput only reads the output of a task this session started' }),
  call: async (input, ctx) => {
    const task = sessionTask(ctx, idOf(input));
    if (!task) throw new Error(noTask(idOf(input)));
    const done = input.block ? await ctx.tasks!.wait(task, input.timeout, ctx.signal) : task.status !== 'running';
    if (ctx.signal.aborted) throw Object.assign(new Error('The wait was cancelled'), { name: 'AbortError' });
    const out = readOutput(task, ctx);
    return {
      data: {
        retrievalStatus: done ? 'success' : input.block ? 'timeout' : 'not_ready',
        taskId: task.id,
        status: task.status,
        exitCode: task.exitCode,
        output: out.text,
        resultId: out.id,
      } satisfies TaskOutputOutput,
      resultId: out.id,
    };
  },
  renderToolUseMessage: (input) => `TaskOutput(${idOf(input)}${input.block === false ? ', non-blocking' : ''})`,
  renderToolResultMessage: (out) => `${out.status}${out.exitCode !== null ? ` (exit ${out.exitCode})` : ''}`,
  mapToolResultToToolResultBlockParam: (out, toolUseId) => {
    const parts = [`<retrieval_status>${out.retrievalStatus}</retrieval_status>`, `<task_id>${out.taskId}</task_id>`, '<task_type>local_bash</task_type>', `<status>${out.status}</status>`];
    if (out.exitCode !== null) parts.push(`<exit_code>${out.exitCode}</exit_code>`);
    const text = out.output.trimEnd();
    if (text.length > 0) parts.push(`<output>\n${text}\n</output>`);
    return { type: 'tool_result', tool_use_id: toolUseId, content: parts.join('\n\n') };
  },
});
