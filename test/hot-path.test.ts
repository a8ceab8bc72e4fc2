/**
 * The parts the hot path was made cheaper with, held to the behaviour of what
 * they replace: a call's cancellation without an AbortController per call,
 * the group commit that does not wait out its window when every call waits
 * for it, multi-row INSERTs that still lose only a bad row, and the
 * envelope's fast path that accepts only what zod accepts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnthropicToolUse, ExecuteRequest, OpenAIFunctionCallItem, OpenAIToolCall, plainExecuteRequest, readToolUses } from '../src/http/tool-uses.js';
import { CallAbort, CANCELLED } from '../src/pipeline/cancel.js';
import { commitWindowMs, GroupCommitWriter, MultiRowWriter, openDatabase } from '../src/storage/db.js';
import { ExecutionLog } from '../src/storage/executions.js';
import { timingsJson } from '../src/pipeline/run-tool-use.js';
import type { Timings } from '../src/pipeline/types.js';

describe('CallAbort', () => {
  it('aborts a signal made before or after the abort, and says so', () => {
    const early = new CallAbort();
    const s = early.signal;
    expect(s.aborted).toBe(false);
    early.abort();
    expect(early.aborted).toBe(true);
    expect(s.aborted).toBe(true);
    const late = new CallAbort();
    late.abort();
    late.abort();
    expect(late.signal.aborted).toBe(true);
  });

  it('ends a wait on a tool that never settles, and passes a settled outcome through', async () => {
    const a = new CallAbort();
    const waiting = a.race(new Promise<string>(() => {}));
    a.abort();
    expect(await waiting).toBe(CANCELLED);
    const b = new CallAbort();
    expect(await b.race(Promise.resolve('ok'))).toBe('ok');
    await expect(b.race(Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await b.race('plain' as unknown as Promise<string>)).toBe('plain');
  });

  it('follows a parent signal: before, while waiting, and in the signal it hands out', async () => {
    const parent = new AbortController();
    const a = new CallAbort(parent.signal);
    const s = a.signal;
    const waiting = a.race(new Promise<string>(() => {}));
    parent.abort();
    expect(a.aborted).toBe(true);
    expect(s.aborted).toBe(true);
    expect(await waiting).toBe(CANCELLED);
    const gone = new AbortController();
    gone.abort();
    expect(new CallAbort(gone.signal).signal.aborted).toBe(true);
    const only = CallAbort.of(gone.signal);
    expect(only.signal).toBe(gone.signal);
    expect(() => only.abort()).toThrow();
  });
});

describe('group commit', () => {
  it('takes TOOLEXEC_COMMIT_WINDOW_MS from 0 to 1000 ms, and the default of 2 for anything else', () => {
    expect([undefined, '', ' ', 'abc', '-1', '1e9', 'Infinity', 'NaN'].map(commitWindowMs)).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    expect(['0', '5', '0.5', '1000'].map(commitWindowMs)).toEqual([0, 5, 0.5, 1000]);
  });

  const start = (log: ExecutionLog, id: string): void =>
    log.start({ id, sessionId: 's', toolUseId: id, tool: 'T', status: 'queued', inputDigest: 'd', input: '{}', actor: null, createdAt: Date.now() });
  const end = (log: ExecutionLog, id: string): Promise<void> =>
    log.finish({ id, tool: 'T', status: 'succeeded', decision: null, errorClass: null, isError: false, resultId: null, resultBlock: '{}', hookMessages: null, timings: '{}', finishedAt: Date.now(), durationMs: 1 });

  it('commits at once when every started call waits for the commit, and waits while one still runs', async () => {
    const db = openDatabase({ path: ':memory:' });
    // A window far longer than the test's timeout: only an expedited commit can settle in time.
    const writer = new GroupCommitWriter(db, 600_000);
    const log = new ExecutionLog(db, writer);
    const [a, b] = [log.newId(), log.newId()];
    const order: string[] = [];
    start(log, a);
    start(log, b);
    writer.flushNow();
    const aDone = end(log, a).then(() => order.push('a'));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    order.push('b finishing');
    await Promise.all([aDone, end(log, b).then(() => order.push('b'))]);
    expect(order).toEqual(['b finishing', 'a', 'b']);
    expect(log.get(a)?.status).toBe('succeeded');
    expect(log.get(b)?.status).toBe('succeeded');
    db.close();
  });
});

describe('MultiRowWriter', () => {
  it('writes every good row of a batch and reports only the bad one', () => {
    const db = openDatabase({ path: ':memory:' });
    db.exec('CREATE TABLE t (k TEXT UNIQUE NOT NULL, v INTEGER)');
    const bad: string[] = [];
    const w = new MultiRowWriter<{ k: string; v: number }>(
      db,
      (n) => `INSERT INTO t (k, v) VALUES ${new Array<string>(n).fill('(?, ?)').join(', ')}`,
      2,
      (p, i, r) => {
        p[i] = r.k;
        p[i + 1] = r.v;
      },
      (r) => bad.push(r.k),
    );
    db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run('k5', -1);
    const rows = Array.from({ length: 15 }, (_, i) => ({ k: `k${i}`, v: i }));
    db.transaction(() => w.write(rows))();
    expect(bad).toEqual(['k5']);
    expect((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n).toBe(15);
    expect(db.prepare('SELECT v FROM t WHERE k = ?').get('k14')).toEqual({ v: 14 });
    db.close();
  });
});

describe('the envelope fast path', () => {
  const value = fc.oneof(fc.string({ maxLength: 300 }), fc.boolean(), fc.integer(), fc.constant(null), fc.constant(undefined), fc.array(fc.integer(), { maxLength: 2 }));

  it('accepts only what ExecuteRequest accepts, with the same fields', () => {
    // An envelope as agents send it takes the fast path (were it never taken, the property below would hold of nothing).
    const common = { session_id: 's', tool_uses: [{ type: 'tool_use', id: 'a', name: 'Read', input: {} }], wait: true };
    expect(plainExecuteRequest(common)).toEqual(common);
    let taken = 0;
    fc.assert(
      fc.property(fc.oneof(fc.record({ session_id: value, tool_uses: value, wait: value }, { requiredKeys: [] }), value), (body) => {
        const fast = plainExecuteRequest(body);
        if (fast === undefined) return;
        taken++;
        const z = ExecuteRequest.safeParse(body);
        expect(z.success).toBe(true);
        if (z.success) {
          expect(fast.session_id).toEqual(z.data.session_id);
          expect(fast.wait).toEqual(z.data.wait);
          expect(fast.tool_uses).toBe(z.data.tool_uses);
        }
      }),
      { numRuns: 1000 },
    );
    // About one body in thirteen is one the fast path takes.
    expect(taken).toBeGreaterThan(0);
  });

  it('reads a tool_use block exactly when zod accepts it (OpenAI shapes too)', () => {
    const idLike = fc.oneof(fc.string({ maxLength: 3 }), fc.string({ minLength: 510, maxLength: 514 }), fc.integer(), fc.constant(undefined));
    fc.assert(
      fc.property(fc.record({ id: idLike, name: idLike, input: value }, { requiredKeys: [] }), (block) => {
        const item = { type: 'tool_use', ...block };
        const z = AnthropicToolUse.safeParse(item);
        if (z.success) expect(readToolUses([item])).toEqual([{ id: z.data.id, name: z.data.name, input: z.data.input, format: 'anthropic' }]);
        else expect(() => readToolUses([item])).toThrow(/is not a valid tool_use block/);
      }),
      { numRuns: 1000 },
    );
    const args = fc.oneof(value, fc.constant('{"a":1}'), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }));
    fc.assert(
      fc.property(fc.record({ call_id: idLike, name: idLike, arguments: args }, { requiredKeys: [] }), (f) => {
        const item = { type: 'function_call', ...f };
        const z = OpenAIFunctionCallItem.safeParse(item);
        if (z.success) expect(readToolUses([item])[0]).toMatchObject({ id: z.data.call_id, name: z.data.name, format: 'openai-responses' });
        else expect(() => readToolUses([item])).toThrow(/is not a valid function_call item/);
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(
        fc.record({ id: idLike, type: fc.oneof(fc.constant('function'), value), function: fc.oneof(value, fc.record({ name: idLike, arguments: args }, { requiredKeys: [] })) }, { requiredKeys: ['function'] }),
        (c) => {
          const z = OpenAIToolCall.safeParse(c);
          if (z.success) expect(readToolUses([c])[0]).toMatchObject({ id: z.data.id, name: z.data.function.name, format: 'openai' });
          else expect(() => readToolUses([c])).toThrow(/is not a valid OpenAI tool call|is neither/);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('reads tool uses of every shape as before, and words a bad one through zod', () => {
    const uses = readToolUses([
      { type: 'tool_use', id: 'a', name: 'Read', input: { x: 1 } },
      { type: 'function_call', call_id: 'b', name: 'Glob', arguments: '{"p":1}' },
      { id: 'c', type: 'function', function: { name: 'Grep', arguments: 'not json' } },
      { id: 'd', function: { name: 'Bash', arguments: { c: 1 } } },
      { type: 'text', text: 'skipped' },
    ]);
    expect(uses).toEqual([
      { id: 'a', name: 'Read', input: { x: 1 }, format: 'anthropic' },
      { id: 'b', name: 'Glob', input: { p: 1 }, inputError: undefined, format: 'openai-responses' },
      { id: 'c', name: 'Grep', input: 'not json', inputError: expect.stringContaining('not valid JSON'), format: 'openai' },
      { id: 'd', name: 'Bash', input: { c: 1 }, inputError: undefined, format: 'openai' },
    ]);
    expect(() => readToolUses([{ type: 'tool_use', id: '', name: 'Read', input: {} }])).toThrow(/tool_uses\[0\] is not a valid tool_use block: id:/);
    expect(() => readToolUses([{ type: 'tool_use', id: 'x'.repeat(513), name: 'Read' }])).toThrow(/tool_uses\[0\] is not a valid tool_use block/);
    // An OpenAI tool call that lost its function is refused, not skipped as if it were a text block.
    expect(() => readToolUses([{ id: 'z9', type: 'function' }])).toThrow(/tool_uses\[0\] is an OpenAI tool call without its "function"/);
    expect(readToolUses([{ type: 'text', text: 'hi' }])).toEqual([]);
  });
});

describe('step timings in the row', () => {
  it('are the timings rounded to the microsecond, in their order, as JSON', () => {
    const steps = ['lookup', 'parse', 'validate', 'pre_hooks', 'permission', 'call', 'post_hooks'] as const;
    fc.assert(
      fc.property(fc.subarray([...steps]), fc.array(fc.double({ min: 0, max: 1e7, noNaN: true }), { minLength: 7, maxLength: 7 }), (keys, values) => {
        const t: Timings = {};
        keys.forEach((k, i) => (t[k] = values[i]!));
        const text = timingsJson(t);
        const rounded = Object.fromEntries(keys.map((k, i) => [k, Math.round(values[i]! * 1000) / 1000]));
        expect(JSON.parse(text)).toEqual(rounded);
        expect(Object.keys(JSON.parse(text) as object)).toEqual(keys);
      }),
      { numRuns: 1000 },
    );
    expect(timingsJson({})).toBe('{}');
    expect(timingsJson({ lookup: 0.0079487192589802, call: 12.3456789, post_hooks: 0 })).toBe('{"lookup":0.008,"call":12.346,"post_hooks":0}');
    expect(JSON.parse(timingsJson({ call: Number.POSITIVE_INFINITY }))).toEqual({ call: null });
  });
});
