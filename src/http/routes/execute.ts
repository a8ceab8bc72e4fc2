/**
 * POST /execute: a batch of tool uses in, `tool_result` blocks out, in
 * request order. `wait: false` answers 202 at once with the executions. A
 * client that disconnects while waiting cancels its calls.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ToolexecError, isToolexecError } from '../../errors.js';
import { summaryOfRow, type BatchItem, type ExecutionSummary } from '../../executions/executor.js';
import type { Services } from '../../services.js';
import type { ToolResultBlock } from '../../tool/types.js';
import { actorOf } from '../context.js';
import { ExecuteRequest, plainExecuteRequest, readToolUses, toOpenAIAnswer } from '../tool-uses.js';
import { idProblem } from '../../util/text.js';
import { issueText } from '../validate.js';

export function newSessionId(): string {
  return `s_${randomUUID().replace(/-/g, '')}`;
}

function queuedSummary(item: BatchItem, svc: Services): ExecutionSummary {
  if (item.queued) {
    return {
      id: item.executionId,
      session_id: item.queued.sessionId,
      tool_use_id: item.use.id,
      tool: item.use.name,
      status: 'queued',
      decision: null,
      duration_ms: null,
      error_class: null,
      result_id: null,
    };
  }
  const live = svc.registry.get(item.executionId);
  if (live) {
    return {
      id: live.call.id,
      session_id: live.call.sessionId,
      tool_use_id: live.call.toolUseId,
      tool: live.call.name,
      status: live.call.status,
      decision: null,
      duration_ms: null,
      error_class: null,
      result_id: null,
      replayed: true,
    };
  }
  const row = svc.executions.get(item.executionId);
  if (!row && svc.executions.isHeld(item.executionId)) {
    // It ran; its record waits for the database to take writes (as a waiting caller is told).
    throw new ToolexecError('TOOLEXEC_ERR_STORAGE_UNAVAILABLE', `The call with tool_use id ${item.use.id} ran, but its record is not written yet; retry later`, {
      execution_id: item.executionId,
    });
  }
  if (!row) throw new ToolexecError('TOOLEXEC_ERR_EXECUTION_NOT_FOUND');
  return { ...summaryOfRow(row), replayed: true };
}

function readEnvelope(raw: unknown): ExecuteRequest {
  const body = envelope(raw);
  const issue = body.session_id === undefined ? undefined : idProblem(body.session_id);
  if (issue !== undefined) throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', `session_id ${issue}`);
  return body;
}

function envelope(raw: unknown): ExecuteRequest {
  const plain = plainExecuteRequest(raw);
  if (plain !== undefined) return plain;
  const body = ExecuteRequest.safeParse(raw);
  if (!body.success) {
    const i = body.error.issues[0];
    const what = i?.path.length === 1 && i.path[0] === 'tool_uses' ? ': the tool calls to run, as Anthropic tool_use blocks, OpenAI tool calls, or an assistant message' : '';
    throw new ToolexecError('TOOLEXEC_ERR_REQUEST_INVALID', i ? `${i.path.join('.') || 'body'}: ${issueText(i)}${what}` : 'invalid body');
  }
  return body.data;
}

export function executeRoutes(app: FastifyInstance, svc: Services): void {
  app.post('/execute', { config: { scope: 'execute' } }, async (req, reply) => {
    const body = readEnvelope(req.body);
    const uses = readToolUses(body.tool_uses);
    const sessionId = body.session_id ?? newSessionId();
    // A session whose long history is still being read into its idempotency index is waited for.
    const known = svc.sessions.get(sessionId);
    const session = known.toolUses.loaded ? known : await svc.sessions.ready(sessionId);
    const wait = body.wait ?? true;

    // req.log is a pino child of the app's logger (with this request's reqId): the calls' lines carry it.
    const items = svc.executor.start(session, uses, actorOf(req), undefined, req.log as unknown as Logger);
    if (wait) {
      // A response closed before it was written means the client went away: its calls are cancelled
      // (not the replayed ones, which belong to whoever started them).
      reply.raw.on('close', () => {
        if (reply.raw.writableFinished) return;
        for (const i of items) if (!i.replayed) svc.registry.cancel(i.executionId);
      });
    }

    if (!wait) {
      return reply.status(202).send({ session_id: sessionId, executions: items.map((i) => queuedSummary(i, svc)) });
    }

    // Every call settles before the answer, and the first failure in request order is the answer's error:
    // Promise.allSettled's, awaited one by one (allSettled's result objects and closures cost ~0.8 µs a request).
    const outcomes: Array<Awaited<BatchItem['done']>> = [];
    let failure: { reason: unknown } | undefined;
    for (const i of items) {
      try {
        outcomes.push(await i.done);
      } catch (e) {
        failure ??= { reason: e };
      }
    }
    if (failure !== undefined) throw isToolexecError(failure.reason) ? failure.reason : new ToolexecError('TOOLEXEC_ERR_INTERNAL');
    const toolResults: ToolResultBlock[] = [];
    const executions: ExecutionSummary[] = [];
    const messages: ReturnType<typeof toOpenAIAnswer>[] = [];
    for (let idx = 0; idx < items.length; idx++) {
      const item = items[idx]!;
      const done = outcomes[idx]!;
      // The block answers the tool_use id as the caller sent it.
      const block = done.block.tool_use_id === item.use.id ? done.block : { ...done.block, tool_use_id: item.use.id };
      toolResults.push(block);
      executions.push(done.summary);
      if (item.use.format !== 'anthropic') messages.push(toOpenAIAnswer(block, item.use.format));
    }
    return reply.send({ session_id: sessionId, tool_results: toolResults, messages, executions });
  });
}
