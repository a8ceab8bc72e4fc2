/**
 * `toolexec exec TOOL INPUT`: runs one tool use against a running service
 * (POST /execute) and prints the result text; exit 1 when the result is an
 * error (denied, failed, unknown tool), as a model would see it.
 */
import { randomUUID } from 'node:crypto';
import { REMOTE_HELP, REMOTE_OPTIONS, flag, jsonObjectArg, parse, str } from './args.js';
import { request, requireTarget } from './client.js';
import { CliError, EXIT_FAILURE, usageError, type CliIO, type CommandResult } from './io.js';
import type { ExecutionSummary } from '../executions/executor.js';

export const EXEC_HELP = `usage: toolexec exec [options] TOOL [INPUT]

Runs one tool use on a running service, through the whole pipeline (hooks,
permissions, audit), and prints the tool_result's text. Exits 1 when the
result is an error (on stderr; a denial adds the decision's reason). INPUT is
a JSON object, "-" for standard input, or @FILE.

  toolexec exec --url http://127.0.0.1:8787 Read '{"file_path":"README.md","limit":20}'

  --session ID             the session to run in (file state, mode, remembered rules);
                           default: a new one
  --id ID                  the tool_use id (a repeated id in a session is answered, not rerun)
  --json                   print the whole POST /execute answer
  -v, --verbose            also print the execution (id, status, decision, time) on stderr
${REMOTE_HELP}
`;

const OPTIONS = {
  ...REMOTE_OPTIONS,
  session: { type: 'string' },
  id: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean', short: 'v' },
} as const;

interface ExecuteAnswer {
  session_id: string;
  tool_results: Array<{ tool_use_id: string; content: unknown; is_error?: boolean }>;
  executions: ExecutionSummary[];
}

/** The text of a tool_result's content: strings as they are, other blocks named. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((b: { type?: string; text?: string; source?: { media_type?: string } }) =>
        b.type === 'text' ? (b.text ?? '') : `[${b.type ?? 'block'}${b.source?.media_type ? ` ${b.source.media_type}` : ''}]`,
      )
      .join('\n');
  }
  return content === undefined ? '' : JSON.stringify(content);
}

export async function execCommand(args: string[], io: CliIO): Promise<CommandResult> {
  const { values, positionals, help } = parse('exec', args, OPTIONS, 2);
  if (help) {
    io.stdout.write(EXEC_HELP);
    return 0;
  }
  const [name, inputText] = positionals;
  if (!name) throw usageError('exec', 'name the tool, like: toolexec exec Read \'{"file_path":"README.md"}\'');
  const input = inputText === undefined ? {} : await jsonObjectArg('exec', inputText, io);
  const target = requireTarget('exec', values, io);
  const id = str(values, 'id') ?? `toolu_cli_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
  const session = str(values, 'session');
  const { body } = await request<ExecuteAnswer>(target, '/execute', {
    method: 'POST',
    body: { ...(session ? { session_id: session } : {}), tool_uses: [{ type: 'tool_use', id, name, input }], wait: true },
    signal: io.signal,
  });
  const result = body.tool_results[0];
  const ex = body.executions[0];
  if (!result) throw new CliError('exec: the service answered without a tool_result', EXIT_FAILURE);
  if (flag(values, 'json')) {
    io.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else {
    const text = contentText(result.content);
    const out = result.is_error ? io.stderr : io.stdout;
    out.write(text.endsWith('\n') || text.length === 0 ? text : `${text}\n`);
  }
  const d = ex?.decision ? `${ex.decision.behavior} (${ex.decision.reason.type}${ex.decision.reason.detail ? `: ${ex.decision.reason.detail}` : ''})` : 'none';
  if (!flag(values, 'verbose') && !flag(values, 'json') && ex?.status === 'denied') {
    // The result's text is written for the model ("Permission to use Bash has been denied.
    // IMPORTANT: You *may* attempt…") and says nothing of why; the person at the terminal
    // needs the reason (a rule, nobody subscribed to approve, a hook) to know what to change.
    io.stderr.write(`toolexec: decision ${d}\n`);
  }
  if (flag(values, 'verbose') && ex) {
    io.stderr.write(
      `toolexec: session ${body.session_id}, execution ${ex.id}: ${ex.status}${ex.error_class ? ` [${ex.error_class}]` : ''}, decision ${d}` +
        `${ex.duration_ms !== null ? `, ${ex.duration_ms} ms` : ''}${ex.result_id ? `, stored as result://${ex.result_id}` : ''}${ex.replayed ? ', replayed' : ''}\n`,
    );
  }
  return result.is_error ? EXIT_FAILURE : 0;
}
