/**
 * Claude Code's permission updates (`PermissionUpdate`): what a
 * PermissionRequest hook's `decision.updatedPermissions` asks to change when
 * it allows a call, and the shape of the `permission_suggestions` its stdin
 * carries.
 *
 *   addRules {rules:[{toolName, ruleContent?}], behavior, destination}
 *       → rules of this session (toolexec writes no settings file: the
 *         destinations session, cliArg, localSettings, projectSettings and
 *         userSettings all become session rules, remembered as an approver's
 *         `remember: "session"` is; a settings-file destination is named in
 *         what is applied and listed in `notWritten`)
 *   setMode {mode, destination} → this session's mode (bypassPermissions only
 *       where the configuration allows it)
 *   replaceRules, removeRules, addDirectories, removeDirectories, and other
 *   destinations (policySettings, flagSettings) → not applied, with a message.
 */
import { z } from 'zod';
import { PermissionMode } from '../config/schema.js';
import { escapeRuleContent, parseRule } from './rule-parser.js';
import type { RememberInput } from './rule-store.js';

/** Destinations toolexec maps to the session. */
const SESSION_DESTINATIONS: ReadonlySet<string> = new Set(['session', 'cliArg', 'localSettings', 'projectSettings', 'userSettings']);
/**
 * Destinations that are settings files in Claude Code (.claude/settings.local.json,
 * .claude/settings.json, ~/.claude/settings.json). toolexec is a shared service:
 * a hook's answer about one session must not rewrite a project's or a user's
 * settings for every later session and for Claude Code itself, so such an
 * update lives as long as the session, and is reported as not written.
 */
const SETTINGS_FILES: ReadonlySet<string> = new Set(['localSettings', 'projectSettings', 'userSettings']);

/** How an applied update names its destination. */
function where(destination: string): string {
  if (destination === 'session') return '';
  return SETTINGS_FILES.has(destination)
    ? ` (destination ${destination}: applied to this session only, no settings file written)`
    : ` (destination ${destination}: applied to this session only)`;
}

const RuleValue = z.looseObject({ toolName: z.string().min(1), ruleContent: z.string().optional() });

const AddRules = z.looseObject({
  type: z.literal('addRules'),
  rules: z.array(RuleValue),
  behavior: z.enum(['allow', 'deny', 'ask']),
  destination: z.string(),
});

const SetMode = z.looseObject({ type: z.literal('setMode'), mode: z.string(), destination: z.string() });

/** A rule value as written in a rule (`Bash(npm test)`). */
export function ruleString(v: { toolName: string; ruleContent?: string | undefined }): string {
  return v.ruleContent === undefined ? v.toolName : `${v.toolName}(${escapeRuleContent(v.ruleContent)})`;
}

/** toolexec's suggested rule as Claude Code's permission_suggestions: one addRules update, or none if it does not parse. */
export function suggestionsOf(rule: string | undefined): unknown[] {
  if (rule === undefined) return [];
  const p = parseRule(rule);
  if ('error' in p) return [];
  const value = p.content === undefined ? { toolName: p.toolName } : { toolName: p.toolName, ruleContent: p.content };
  return [{ type: 'addRules', rules: [value], behavior: 'allow', destination: 'localSettings' }];
}

export interface UpdateTarget {
  sessionId: string;
  /** The session's mode, read and set. */
  mode: PermissionMode;
  setMode(mode: PermissionMode): void;
  allowBypass: boolean;
  remember: ((r: RememberInput) => unknown) | undefined;
  /** Who the rules are remembered as (the hook). */
  createdBy: string;
}

export interface UpdateReport {
  /** What was done, one line each. */
  applied: string[];
  /** What was not, and why. */
  ignored: string[];
  /** Updates applied to the session although their destination is a settings file, which toolexec does not write. */
  notWritten: Array<{ destination: string; update: string }>;
}

export function applyPermissionUpdates(updates: readonly unknown[], target: UpdateTarget): UpdateReport {
  const report: UpdateReport = { applied: [], ignored: [], notWritten: [] };
  updates.forEach((u, i) => {
    const at = `updatedPermissions[${i}]`;
    const type = typeof u === 'object' && u !== null ? (u as { type?: unknown }).type : undefined;
    if (type === 'addRules') {
      const p = AddRules.safeParse(u);
      if (!p.success) {
        const first = p.error.issues[0];
        report.ignored.push(`${at}: not a valid addRules update (${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'}); ignored`);
        return;
      }
      if (!SESSION_DESTINATIONS.has(p.data.destination)) {
        report.ignored.push(`${at}: destination "${p.data.destination}" cannot be written by toolexec; ignored`);
        return;
      }
      if (!target.remember) {
        report.ignored.push(`${at}: this service cannot remember rules; ignored`);
        return;
      }
      for (const r of p.data.rules) {
        const rule = ruleString(r);
        try {
          target.remember({ behavior: p.data.behavior, rule, scope: 'session', sessionId: target.sessionId, createdBy: target.createdBy });
          report.applied.push(`session ${p.data.behavior} rule ${rule}${where(p.data.destination)}`);
          if (SETTINGS_FILES.has(p.data.destination)) report.notWritten.push({ destination: p.data.destination, update: `${p.data.behavior} ${rule}` });
        } catch (e) {
          report.ignored.push(`${at}: rule ${JSON.stringify(rule)}: ${(e as Error).message}; ignored`);
        }
      }
      return;
    }
    if (type === 'setMode') {
      const p = SetMode.safeParse(u);
      const mode = p.success ? PermissionMode.safeParse(p.data.mode) : undefined;
      if (!p.success || !mode?.success) {
        report.ignored.push(`${at}: not a valid setMode update (mode must be one of ${PermissionMode.options.join(', ')}); ignored`);
        return;
      }
      if (!SESSION_DESTINATIONS.has(p.data.destination)) {
        report.ignored.push(`${at}: destination "${p.data.destination}" cannot be written by toolexec; ignored`);
        return;
      }
      if (mode.data === 'bypassPermissions' && !target.allowBypass) {
        report.ignored.push(`${at}: bypassPermissions is not allowed by the configuration; the mode stays ${target.mode}`);
        return;
      }
      if (target.mode !== mode.data) target.setMode(mode.data);
      report.applied.push(`session mode ${mode.data}${where(p.data.destination)}`);
      if (SETTINGS_FILES.has(p.data.destination)) report.notWritten.push({ destination: p.data.destination, update: `defaultMode ${mode.data}` });
      return;
    }
    const shown = typeof type === 'string' ? `"${type.slice(0, 40)}"` : 'without a type';
    report.ignored.push(`${at}: the update ${shown} is not supported by toolexec (only addRules and setMode, applied to the session); ignored`);
  });
  return report;
}
