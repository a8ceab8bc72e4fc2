/**
 * The tool contract (contract §1). The pipeline uses tools only through this
 * interface and never looks inside one; built-in and MCP tools are the same
 * kind of object.
 */
import type { z } from 'zod';
import type { Logger } from 'pino';
import type { Config, PermissionMode } from '../config/schema.js';
import type { FileStateCache } from '../file-state/cache.js';
import type { OutputSink } from '../results/output-sink.js';
import type { Workspace } from '../workspace.js';
import type { PermissionQuery, ReasonType } from '../permissions/types.js';
import type { ErrorClass } from '../pipeline/error-class.js';
import type { BackgroundTasks } from '../tasks/background.js';

export type ToolInput = Record<string, unknown>;

export type TextBlock = { type: 'text'; text: string };
export type ImageBlock = {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string };
};
export type ToolReferenceBlock = { type: 'tool_reference'; tool_name: string };
export type ContentBlock = TextBlock | ImageBlock | ToolReferenceBlock;

export type ToolResultBlock = {
  type: 'tool_result';
  tool_use_id: string;
  content: string | ContentBlock[];
  is_error?: boolean;
};

export type ValidationResult = { ok: true } | { ok: false; message: string; code: number };

/**
 * A tool's own permission opinion. `type`/`detail` say why (the matched rule,
 * a protected path, a path outside the working directories); an `ask` of type
 * `rule` (a content ask rule) or `safety` holds even in bypassPermissions.
 */
export type PermissionResult =
  | { behavior: 'allow'; updatedInput?: ToolInput; type?: ReasonType; detail?: string }
  | { behavior: 'ask'; message: string; type?: ReasonType; detail?: string }
  | { behavior: 'deny'; message: string; type?: ReasonType; detail?: string }
  | { behavior: 'passthrough'; message?: string };

export type ProgressEvent = {
  message?: string;
  progress?: number;
  total?: number;
  data?: unknown;
};
export type OnProgress = (event: ProgressEvent) => void;

/** A per-call decision function handed to tools that run other tools. */
export type CanUseTool = (toolName: string, input: ToolInput) => Promise<{ behavior: 'allow' | 'deny' | 'ask'; message?: string }>;

/** What the session exposes to a tool. */
export interface SessionView {
  readonly id: string;
  readonly mode: PermissionMode;
  /** Working directory; Bash persists `cd` here. */
  cwd: string;
  readonly fileState: FileStateCache;
  /** TodoWrite's list, kept with the session. */
  todos: unknown[];
  /** Marks session state as changed so that it is persisted. */
  touch(): void;
}

export interface ResultReader {
  /** Reads a persisted result's text as lines [offset, offset+limit); `overflow` once they hold more than maxChars characters. */
  readLines(id: string, offset: number, limit: number, maxChars?: number): { lines: string[]; totalLines: number; overflow?: boolean } | undefined;
  exists(id: string): boolean;
}

export interface ToolContext {
  readonly session: SessionView;
  readonly workspace: Workspace;
  readonly toolUseId: string;
  readonly executionId: string;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Input edited by an approver or a hook (CC's userModified). */
  readonly userModified: boolean;
  /** Streams a large text output; spills to SQLite past the call's threshold. */
  createOutput(): OutputSink;
  readonly results: ResultReader;
  /** Read-only access to the session's permission rules (Glob/Grep hide Read-denied files). */
  readonly permissions: PermissionQuery;
  /** Environment for child processes, without the service's secrets. */
  readonly childEnv: NodeJS.ProcessEnv;
  /** The tools this session's catalog lists (ToolSearch searches the deferred ones). */
  listTools(): readonly AnyTool[];
  /** The service's configuration, read-only (tools read their own section). */
  readonly config: Readonly<Config>;
  /** Background Bash tasks (run_in_background); absent when they are switched off. */
  readonly tasks: BackgroundTasks | undefined;
}

/** What a tool's call returns. */
export interface ToolResult<O> {
  data: O;
  /** Set when the tool streamed its output into a persisted result itself. */
  resultId?: string | undefined;
  /** Set when the output is a failure the tool reports without throwing (MCP isError, a non-zero exit). */
  errorClass?: ErrorClass | undefined;
}

/** The contract every tool implements. */
export interface Tool<I extends ToolInput = ToolInput, O = unknown> {
  readonly name: string;
  readonly aliases: readonly string[];
  readonly searchHint: string | undefined;
  readonly description: string;
  readonly inputSchema: z.ZodType<I>;
  /** The JSON Schema the model sees; computed once at build time. */
  readonly inputJSONSchema: Record<string, unknown>;
  readonly maxResultSizeChars: number;
  readonly shouldDefer: boolean;
  /** MCP servers configured alwaysLoad: never deferred. */
  readonly alwaysLoad: boolean;
  /** Whether some input makes this tool read-only (plan and dontAsk views). */
  readonly mayBeReadOnly: boolean;
  readonly mcpInfo: { serverName: string; toolName: string } | undefined;

  isEnabled(): boolean;
  isConcurrencySafe(input: I): boolean;
  isReadOnly(input: I): boolean;
  isDestructive(input: I): boolean;
  /** A file path the call touches, for Read/Edit rules and working-dir checks. */
  getPath(input: I): string | undefined;
  /**
   * The input as hooks see it (Claude Code's backfillObservableInput): a copy
   * with the file path made absolute (`expandPath`: `~` expanded, resolved
   * from the session's directory), so that a hook's allowlist or denylist
   * cannot be sidestepped with a relative or `~/` path. The call itself gets
   * the input as it was sent. Absent: hooks see the input unchanged.
   */
  backfillObservableInput?(input: I, expandPath: (p: string) => string): I;

  validateInput(input: I, ctx: ToolContext): Promise<ValidationResult>;
  checkPermissions(input: I, ctx: ToolContext): Promise<PermissionResult>;
  call(
    input: I,
    ctx: ToolContext,
    canUseTool: CanUseTool,
    parentMessage: unknown,
    onProgress: OnProgress,
  ): Promise<ToolResult<O>>;

  renderToolUseMessage(input: I): string;
  renderToolResultMessage(output: O): string;
  getToolUseSummary(input: I): string;
  mapToolResultToToolResultBlockParam(output: O, toolUseId: string): ToolResultBlock;
  toAutoClassifierInput(input: I): string;
}

// The pipeline handles tools of every input type through this erased view.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any, any>;
