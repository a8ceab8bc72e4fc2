/**
 * The seven steps' contract, through POST /execute on a real app with a real
 * SQLite file: lookup, parse, validate, hooks, permission, call, results.
 */
import { jsonDepthExceeds, POISONED } from '../src/http/json-parser.js';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RECENT_TOOL_USES, ToolUseIndex } from '../src/sessions/tool-use-index.js';
import { STORED_INPUT_MAX_CHARS } from '../src/storage/executions.js';
import { cleanupTmp, execute, makeApp, probeTool, textOf, tmpDir, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

describe('step 1: lookup', () => {
  it('answers an unknown tool with an is_error result naming it', async () => {
    t = await makeApp();
    const r = await execute(t.app, { tool_uses: [use('NoSuchTool', {}, 'a')] });
    expect(r.status).toBe(200);
    expect(r.body.tool_results[0]).toMatchObject({ tool_use_id: 'a', is_error: true });
    expect(textOf(r.body.tool_results[0]!.content)).toContain('No such tool available: NoSuchTool');
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'not_found' });
  });

  it('finds a tool by an alias and runs it under its real name', async () => {
    const calls: unknown[] = [];
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({ aliases: ['OldProbe'], calls })] });
    const r = await execute(t.app, { tool_uses: [use('OldProbe', { value: 'x' })] });
    expect(r.body.tool_results[0]!.is_error).toBeFalsy();
    expect(r.body.executions[0]!.tool).toBe('Probe');
    expect(calls).toEqual([{ value: 'x' }]);
  });

  it('resolves an MCP tool name spelt with characters the normalisation replaces', async () => {
    const calls: unknown[] = [];
    const mcp = { ...probeTool({ name: 'mcp__my_server__do_it', calls }), mcpInfo: { serverName: 'my.server', toolName: 'do it' } };
    t = await makeApp({ permissions: { allow: ['mcp__my_server'] } }, { mcpTools: [mcp] });
    const r = await execute(t.app, { tool_uses: [use('mcp__my.server__do it', { value: 'v' })] });
    expect(r.body.executions[0]).toMatchObject({ tool: 'mcp__my_server__do_it', status: 'succeeded' });
  });
});

describe('step 2: parse', () => {
  it('lists each issue in words a model can act on, and runs nothing later', async () => {
    const root = tmpDir();
    const marker = path.join(root, 'hook-ran');
    const validations: unknown[] = [];
    const calls: unknown[] = [];
    t = await makeApp(
      {
        permissions: { allow: ['Probe'] },
        hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: `touch ${marker}` }] }] },
      },
      { extraTools: [probeTool({ validations, calls })] },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { count: 'three', extra: true }, 'p1')] });
    const text = textOf(r.body.tool_results[0]!.content);
    expect(r.body.tool_results[0]!.is_error).toBe(true);
    expect(text).toContain('InputValidationError');
    expect(text).toContain('The required parameter `value` is missing');
    expect(text).toContain('The parameter `count` type is expected as `number` but provided as `string`');
    expect(text).toContain('An unexpected parameter `extra` was provided');
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'validation', decision: null });
    expect(validations).toHaveLength(0);
    expect(calls).toHaveLength(0);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('treats OpenAI arguments that are not JSON as a validation error of that call only', async () => {
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    const r = await execute(t.app, {
      tool_uses: [
        { id: 'c1', type: 'function', function: { name: 'Probe', arguments: '{"value":' } },
        { id: 'c2', type: 'function', function: { name: 'Probe', arguments: '{"value":"ok"}' } },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.executions.map((e) => e.status)).toEqual(['failed', 'succeeded']);
    expect(r.body.messages).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: expect.stringContaining('The arguments are not valid JSON') },
      { role: 'tool', tool_call_id: 'c2', content: 'value=ok' },
    ]);
  });

  it('answers each OpenAI call in its own API’s shape: a Responses function_call with a function_call_output item, a Chat Completions call with a tool message', async () => {
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    const r = await execute(t.app, {
      tool_uses: [
        // As the Responses API returns them: a reasoning item, then function_call items with their own id and status.
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_r1', name: 'Probe', arguments: '{"value":"one"}', status: 'completed' },
        use('Probe', { value: 'two' }, 'toolu_a'),
        { id: 'call_c1', type: 'function', function: { name: 'Probe', arguments: '{"value":"three"}' } },
        { type: 'function_call', id: 'fc_2', call_id: 'call_r2', name: 'Probe', arguments: '{"value":' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.tool_results.map((b) => b.tool_use_id)).toEqual(['call_r1', 'toolu_a', 'call_c1', 'call_r2']);
    // A role "tool" message is not valid Responses input; function_call_output is what the next request's input takes.
    expect(r.body.messages).toEqual([
      { type: 'function_call_output', call_id: 'call_r1', output: 'value=one' },
      { role: 'tool', tool_call_id: 'call_c1', content: 'value=three' },
      { type: 'function_call_output', call_id: 'call_r2', output: expect.stringContaining('The arguments are not valid JSON') },
    ]);
  });
});

describe('step 3: validate', () => {
  it('returns the tool’s own message and stops before hooks and permission', async () => {
    const root = tmpDir();
    const marker = path.join(root, 'hook-ran');
    const calls: unknown[] = [];
    t = await makeApp(
      { permissions: { allow: ['Probe'] }, hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: `touch ${marker}` }] }] } },
      { extraTools: [probeTool({ calls, invalid: (i) => (i.value === 'bad' ? 'The value may not be "bad".' : undefined) })] },
    );
    const r = await execute(t.app, { tool_uses: [use('Probe', { value: 'bad' })] });
    expect(textOf(r.body.tool_results[0]!.content)).toBe('<tool_use_error>The value may not be "bad".</tool_use_error>');
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'validation', decision: null });
    expect(calls).toHaveLength(0);
    expect(fs.existsSync(marker)).toBe(false);
  });
});

