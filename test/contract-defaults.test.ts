/**
 * Defaults the contract names, checked as values: the tool builder's
 * conservative defaults (contract §1), the time of each pipeline step
 * recorded on the execution, and a session's FileStateCache limits
 * (100 entries, 25 MB; contract §7).
 */
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FILE_STATE_MAX_BYTES, FILE_STATE_MAX_ENTRIES, FileStateCache } from '../src/file-state/cache.js';
import { buildTool } from '../src/tool/build-tool.js';
import { cleanupTmp, execute, makeApp, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

describe('the tool builder', () => {
  it('defaults to what is safe: not concurrency-safe, not read-only, passthrough permission, nothing for the classifier', async () => {
    const tool = buildTool({
      name: 'Minimal',
      description: 'A tool that says only what it must',
      inputSchema: z.strictObject({ x: z.string() }),
      maxResultSizeChars: 1000,
      call: async () => ({ data: 'ok' }),
    });
    const input = { x: 'a' };
    expect(tool.isConcurrencySafe(input)).toBe(false);
    expect(tool.isReadOnly(input)).toBe(false);
    expect(tool.isDestructive(input)).toBe(false);
    expect(tool.isEnabled()).toBe(true);
    expect(tool.shouldDefer).toBe(false);
    expect(tool.toAutoClassifierInput(input)).toBe('');
    expect(await tool.checkPermissions(input, {} as never)).toMatchObject({ behavior: 'passthrough' });
    expect(await tool.validateInput(input, {} as never)).toMatchObject({ ok: true });
    expect(tool.inputJSONSchema).toMatchObject({ type: 'object', properties: { x: { type: 'string' } }, required: ['x'] });
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('runs an unrated tool alone and asks before running it', async () => {
    const minimal = buildTool({
      name: 'Minimal',
      description: 'A tool that says only what it must',
      inputSchema: z.strictObject({}),
      maxResultSizeChars: 1000,
      call: async () => ({ data: 'ran' }),
    });
    t = await makeApp({ permissions: { headless: 'deny' } }, { extraTools: [minimal] });
    const r = await execute(t.app, { tool_uses: [use('Minimal', {})] });
    expect(r.body.executions[0]).toMatchObject({ status: 'denied', decision: { behavior: 'deny', reason: { type: 'headless' } } });
  });
});

describe('a tool without checks of its own', () => {
  it('passes validation and the tool layer as one that returns OK and passthrough, and a tool with its own checks is still asked', async () => {
    const plain = buildTool({ name: 'Plain', description: 'No checks', inputSchema: z.strictObject({}), maxResultSizeChars: 1000, call: async () => ({ data: 'plain' }) });
    const picky = buildTool({
      name: 'Picky',
      description: 'Checks of its own',
      inputSchema: z.strictObject({ n: z.number() }),
      maxResultSizeChars: 1000,
      validateInput: async ({ n }) => (n > 0 ? { ok: true } : { ok: false, message: 'n must be positive', code: 1 }),
      checkPermissions: async ({ n }) => (n > 1 ? { behavior: 'deny', message: 'too big', type: 'tool', detail: 'n > 1' } : { behavior: 'passthrough' }),
      call: async () => ({ data: 'picky' }),
    });
    t = await makeApp({ permissions: { allow: ['Plain', 'Picky'] } }, { extraTools: [plain, picky] });
    const r = await execute(t.app, { tool_uses: [use('Plain', {}), use('Picky', { n: 0 }), use('Picky', { n: 2 }), use('Picky', { n: 1 })] });
    expect(r.body.tool_results.map((b: { content: unknown; is_error?: boolean }) => [b.content, b.is_error ?? false])).toEqual([
      ['plain', false],
      ['<tool_use_error>n must be positive</tool_use_error>', true],
      [expect.stringContaining('too big'), true],
      ['picky', false],
    ]);
    const chain = async (id: string) => ((await t!.app.inject({ method: 'GET', url: `/executions/${id}` })).json().execution as { decision: { chain: unknown[] } }).decision.chain;
    expect(await chain(r.body.executions[0]!.id)).toEqual([
      { layer: 'tool', outcome: 'passthrough', detail: 'tool: passthrough' },
      { layer: 'rules', outcome: 'allow', detail: 'Plain' },
    ]);
    expect(await chain(r.body.executions[2]!.id)).toEqual([{ layer: 'tool', outcome: 'deny', detail: 'tool: n > 1' }]);
  });
});

describe('step timings', () => {
  it('records the time of all seven steps of a call that ran, and none after the step that stopped one', async () => {
    t = await makeApp({ permissions: { allow: ['Read'] } });
    fs.writeFileSync(path.join(t.workspace, 'a.txt'), 'hello\n');
    const r = await execute(t.app, { tool_uses: [use('Read', { file_path: 'a.txt' }), use('Read', { nope: 1 })] });
    const detail = async (id: string) => (await t!.app.inject({ method: 'GET', url: `/executions/${id}` })).json().execution as { timings: Record<string, number> };
    const ok = await detail(r.body.executions[0]!.id);
    expect(Object.keys(ok.timings).sort()).toEqual(['call', 'lookup', 'parse', 'permission', 'post_hooks', 'pre_hooks', 'validate']);
    for (const v of Object.values(ok.timings)) expect(v).toBeGreaterThanOrEqual(0);
    // A malformed input stops at parse: no later step has a time.
    const bad = await detail(r.body.executions[1]!.id);
    expect(Object.keys(bad.timings).sort()).toEqual(['lookup', 'parse']);
  });
});

describe('FileStateCache defaults', () => {
  it('keeps at most 100 entries and 25 MB, dropping the least recently used', () => {
    expect(FILE_STATE_MAX_ENTRIES).toBe(100);
    expect(FILE_STATE_MAX_BYTES).toBe(25 * 1024 * 1024);
    const c = new FileStateCache();
    const entry = (content: string) => ({ content, timestamp: 1, offset: undefined, limit: undefined, isPartialView: false });
    for (let i = 0; i < 101; i++) c.set(`/f${i}`, entry('x'));
    expect(c.has('/f0')).toBe(false);
    expect(c.has('/f1')).toBe(true);
    expect(c.has('/f100')).toBe(true);
    const big = 'y'.repeat(10 * 1024 * 1024);
    c.get('/f1'); // recently used: survives the byte eviction below longer than /f2
    c.set('/big1', entry(big));
    c.set('/big2', entry(big));
    c.set('/big3', entry(big)); // 30 MB > 25 MB: the oldest go until it fits
    expect(c.has('/big1')).toBe(false);
    expect(c.has('/big2')).toBe(true);
    expect(c.has('/big3')).toBe(true);
  });
});
