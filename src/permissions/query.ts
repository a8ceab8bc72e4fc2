/**
 * The read-only view of a session's rules that tools receive as
 * `ctx.permissions`.
 */
import type { PermissionMode } from '../config/schema.js';
import type { Workspace } from '../workspace.js';
import { isProcessEnvironment } from './filesystem.js';
import { hardLinkChecker, type HardLinkCheck } from './hard-links.js';
import type { PathKind, RuleIndex } from './rule-index.js';
import type { Behavior, PermissionQuery, PermissionRule } from './types.js';

const NO_LINKS: HardLinkCheck = Object.assign((): undefined => undefined, { anyLinked: () => false, meet: () => undefined });

export class SessionPermissionQuery implements PermissionQuery {
  private readonly readDenyRules: boolean;
  private readonly readDeniedWhole: boolean;

  constructor(
    private readonly rules: RuleIndex,
    readonly mode: PermissionMode,
    private readonly workspace: Workspace,
  ) {
    this.readDenyRules = rules.hasPathRules('read', 'deny');
    this.readDeniedWhole = rules.wholeToolByName('Read', 'deny') !== undefined;
  }

  contentRules(toolName: string, behavior: Behavior): readonly PermissionRule[] {
    return this.rules.contentRules(toolName, behavior);
  }

  pathRule(kind: PathKind, behavior: Behavior, paths: readonly string[]): PermissionRule | undefined {
    return this.rules.pathRule(kind, behavior, paths);
  }

  pathRuleBelow(kind: PathKind, behavior: Behavior, dirs: readonly string[]): PermissionRule | undefined {
    return this.rules.pathRuleBelow(kind, behavior, dirs);
  }

  hardLinkChecker(kind: PathKind): HardLinkCheck {
    if (!this.rules.hasPathRules(kind, 'deny')) return NO_LINKS;
    return hardLinkChecker(this.rules.linkWalk(kind));
  }

  isReadDenied(absPath: string, known?: string): boolean {
    if (this.readDeniedWhole) return true;
    // A process's environment (Grep's walk of /proc/self): toolexec's own holds its tokens.
    if (isProcessEnvironment(absPath)) return true;
    // toolexec's own files, as spelt: Grep's walk does not follow symlinks, and
    // Glob judges a symlink where it leads (tools/glob.ts).
    if (this.workspace.serviceFileReason(absPath) !== undefined) return true;
    if (!this.readDenyRules) return false;
    const canonical = known ?? this.workspace.canonical(absPath);
    if (canonical !== absPath && this.workspace.serviceFileReason(canonical) !== undefined) return true;
    return this.rules.pathRule('read', 'deny', canonical === absPath ? [absPath] : [canonical, absPath]) !== undefined;
  }
}
