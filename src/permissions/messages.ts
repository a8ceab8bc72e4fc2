/**
 * Texts the model receives when a call does not run. They follow Claude
 * Code's wording so that agents prompted for Claude Code react the same way.
 * Two words are ours on purpose: where Claude Code names itself ("because
 * Claude Code is running in don't ask mode") the service names itself, and
 * where it names the model as the requester ("Claude requested permissions
 * to use X") we say "The agent", since the calls may come from any model
 * (OpenAI-shaped calls too). The rest of each sentence is Claude Code's.
 */
const MAY_ATTEMPT =
  'IMPORTANT: You *may* attempt to accomplish this action using other tools that might naturally be used to accomplish this goal, ' +
  'e.g. using head instead of cat. But you *should not* attempt to work around this denial in malicious ways, ' +
  'e.g. do not use your ability to run tests to execute non-test actions. You should only try to work around this restriction ' +
  'in reasonable ways that do not attempt to bypass the intent behind this denial.';

export const messages = {
  ruleDenied: (tool: string) => `Permission to use ${tool} has been denied.`,
  /** Claude Code's passthrough text (permissions.ts step 3), `what` naming the call more closely ("Bash with command ls"). */
  notGranted: (tool: string, what: string = tool) => `The agent requested permissions to use ${what}, but you haven't granted it yet.`,
  /** Claude Code's DONT_ASK_REJECT_MESSAGE, naming this service instead of Claude Code. */
  dontAsk: (tool: string) =>
    `Permission to use ${tool} has been denied because toolexec is running in don't ask mode. ${MAY_ATTEMPT}`,
  headless: (tool: string) => `Permission to use ${tool} has been denied. ${MAY_ATTEMPT}`,
  timeout: (tool: string) =>
    `Permission to use ${tool} has been denied: nobody answered the permission request in time. ${MAY_ATTEMPT}`,
  planMode: (tool: string) =>
    `Plan mode is active: ${tool} was denied because it is not read-only. You MUST NOT make any edits or run any non-readonly tools until the user has approved the plan.`,
  userRejected:
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
  hookDenied: (event: string, tool: string) => `Hook ${event}:${tool} denied this tool`,
  hookAsked: (event: string, tool: string) => `Hook ${event}:${tool} asked for confirmation for this tool`,
  classifierDenied: (tool: string, reason: string) =>
    `Permission to use ${tool} has been denied by the auto-mode classifier: ${reason}`,
  /** Claude Code's text for a PermissionDenied hook's `retry: true` (toolExecution.ts, not in its docs). */
  retryAllowed: 'The PermissionDenied hook indicated this command is now approved. You may retry it if you would like.',
  cancelled:
    "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.",
  interrupted: '[Request interrupted by user for tool use]',
  /** Claude Code's text for a concurrent call cancelled because a Bash call beside it failed; `errored` as siblingDescription gives it. */
  siblingCancelled: (errored: string) => `Cancelled: parallel tool call ${errored} errored`,
} as const;
