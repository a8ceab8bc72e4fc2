/**
 * TodoWrite: the session's task list, as Claude Code's TodoWriteTool. Each
 * call replaces the whole list; a list whose tasks are all completed is
 * cleared. The list lives in the session and is persisted with it (SQLite),
 * so it survives a restart. It touches nothing outside the session, so it
 * allows itself.
 */
import { z } from 'zod';
import { buildTool } from '../tool/build-tool.js';
import { loadPrompt } from './prompt.js';

export const TodoStatus = z.enum(['pending', 'in_progress', 'completed']);
export type TodoStatus = z.infer<typeof TodoStatus>;

export const TodoItem = z.strictObject({
  content: z.string().min(1, 'Content cannot be empty'),
  status: TodoStatus,
  activeForm: z.string().min(1, 'Active form cannot be empty'),
});
export type TodoItem = z.infer<typeof TodoItem>;

export const TodoWriteInput = z.strictObject({
  todos: z.array(TodoItem).describe('The updated todo list'),
});
export type TodoWriteInput = z.infer<typeof TodoWriteInput>;

/** Claude Code's TodoWriteOutput. */
export interface TodoWriteOutput {
  oldTodos: TodoItem[];
  newTodos: TodoItem[];
}

export const TODO_WRITE_RESULT =
  'Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable';

/** The session's list as stored; entries that are not todo items (an older format) are left out. */
function storedTodos(list: readonly unknown[]): TodoItem[] {
  const out: TodoItem[] = [];
  for (const t of list) {
    const r = TodoItem.safeParse(t);
    if (r.success) out.push(r.data);
  }
  return out;
}

export const todoWriteTool = buildTool({
  name: 'TodoWrite',
  searchHint: 'manage the session task checklist',
  description: loadPrompt(new URL('./todo-write.md', import.meta.url)),
  inputSchema: TodoWriteInput,
  maxResultSizeChars: 100_000,
  shouldDefer: true,
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'TodoWrite only changes the session task list' }),
  call: async (input, ctx) => {
    const oldTodos = storedTodos(ctx.session.todos);
    const allDone = input.todos.every((t) => t.status === 'completed');
    ctx.session.todos = allDone ? [] : input.todos.map((t) => ({ ...t }));
    ctx.session.touch();
    return { data: { oldTodos, newTodos: input.todos } satisfies TodoWriteOutput };
  },
  renderToolUseMessage: (input) => `TodoWrite(${input.todos.length} task${input.todos.length === 1 ? '' : 's'})`,
  getToolUseSummary: (input) => {
    const current = input.todos.find((t) => t.status === 'in_progress');
    return current ? current.activeForm : `${input.todos.length} tasks`;
  },
  renderToolResultMessage: (out) => {
    const done = out.newTodos.filter((t) => t.status === 'completed').length;
    return `${done}/${out.newTodos.length} tasks completed`;
  },
  mapToolResultToToolResultBlockParam: (_out, toolUseId) => ({ type: 'tool_result', tool_use_id: toolUseId, content: TODO_WRITE_RESULT }),
});
