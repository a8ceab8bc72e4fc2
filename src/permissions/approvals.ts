/**
 * The user layer's interface: what step 5 asks when a call is still `ask`
 * after rules, mode, hooks and the classifier. The broker
 * (permissions/approval-broker.ts) implements it; without approvers the answer follows
 * `permissions.headless`.
 */
import type { AnyTool, ToolInput } from '../tool/types.js';
import type { Decision } from './types.js';

export interface ApprovalRequest {
  executionId: string;
  sessionId: string;
  toolUseId: string;
  tool: AnyTool;
  input: ToolInput;
  inputDigest: string;
  summary: string;
  /** The ask the lower layers produced (its reason and chain). */
  decision: Decision;
  signal: AbortSignal;
}

export type ApprovalOutcome =
  | {
      behavior: 'allow';
      reason: 'user';
      actor: string;
      updatedInput?: ToolInput | undefined;
      message?: string | undefined;
      requestId?: string | undefined;
    }
  | {
      behavior: 'deny';
      reason: 'user' | 'timeout' | 'headless';
      actor?: string | undefined;
      message?: string | undefined;
      requestId?: string | undefined;
    };

export interface Approvals {
  request(req: ApprovalRequest): Promise<ApprovalOutcome>;
}

