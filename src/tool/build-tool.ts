/**
 * The tool builder. Defaults are conservative: not concurrency-safe, not
 * read-only, not destructive, enabled; the tool's own permission opinion is
 * `passthrough`, so the rule and mode layers decide. (Claude Code defaults to
 * `allow` here; toolexec is a remote service, so a tool that says nothing does
 * not get to run on its own say-so.)
 */
import { z } from 'zod';
import type {
  AnyTool,
  PermissionResult,
  Tool,
  ToolContext,
  ToolInput,
  ToolResultBlock,
  ValidationResult,
} from './types.js';
import { toJSONSchema } from './json-schema.js';

type Optional =
  | 'aliases'
  | 'searchHint'
  | 'inputJSONSchema'
  | 'shouldDefer'
  | 'alwaysLoad'
  | 'mayBeReadOnly'
  | 'mcpInfo'
  | 'isEnabled'
  | 'isConcurrencySafe'
  | 'isReadOnly'
  | 'isDestructive'
  | 'getPath'
  | 'validateInput'
  | 'checkPermissions'
  | 'renderToolUseMessage'
  | 'renderToolResultMessage'
  | 'getToolUseSummary'
  | 'mapToolResultToToolResultBlockParam'
  | 'toAutoClassifierInput';

export type ToolDef<I extends ToolInput, O> = Omit<Tool<I, O>, Optional> & Partial<Pick<Tool<I, O>, Optional>>;

const OK: ValidationResult = Object.freeze({ ok: true }) as ValidationResult;
export const PASSTHROUGH: PermissionResult = Object.freeze({ behavior: 'passthrough' }) as PermissionResult;
const RESOLVED_OK = Promise.resolve(OK);
const RESOLVED_PASSTHROUGH = Promise.resolve(PASSTHROUGH);

/**
 * The validateInput of a tool that has no business checks of its own: the
 * pipeline (step 3) knows it by identity and goes on without a promise to
 * wait for.
 */
export const VALIDATES_NOTHING = (_input: unknown, _ctx: ToolContext): Promise<ValidationResult> => RESOLVED_OK;

/**
 * The checkPermissions of a tool with no opinion of its own (MCP tools among
 * them): the permission engine knows it by identity and takes its
 * passthrough without awaiting it.
 */
export const PASSES_THROUGH = (_input: unknown, _ctx: ToolContext): Promise<PermissionResult> => RESOLVED_PASSTHROUGH;

/** Short one-line text of an input for dashboards and prompts. */
export function summariseInput(input: unknown, max = 120): string {
  let s: string;
  try {
    s = JSON.stringify(input) ?? '';
  } catch {
    s = String(input);
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function defaultMapResult(output: unknown, toolUseId: string): ToolResultBlock {
  const content =
    typeof output === 'string' ? output : output === undefined ? '' : JSON.stringify(output, null, 2);
  return { type: 'tool_result', tool_use_id: toolUseId, content };
}

export function buildTool<S extends z.ZodType<ToolInput>, O>(
  def: ToolDef<z.infer<S>, O> & { inputSchema: S },
): Tool<z.infer<S>, O> {
  type I = z.infer<S>;
  let jsonSchema = def.inputJSONSchema;
  const tool: Tool<I, O> = {
    aliases: [],
    searchHint: undefined,
    shouldDefer: false,
    alwaysLoad: false,
    mayBeReadOnly: false,
    mcpInfo: undefined,
    isEnabled: () => true,
    isConcurrencySafe: () => false,
    isReadOnly: () => false,
    isDestructive: () => false,
    getPath: () => undefined,
    validateInput: VALIDATES_NOTHING,
    checkPermissions: PASSES_THROUGH,
    renderToolUseMessage: (input: I) => `${def.name}(${summariseInput(input)})`,
    renderToolResultMessage: (output: O) => summariseInput(output),
    getToolUseSummary: (input: I) => summariseInput(input, 60),
    mapToolResultToToolResultBlockParam: defaultMapResult,
    toAutoClassifierInput: () => '',
    ...def,
    // Converted when first read (the catalog, ToolSearch, the MCP server), then kept: done
    // for every tool at import, it was ~15 ms of start-up for a catalog nobody had asked for yet.
    get inputJSONSchema() {
      return (jsonSchema ??= toJSONSchema(def.inputSchema));
    },
  };
  return Object.freeze(tool);
}

