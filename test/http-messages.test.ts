/**
 * The errors a first-time client meets, worded for the fix: a body that is
 * not JSON (curl's -d sends a form), a POST /execute without tool_uses, and
 * a tool_use block missing a field. zod's own words ("expected nonoptional,
 * received undefined") name nothing a client can act on.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupTmp, execute, makeApp, probeTool, use } from './helpers.js';

afterAll(cleanupTmp);

describe('error messages a new client acts on', () => {
  it('a form body (curl -d without a content-type) names the content type and the header to send', async () => {
    const t = await makeApp({});
    try {
      const res = await t.app.inject({ method: 'POST', url: '/execute', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'hello' });
      expect(res.statusCode).toBe(415);
      expect(res.json()).toEqual({
        error: {
          code: 'TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA',
          message: `The body's Content-Type is "application/x-www-form-urlencoded"; send JSON with the header content-type: application/json`,
        },
      });
    } finally {
      await t.close();
    }
  });

  it('a request without the token a service requires names the header to send', async () => {
    const t = await makeApp({ server: { tokens: [{ name: 'agent', token: 'http-messages-token-0123456789' }] } });
    try {
      const res = await t.app.inject({ url: '/tools' });
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toEqual({ code: 'TOOLEXEC_ERR_AUTH_MISSING', message: 'A bearer token is required: send the header Authorization: Bearer TOKEN' });
    } finally {
      await t.close();
    }
  });

  it('a cancel of a call that has finished says it is not running and what can be cancelled', async () => {
    const t = await makeApp({}, { extraTools: [probeTool({ readOnly: true, permission: 'allow' })] });
    try {
      const r = await execute(t.app, { session_id: 's', tool_uses: [use('Probe', { value: 'a' })] });
      const id = r.body.executions[0]!.id;
      const res = await t.app.inject({ method: 'POST', url: `/executions/${id}/cancel` });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toEqual({
        code: 'TOOLEXEC_ERR_EXECUTION_NOT_RUNNING',
        message: `Execution ${id} is not running (its status: succeeded); only a queued or running call can be cancelled`,
        details: { status: 'succeeded' },
      });
    } finally {
      await t.close();
    }
  });

  it('a POST /execute without tool_uses, or a block without its id, says what is required', async () => {
    const t = await makeApp({});
    try {
      const none = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 's' } });
      expect(none.statusCode).toBe(400);
      expect(none.json().error).toEqual({
        code: 'TOOLEXEC_ERR_REQUEST_INVALID',
        message: 'tool_uses: required: the tool calls to run, as Anthropic tool_use blocks, OpenAI tool calls, or an assistant message',
      });
      const noId = await t.app.inject({ method: 'POST', url: '/execute', payload: { tool_uses: [{ type: 'tool_use', name: 'Read', input: {} }] } });
      expect(noId.statusCode).toBe(400);
      expect(noId.json().error.message).toBe('tool_uses[0] is not a valid tool_use block: id: required (a string)');
      const badType = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 7, tool_uses: [] } });
      expect(badType.json().error.message).toBe('session_id: expected string, received number');
    } finally {
      await t.close();
    }
  });

  it('an ask denied with nobody to answer it says, in the decision and the audit, where a person answers and how asks can wait', async () => {
    const t = await makeApp({});
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/execute',
        payload: { session_id: 'hl', tool_uses: [{ type: 'tool_use', id: 'a', name: 'Bash', input: { command: 'touch x' } }] },
      });
      const detail = 'no approver subscribed (open /console or subscribe over /ws; or set permissions.headless: "wait" and answer with toolexec approve)';
      expect(res.json().executions[0].decision).toEqual({ behavior: 'deny', reason: { type: 'headless', detail } });
      const audit = await t.app.inject({ url: '/audit?session_id=hl' });
      expect(audit.json().entries[0].reason).toEqual({ type: 'headless', detail });
    } finally {
      await t.close();
    }
  });
});
