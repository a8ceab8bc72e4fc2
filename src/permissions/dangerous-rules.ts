/**
 * Allow rules that auto mode sets aside, as Claude Code does on entering it
 * (permissionSetup.ts, dangerousPatterns.ts): a rule that lets Bash start an
 * interpreter, a package runner or a shell would let the model run any code
 * without the classifier ever seeing it. In auto mode such rules are not
 * applied (the call goes on to the mode's checks and the classifier); in any
 * other mode they hold as written.
 */
import type { PermissionRule } from './types.js';

/** Claude Code's CROSS_PLATFORM_CODE_EXEC: interpreters, package runners, shells. */
export const CODE_EXEC_PREFIXES: readonly string[] = [
  'python',
  'python3',
  'python2',
  'node',
  'deno',
  'tsx',
  'ruby',
  'perl',
  'php',
  'lua',
  'npx',
  'bunx',
  'npm run',
  'yarn run',
  'pnpm run',
  'bun run',
  'bash',
  'sh',
  'ssh',
];

/** Claude Code's DANGEROUS_BASH_PATTERNS. */
export const DANGEROUS_BASH_PREFIXES: readonly string[] = [...CODE_EXEC_PREFIXES, 'zsh', 'fish', 'eval', 'exec', 'env', 'xargs', 'sudo'];

/**
 * Whether an allow rule would let Bash run arbitrary code: `Bash`, `Bash(*)`,
 * and for each prefix p `Bash(p)`, `Bash(p:*)`, `Bash(p*)`, `Bash(p *)` and
 * `Bash(p -…*)` (case-insensitive), as Claude Code's isDangerousBashPermission.
 */
export function isDangerousAllowRule(r: Pick<PermissionRule, 'behavior' | 'toolName' | 'content'>): boolean {
  if (r.behavior !== 'allow' || r.toolName !== 'Bash') return false;
  if (r.content === undefined) return true;
  const c = r.content.trim().toLowerCase();
  if (c === '' || c === '*') return true;
  for (const p of DANGEROUS_BASH_PREFIXES) {
    if (c === p || c === `${p}:*` || c === `${p}*` || c === `${p} *`) return true;
    if (c.startsWith(`${p} -`) && c.endsWith('*')) return true;
  }
  return false;
}