describe('envelope', () => {
  it('accepts a whole assistant content array and ignores its non-tool blocks', async () => {
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({})] });
    const r = await execute(t.app, {
      session_id: 's',
      tool_uses: { role: 'assistant', content: [{ type: 'text', text: 'let me look' }, use('Probe', { value: 'a' }, 'u1'), { type: 'thinking', thinking: '…' }] },
    });
    expect(r.status).toBe(200);
    expect(r.body.tool_results.map((b) => b.tool_use_id)).toEqual(['u1']);
    expect(r.body.messages).toEqual([]);
  });

  it('answers a malformed envelope with 400 and an error code', async () => {
    t = await makeApp();
    for (const payload of [
      { tool_uses: 'nope' },
      { tool_uses: [{ type: 'tool_use', name: 'Read', input: {} }] },
      { tool_uses: [42] },
      { session_id: 5, tool_uses: [] },
    ]) {
      const res = await t.app.inject({ method: 'POST', url: '/execute', payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    }
    const notJson = await t.app.inject({ method: 'POST', url: '/execute', payload: '{"tool_uses": [', headers: { 'content-type': 'application/json' } });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_INVALID');
    expect(notJson.json().error.message).toMatch(/^The body is not valid JSON: /);
    // Valid JSON with a key that could poison a prototype: refused, and told why.
    for (const body of ['{"tool_uses":[{"type":"tool_use","id":"p","name":"Read","input":{"__proto__":{"x":1}}}]}', '{"tool_uses":[],"constructor":{"prototype":{"x":1}}}']) {
      const poisoned = await t.app.inject({ method: 'POST', url: '/execute', payload: body, headers: { 'content-type': 'application/json' } });
      expect(poisoned.statusCode).toBe(400);
      expect(poisoned.json().error).toEqual({ code: 'TOOLEXEC_ERR_REQUEST_INVALID', message: POISONED });
    }
    // A number past a double's range parses as Infinity: the model is told it is out of range, not that a number is not a number.
    const huge = await t.app.inject({ method: 'POST', url: '/execute', payload: '{"tool_uses":[{"type":"tool_use","id":"h","name":"Read","input":{"file_path":"a.txt","limit":1e400}}]}', headers: { 'content-type': 'application/json' } });
    expect(huge.statusCode).toBe(200);
    expect(huge.json().tool_results[0].content).toContain('The parameter `limit` type is expected as `number` but provided as `number out of range`');
    const deep = await t.app.inject({ method: 'POST', url: '/execute', payload: `{"tool_uses":${'['.repeat(200)}${']'.repeat(200)}}`, headers: { 'content-type': 'application/json' } });
    expect(deep.statusCode).toBe(400);
    expect(deep.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_TOO_DEEP');
    const text = await t.app.inject({ method: 'POST', url: '/execute', payload: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.code).toBe('TOOLEXEC_ERR_REQUEST_UNSUPPORTED_MEDIA');
  });

  it('returns the first outcome for a repeated tool_use id, marked replayed, without running it twice', async () => {
    const calls: unknown[] = [];
    t = await makeApp({ permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({ calls })] });
    const first = await execute(t.app, { session_id: 's', tool_uses: [use('Probe', { value: 'one', count: 1 }, 'same')] });
    // The same call sent again, its keys in another order (a conversation kept in a database that sorts them).
    const again = await execute(t.app, { session_id: 's', tool_uses: [use('Probe', { count: 1, value: 'one' }, 'same')] });
    expect(calls).toEqual([{ value: 'one', count: 1 }]);
    expect(again.body.executions[0]).toMatchObject({ id: first.body.executions[0]!.id, replayed: true, status: 'succeeded' });
    expect(again.body.tool_results[0]!.content).toBe('value=one');
    const other = await execute(t.app, { session_id: 'other', tool_uses: [use('Probe', { value: 'three' }, 'same')] });
    expect(other.body.executions[0]!.replayed).toBeUndefined();
    expect(calls).toHaveLength(2);
  });

  it('refuses a tool_use id reused for another call (409), instead of answering it with the first call’s result; nothing of the request runs', async () => {
    const calls: unknown[] = [];
    const storage = { path: path.join(tmpDir(), 'reuse.db') };
    t = await makeApp({ storage, permissions: { allow: ['Probe', 'Read', 'Glob'] } }, { extraTools: [probeTool({ calls, readOnly: true })] });
    // A loop that numbers its calls anew each turn: turn 1's call_0 was a Read, turn 2's is a Glob.
    const oa = (id: string, name: string, args: unknown) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
    const turn1 = await execute(t.app, { session_id: 'r', tool_uses: [oa('call_0', 'Read', { file_path: 'nope.txt' }), oa('call_1', 'Probe', { value: 'a' })] });
    expect(turn1.status).toBe(200);
    const rows = () => t!.app.toolexec.executions.list({ sessionId: 'r', limit: 100 }).length;
    const before = rows();
    const refused = async (body: unknown, where: RegExp) => {
      const r = await t!.app.inject({ method: 'POST', url: '/execute', payload: body as object });
      expect(r.statusCode).toBe(409);
      const err = r.json().error as { code: string; message: string };
      expect(err.code).toBe('TOOLEXEC_ERR_TOOL_USE_ID_REUSED');
      expect(err.message).toMatch(where);
    };
    // Another tool under an id of an earlier turn; the same tool with another input; a fresh call beside it does not run either.
    await refused({ session_id: 'r', tool_uses: [oa('call_new', 'Probe', { value: 'b' }), oa('call_0', 'Glob', { pattern: '*' })] }, /tool_uses\[1\]: the id call_0 already names an earlier call of this session \(Read\)/);
    await refused({ session_id: 'r', tool_uses: [oa('call_1', 'Probe', { value: 'c' })] }, /call_1 already names an earlier call of this session \(Probe\)/);
    // Twice in one request, as two different calls.
    await refused({ session_id: 'r', tool_uses: [use('Probe', { value: 'x' }, 'twin'), use('Probe', { value: 'y' }, 'twin')] }, /tool_uses\[1\]: the id twin already names tool_uses\[0\] of this request/);
    expect(calls).toEqual([{ value: 'a' }]);
    expect(rows()).toBe(before);
    // The same call twice in one request is one call.
    const twins = await execute(t.app, { session_id: 'r', tool_uses: [use('Probe', { value: 'x' }, 'twin'), use('Probe', { value: 'x' }, 'twin')] });
    expect(twins.body.executions.map((e) => e.replayed)).toEqual([undefined, true]);
    expect(calls).toHaveLength(2);
    // After a restart, from the database: still refused with another input, replayed with the same.
    await t.close();
    t = await makeApp({ storage, permissions: { allow: ['Probe', 'Read', 'Glob'] } }, { extraTools: [probeTool({ calls, readOnly: true })] });
    await refused({ session_id: 'r', tool_uses: [oa('call_0', 'Read', { file_path: 'other.txt' })] }, /call_0 already names an earlier call of this session \(Read\)/);
    const replay = await execute(t.app, { session_id: 'r', tool_uses: [oa('call_0', 'Read', { file_path: 'nope.txt' })] });
    expect(replay.body.executions[0]).toMatchObject({ replayed: true, tool: 'Read' });
  });

  it('replays a retry of an input stored cut (past STORED_INPUT_MAX_CHARS) whose keys come back in another order, and still refuses another input', async () => {
    const calls: unknown[] = [];
    const storage = { path: path.join(tmpDir(), 'big-reuse.db') };
    t = await makeApp({ storage, permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({ calls })] });
    // As a Write of a 20 KB file: the record keeps its first 16 KB; a database that sorts keys sends it back reordered.
    const big = 'x'.repeat(2 * STORED_INPUT_MAX_CHARS);
    const first = await execute(t.app, { session_id: 'b', tool_uses: [use('Probe', { value: big, count: 1 }, 'w1')] });
    expect(first.status).toBe(200);
    const retry = async () => {
      const again = await execute(t!.app, { session_id: 'b', tool_uses: [use('Probe', { count: 1, value: big }, 'w1')] });
      expect(again.status).toBe(200);
      expect(again.body.executions[0]).toMatchObject({ id: first.body.executions[0]!.id, replayed: true });
      const other = await t!.app.inject({ method: 'POST', url: '/execute', payload: { session_id: 'b', tool_uses: [use('Probe', { count: 1, value: `${big}y` }, 'w1')] } });
      expect(other.statusCode).toBe(409);
      expect(other.json().error.code).toBe('TOOLEXEC_ERR_TOOL_USE_ID_REUSED');
    };
    await retry();
    // And from the record after a restart.
    await t.close();
    t = await makeApp({ storage, permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({ calls })] });
    await retry();
    expect(calls).toHaveLength(1);
  });

  it(`still replays a tool_use id from more than ${RECENT_TOOL_USES} calls back (kept as a hash; the row settles it), and across a restart`, async () => {
    const calls: unknown[] = [];
    const storage = { path: path.join(tmpDir(), 'idem.db') };
    t = await makeApp({ storage, permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({ calls, readOnly: true })] });
    const total = RECENT_TOOL_USES + 300;
    for (let start = 0; start < total; start += 256) {
      const uses = Array.from({ length: Math.min(256, total - start) }, (_, i) => use('Probe', { value: String(start + i) }, `tu${start + i}`));
      const r = await execute(t.app, { session_id: 'long', tool_uses: uses });
      expect(r.status).toBe(200);
    }
    expect(calls).toHaveLength(total);
    const session = t.app.toolexec.sessions.get('long');
    expect(session.toolUses.size).toBe(total);
    // tu0 left the recent window: only its hash is in memory.
    expect(session.toolUses.get('tu0')).toBeUndefined();
    expect(session.toolUses.mayBeOlder('tu0')).toBe(true);
    const replay = async () => {
      const r = await execute(t!.app, { session_id: 'long', tool_uses: [use('Probe', { value: '0' }, 'tu0'), use('Probe', { value: 'new' }, 'fresh')] });
      expect(r.body.executions[0]).toMatchObject({ replayed: true, status: 'succeeded' });
      expect(r.body.tool_results[0]!.content).toBe('value=0');
      return r;
    };
    await replay();
    expect(calls).toHaveLength(total + 1); // only 'fresh' ran
    await t.close();
    t = await makeApp({ storage, permissions: { allow: ['Probe'] } }, { extraTools: [probeTool({ calls, readOnly: true })] });
    const r = await replay();
    expect(r.body.executions[1]).toMatchObject({ replayed: true }); // 'fresh' too, from the reloaded session
    expect(calls).toHaveLength(total + 1);
  });
});

