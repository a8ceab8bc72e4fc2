/**
 * Idempotency is per (session, tool_use id), whatever characters either
 * holds: a key joining them with a bare separator made session "a\0b" with
 * id "c" and session "a" with id "b\0c" one call, and the second was
 * answered with the first one's outcome (its execution, of the other
 * session) without running.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { cleanupTmp, execute, makeApp, probeTool, sleepTool, textOf, use } from './helpers.js';

afterAll(cleanupTmp);

describe('idempotency keys', () => {
  it('a call of another session whose ids join to the same string is not replayed as this one', async () => {
    const t = await makeApp({}, { extraTools: [sleepTool({ safe: false })] });
    try {
      const first = await execute(t.app, { session_id: 'a\u0000b', wait: false, tool_uses: [use('UnsafeSleep', { ms: 300, tag: 'x' }, 'c')] });
      expect(first.status).toBe(202);
      // While the first call is still running.
      const second = await execute(t.app, { session_id: 'a', tool_uses: [use('UnsafeSleep', { ms: 300, tag: 'x' }, 'b\u0000c')] });
      expect(second.status).toBe(200);
      expect(second.body.executions[0]).toMatchObject({ session_id: 'a', tool_use_id: 'b\u0000c', status: 'succeeded' });
      expect(second.body.executions[0]!.replayed).toBeUndefined();
      expect(second.body.executions[0]!.id).not.toBe(first.body.executions[0]!.id);
      expect(textOf(second.body.tool_results[0]!.content)).toBe('slept 300 ms: x');
    } finally {
      await t.close();
    }
  });

  it('an id with a lone surrogate is refused: SQLite stored "x\\uD800" as "x\\uFFFD", and after a restart that other session was refused its own call', async () => {
    const probe = probeTool({ permission: 'allow' });
    const t = await makeApp({}, { extraTools: [probe] });
    const dbPath = t.dbPath;
    try {
      for (const body of [
        { session_id: 'x\ud800', tool_uses: [use('Probe', { value: 'a' }, 't1')] },
        { session_id: 'x', tool_uses: [use('Probe', { value: 'a' }, 't\udc00')] },
        { session_id: 'x', tool_uses: [{ id: 'c\ud800', type: 'function', function: { name: 'Probe', arguments: '{"value":"a"}' } }] },
        { session_id: 'x', tool_uses: [{ type: 'function_call', call_id: '\udc00\ud800', name: 'Probe', arguments: '{"value":"a"}' }] },
      ]) {
        const r = await execute(t.app, body);
        expect(r.status).toBe(400);
        expect(r.body.error).toMatchObject({ code: 'TOOLEXEC_ERR_REQUEST_INVALID', message: expect.stringContaining('lone UTF-16 surrogate') });
      }
      expect(t.app.toolexec.executions.findByToolUse('x\ufffd', 't1')).toBeUndefined();
      // Nor may a remembered rule be given to such a session: it would be that other session's after a restart.
      const rule = await t.app.inject({ method: 'POST', url: '/permissions/rules', payload: { behavior: 'allow', rule: 'Bash', scope: 'session', session_id: 'x\ud800' } });
      expect(rule.statusCode).toBe(400);
      expect(rule.json().error.message).toContain('lone UTF-16 surrogate');
      // A surrogate pair is a whole character.
      const pair = await execute(t.app, { session_id: 'x\ud83d\ude00', tool_uses: [use('Probe', { value: 'a' }, 't\ud83d\ude00')] });
      expect(pair.status).toBe(200);
      expect(pair.body.executions[0]).toMatchObject({ session_id: 'x\ud83d\ude00', tool_use_id: 't\ud83d\ude00', status: 'succeeded' });
    } finally {
      await t.close();
    }
    // After a restart, session "x\uFFFD" runs its own t1.
    const next = await buildApp({ logger: false, extraTools: [probe], config: { workspace: { root: t.workspace }, storage: { path: dbPath } } });
    try {
      const own = await execute(next, { session_id: 'x\ufffd', tool_uses: [use('Probe', { value: 'b' }, 't1')] });
      expect(own.status).toBe(200);
      expect(own.body.executions[0]!.replayed).toBeUndefined();
      expect(textOf(own.body.tool_results[0]!.content)).toBe('value=b');
    } finally {
      await next.close();
    }
  });
});
