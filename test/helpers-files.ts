/**
 * Helpers for the file tools' tests: an app with Edit, Write, NotebookEdit and
 * TodoWrite added to the pool, a direct ToolContext built from the real parts
 * (Workspace, Session, rule index, SQLite result store in memory), and a
 * runner that takes one tool through parse → validate → call → map without
 * the HTTP layer.
 */
import pino from 'pino';
import { expect } from 'vitest';
import { Config, type ConfigInput } from '../src/config/schema.js';
import type { PermissionMode } from '../src/config/schema.js';
import { SessionPermissionQuery } from '../src/permissions/query.js';
import { compileRules, RuleIndex, type RuleInput } from '../src/permissions/rule-index.js';
import { ResultStore } from '../src/results/store.js';
import { SpillingOutputSink } from '../src/results/output-sink.js';
import { Session } from '../src/sessions/session.js';
import { openDatabase } from '../src/storage/db.js';
import type { AnyTool, ToolContext } from '../src/tool/types.js';
import { editTool } from '../src/tools/edit.js';
import { notebookEditTool } from '../src/tools/notebook-edit.js';
import { todoWriteTool } from '../src/tools/todo-write.js';
import { writeTool } from '../src/tools/write.js';
import { Workspace } from '../src/workspace.js';
import { execute, makeApp, textOf, use, type TestApp } from './helpers.js';

export const fileTools: AnyTool[] = [editTool, writeTool, notebookEditTool, todoWriteTool];

/** An app whose pool also has the file tools. */
export function fileApp(config: ConfigInput = {}): Promise<TestApp> {
  return makeApp(config, { extraTools: fileTools });
}

export interface CallOutcome {
  text: string;
  isError: boolean;
  status: string;
  errorClass: string | null;
  executionId: string;
  decision: { behavior: string; reason: { type: string; detail: string } } | null;
  content: unknown;
}

/** Runs one tool use in a session through POST /execute. */
export async function call(t: TestApp, name: string, input: unknown, sessionId = 's-files'): Promise<CallOutcome> {
  const r = await execute(t.app, { session_id: sessionId, tool_uses: [use(name, input)] });
  if (r.status !== 200) throw new Error(`POST /execute answered ${r.status}: ${JSON.stringify(r.body)}`);
  const res = r.body.tool_results[0]!;
  const ex = r.body.executions[0]!;
  return {
    text: textOf(res.content),
    isError: res.is_error === true,
    status: ex.status,
    errorClass: ex.error_class,
    executionId: ex.id,
    decision: ex.decision,
    content: res.content,
  };
}

/** The decision chain stored with an execution. */
export function decisionChain(t: TestApp, executionId: string): Array<{ layer: string; outcome: string; detail: string }> {
  t.app.toolexec.writer.flushNow();
  const row = t.app.toolexec.executions.get(executionId);
  if (!row?.decision) return [];
  return (JSON.parse(row.decision) as { chain: Array<{ layer: string; outcome: string; detail: string }> }).chain;
}

export interface DirectOptions {
  root: string;
  additional?: string[];
  allow?: string[];
  deny?: string[];
  ask?: string[];
  mode?: PermissionMode;
  caseInsensitive?: boolean;
  cwd?: string;
}

/** A ToolContext made of the real parts, for tests that call a tool without the HTTP layer. */
export function directContext(opts: DirectOptions): ToolContext & { session: Session } {
  const workspace = new Workspace(opts.root, opts.additional ?? [], opts.caseInsensitive === undefined ? {} : { caseInsensitive: opts.caseInsensitive });
  const inputs: RuleInput[] = [
    ...(opts.deny ?? []).map((raw) => ({ raw, behavior: 'deny' as const, source: 'config' as const })),
    ...(opts.ask ?? []).map((raw) => ({ raw, behavior: 'ask' as const, source: 'config' as const })),
    ...(opts.allow ?? []).map((raw) => ({ raw, behavior: 'allow' as const, source: 'config' as const })),
  ];
  const rules = new RuleIndex(compileRules(inputs).rules, {
    root: workspace.root,
    cwd: workspace.root,
    home: workspace.home,
    caseInsensitive: workspace.caseInsensitive,
  });
  const mode = opts.mode ?? 'default';
  const now = Date.now();
  const session = new Session({ id: 'direct', mode, cwd: opts.cwd ?? workspace.root, todos: [], created_at: now, updated_at: now }, () => undefined);
  const results = new ResultStore(openDatabase({ path: ':memory:' }));
  return {
    session,
    workspace,
    toolUseId: 'toolu_direct',
    executionId: 'ex_direct',
    signal: new AbortController().signal,
    log: pino({ level: 'silent' }),
    userModified: false,
    createOutput: () =>
      new SpillingOutputSink({ store: results, thresholdChars: 20_000, previewChars: 4096, sessionId: 'direct', executionId: 'ex_direct', tool: 'direct' }),
    results,
    permissions: new SessionPermissionQuery(rules, mode, workspace),
    childEnv: {},
    listTools: () => [],
    config: Config.parse({}),
    tasks: undefined,
  };
}

export type DirectOutcome =
  | { stage: 'parse'; message: string }
  | { stage: 'validate'; code: number; message: string }
  | { stage: 'call'; message: string; errorClass: string | undefined }
  | { stage: 'done'; text: string; data: unknown };

/** parse → validate → call → map for one tool, as the pipeline does minus hooks and permissions. */
export async function runDirect(tool: AnyTool, input: unknown, ctx: ToolContext): Promise<DirectOutcome> {
  const parsed = tool.inputSchema.safeParse(input);
  if (!parsed.success) return { stage: 'parse', message: parsed.error.message };
  const v = await tool.validateInput(parsed.data, ctx);
  if (!v.ok) return { stage: 'validate', code: v.code, message: v.message };
  try {
    const out = await tool.call(parsed.data, ctx, async () => ({ behavior: 'allow' }), undefined, () => undefined);
    return { stage: 'done', text: textOf(tool.mapToolResultToToolResultBlockParam(out.data, 'toolu_direct').content), data: out.data };
  } catch (e) {
    return { stage: 'call', message: (e as Error).message, errorClass: (e as { errorClass?: string }).errorClass };
  }
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs one call that asks; `meanwhile` runs while the request waits, then an approver allows it. */
export async function approvedAfter(app: TestApp, name: string, input: unknown, meanwhile: () => void) {
  const pending = execute(app.app, { session_id: 's-files', tool_uses: [use(name, input)] });
  let id: string | undefined;
  await until(() => (id = app.app.toolexec.broker.list().pending[0]?.id) !== undefined, 'the permission request');
  meanwhile();
  const answer = await app.app.inject({ method: 'POST', url: `/permissions/requests/${id}`, payload: { decision: 'allow' } });
  expect(answer.statusCode).toBe(200);
  const r = await pending;
  return { text: textOf(r.body.tool_results[0]!.content), isError: r.body.tool_results[0]!.is_error === true, ex: r.body.executions[0]! };
}
