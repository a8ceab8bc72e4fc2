/**
 * `toolexec check TOOL INPUT`: explains the permission decision a call
 * would get — the decision, its reason, and each layer's say — without
 * running anything. Asks a running service (POST /permissions/check) or the
 * configuration built in-process.
 */
import { CONFIG_HELP, CONFIG_OPTIONS, REMOTE_HELP, REMOTE_OPTIONS, flag, intOption, jsonObjectArg, parse, str } from './args.js';
import { chooseTarget, request } from './client.js';
import { loadCliConfig, namesConfig } from './config.js';
import { CliError, EXIT_FAILURE, usageError, type CliIO, type CommandResult } from './io.js';
import { injectJson, openLocalApp } from './local.js';

export const CHECK_HELP = `usage: toolexec check [options] TOOL [INPUT]

Explains the permission decision a call of TOOL with INPUT would get, and the
chain of reasons, running nothing (no tool, no hook). INPUT is a JSON object,
"-" to read it from standard input, or @FILE (default {}).

  toolexec check Bash '{"command":"rm -rf /"}'
  toolexec check --session s-42 Edit '{"file_path":"src/app.ts","old_string":"a","new_string":"b"}'

  --session ID             judge as this session (its mode and remembered rules)
  --json                   print the answer of POST /permissions/check
  --no-mcp                 do not connect the configured MCP servers (local only)
  --mcp-wait MS            how long to wait for MCP servers to connect (default 15000)
${CONFIG_HELP}
${REMOTE_HELP}

Without --url (or TOOLEXEC_URL) the configuration is built in-process; its
database is only read (remembered rules, session modes), never written.
`;

const OPTIONS = {
  ...CONFIG_OPTIONS,
  ...REMOTE_OPTIONS,
  session: { type: 'string' },
  json: { type: 'boolean' },
  'no-mcp': { type: 'boolean' },
  'mcp-wait': { type: 'string' },
} as const;

export interface CheckAnswer {
  tool: string;
  mode: string;
  behavior: 'allow' | 'deny' | 'ask';
  reason: { type: string; detail: string };
  message: string | null;
  chain: Array<{ layer: string; outcome: string; detail?: string }>;
  notes: string[];
}

export function formatCheck(a: CheckAnswer, input: Record<string, unknown>): string {
  const lines = [`${a.tool} ${JSON.stringify(input)}`, `  decision: ${a.behavior}`, `  reason:   ${a.reason.type}${a.reason.detail ? `: ${a.reason.detail}` : ''}`];
  lines.push(`  mode:     ${a.mode}`);
  if (a.message) lines.push(`  message:  ${a.message}`);
  if (a.chain.length > 0) {
    lines.push('  chain:');
    const w = Math.max(...a.chain.map((c) => c.layer.length)) + 2;
    for (const c of a.chain) lines.push(`    ${c.layer.padEnd(w)}${c.outcome.padEnd(12)}${c.detail ?? ''}`.trimEnd());
  }
  for (const n of a.notes) lines.push(`  note: ${n}`);
  return `${lines.join('\n')}\n`;
}

export async function checkCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, positionals, help } = parse('check', args, OPTIONS, 2);
  if (help) {
    io.stdout.write(CHECK_HELP);
    return 0;
  }
  const [name, inputText] = positionals;
  if (!name) throw usageError('check', 'name the tool, like: toolexec check Bash \'{"command":"ls"}\'');
  const input = inputText === undefined ? {} : await jsonObjectArg('check', inputText, io);
  const body = { name, input, ...(str(values, 'session') ? { session_id: str(values, 'session') } : {}) };

  let answer: CheckAnswer;
  const target = chooseTarget('check', values, io, namesConfig(values));
  if (target) {
    answer = (await request<CheckAnswer>(target, '/permissions/check', { method: 'POST', body , timeoutMs: 60_000 })).body;
  } else {
    const loaded = loadCliConfig(values, io);
    // MCP servers are connected only when the tool is one of theirs.
    const mcp = name.startsWith('mcp__') && !flag(values, 'no-mcp');
    const local = await openLocalApp(loaded, io, { mcp, mcpWaitMs: intOption('check', values, 'mcp-wait', 15_000, 0) });
    try {
      const res = await injectJson<CheckAnswer & { error?: { code: string; message: string } }>(local.app, 'POST', '/permissions/check', body);
      if (res.status !== 200) throw new CliError(`check: ${res.body.error?.code ?? res.status}: ${res.body.error?.message ?? ''}`, EXIT_FAILURE);
      answer = res.body;
    } finally {
      await local.close();
    }
  }
  io.stdout.write(flag(values, 'json') ? `${JSON.stringify(answer, null, 2)}\n` : formatCheck(answer, input));
  return 0;
}