describe('jsonDepthExceeds', () => {
  it('counts the nesting outside strings, whatever the brackets in all', () => {
    const nest = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;
    expect(jsonDepthExceeds(nest(4), 4)).toBe(false);
    expect(jsonDepthExceeds(nest(5), 4)).toBe(true);
    expect(jsonDepthExceeds(`{"a":${nest(4)}}`, 4)).toBe(true);
    // Many brackets, shallow: side by side, or inside strings.
    expect(jsonDepthExceeds(`[${Array.from({ length: 50 }, () => '{"a":[1]}').join(',')}]`, 4)).toBe(false);
    expect(jsonDepthExceeds(`{"s":"${'[{'.repeat(100)}"}`, 4)).toBe(false);
    // An escaped backslash ends before the closing quote: what follows is outside the string.
    expect(jsonDepthExceeds(`{"s":"\\\\","t":${nest(4)}}`, 4)).toBe(true);
    expect(jsonDepthExceeds('{"s":"x"}', 0)).toBe(true);
    expect(jsonDepthExceeds('"x"', 0)).toBe(false);
  });
});

describe('ToolUseIndex', () => {
  it('keeps recent ids whole, older ones as hashes, and never forgets one', () => {
    const idx = new ToolUseIndex(8);
    for (let i = 0; i < 5000; i++) idx.set(`toolu_${i}`, `ex_${i}`);
    idx.set('toolu_4999', 'ex_other'); // the first execution of an id wins
    expect(idx.size).toBe(5000);
    expect(idx.get('toolu_4999')).toBe('ex_4999');
    expect(idx.get('toolu_0')).toBeUndefined();
    // Exactly the last eight are kept whole, whatever the ring's turn.
    for (let i = 0; i < 5000; i++) expect(idx.get(`toolu_${i}`)).toBe(i >= 4992 ? `ex_${i}` : undefined);
    for (let i = 0; i < 4992; i++) expect(idx.mayBeOlder(`toolu_${i}`)).toBe(true);
    // Ids never seen: a hash hit is possible but rare (each one is then checked against the database).
    let hits = 0;
    for (let i = 0; i < 5000; i++) if (idx.mayBeOlder(`never_${i}`)) hits++;
    expect(hits).toBeLessThan(3);
    expect(new ToolUseIndex().mayBeOlder('x')).toBe(false);
  });
});
