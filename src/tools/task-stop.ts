/**
 * TaskStop (formerly KillShell): stops a running background task of this
 * session, its whole process group, and answers as Claude Code does (a JSON
 * message naming the task and its command). `shell_id` is KillShell's name
 * for the id, still accepted. It only stops what this session started, so
 * it allows itself.
 */
import { z } from 'zod';
import { ToolError } from '../pipeline/error-class.js';
import { buildTool } from '../tool/build-tool.js';
import { oneLine } from '../util/text.js';
import { loadPrompt } from './prompt.js';
import { noTask, sessionTask } from './task-output.js';

export const TaskStopInput = z.strictObject({
  task_id: z.string().min(1).optional().describe('The ID of the background task to stop'),
  shell_id: z.string().min(1).optional().describe('Deprecated: use task_id instead'),
});
export type TaskStopInput = z.infer<typeof TaskStopInput>;

export interface TaskStopOutput {
  message: string;
  task_id: string;
  task_type: 'local_bash';
}

const idOf = (input: TaskStopInput): string => input.task_id ?? input.shell_id ?? '';

export const taskStopTool = buildTool({
  name: 'TaskStop',
  aliases: ['KillShell'],
  searchHint: 'stop or kill a running background task or shell',
  description: loadPrompt(new URL('./task-stop.md', import.meta.url)),
  inputSchema: TaskStopInput,
  maxResultSizeChars: 10_000,
  shouldDefer: true,
  isConcurrencySafe: () => true,
  isReadOnly: () => false,
  validateInput: async (input, ctx) => {
    const id = idOf(input);
    if (id === '') return { ok: false, message: 'Missing required parameter: task_id', code: 1 };
    const task = sessionTask(ctx, id);
    if (!task) return { ok: false, message: noTask(id), code: 1 };
    if (task.status !== 'running') return { ok: false, message: `Task ${id} is not running (status: ${task.status})`, code: 3 };
    return { ok: true };
  },
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'TaskStop only stops a task this session started' }),
  call: async (input, ctx) => {
    const id = idOf(input);
    const task = sessionTask(ctx, id);
    if (!task) throw new Error(noTask(id));
    if (task.status !== 'running') throw new ToolError(`Task ${id} is not running (status: ${task.status})`);
    const stopped = await ctx.tasks!.stop(task);
    const message = stopped
      ? `Successfully stopped task: ${id} (${oneLine(task.command, 200)})`
      : `Task ${id} had already finished by itself (status: ${task.status}); nothing was stopped`;
    return { data: { message, task_id: id, task_type: 'local_bash' } satisfies TaskStopOutput };
  },
  renderToolUseMessage: (input) => `TaskStop(${idOf(input)})`,
  renderToolResultMessage: (out) => `Stopped ${out.task_id}`,
  mapToolResultToToolResultBlockParam: (out, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: JSON.stringify(out) }),
});
