/**
 * Logging: a call's lines carry the request id and the execution id; secrets
 * (configured tokens, values of variables `server.redact` names, its
 * patterns) never reach the output, whichever field or message carries them.
 */
import fs from 'node:fs';
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { z } from 'zod';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { makeMasker, planRedaction } from '../src/observability/logging.js';
import { buildTool } from '../src/tool/build-tool.js';
import { cleanupTmp, execute, makeApp, use, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});
afterAll(cleanupTmp);

const TOKEN = 'tok_0123456789abcdefXYZ';
const ENV_SECRET = 'env-secret-value-42';
const PATTERN_SECRET = 'sk-live-abcdefghijklmnop';

/** A tool whose result cannot be mapped: the pipeline logs the error, which quotes secrets. */
const leaky = buildTool({
  name: 'Leaky',
  description: 'Fails in a way the pipeline logs',
  inputSchema: z.strictObject({}),
  maxResultSizeChars: 1000,
  isReadOnly: () => true,
  checkPermissions: async () => ({ behavior: 'allow', type: 'tool', detail: 'test tool' }),
  call: async () => ({ data: 'x' }),
  mapToolResultToToolResultBlockParam: (_data, id) => ({
    type: 'tool_result',
    tool_use_id: id,
    content: [
      {
        get type(): 'text' {
          throw new Error(`connect failed for Bearer ${TOKEN} with ${ENV_SECRET} and ${PATTERN_SECRET}`);
        },
        text: '',
      },
    ],
  }),
});

function capture(): { stream: Writable; text: () => string; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  const text = (): string => chunks.join('');
  return { stream, text, lines: () => text().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('logging', () => {
  it('never writes a configured token, a redacted variable’s value or a redact pattern, and ties a call’s lines to its request', async () => {
    const out = capture();
    t = await makeApp(
      {
        server: { tokens: [{ name: 'ops', token: TOKEN }], redact: ['MY_SERVICE_SECRET', '/sk-live-[a-z]+/'] },
        logging: { level: 'debug' },
      },
      { extraTools: [leaky], logger: undefined, logStream: out.stream, env: { ...process.env, MY_SERVICE_SECRET: ENV_SECRET } },
    );
    const auth = { authorization: `Bearer ${TOKEN}`, 'x-request-id': 'req-leaky-1' };
    expect((await t.app.inject({ method: 'GET', url: '/stats', headers: auth })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: `/stats?token=${TOKEN}` })).statusCode).toBe(401);
    const r = await execute(t.app, { tool_uses: [use('Leaky', {}, 'tu_leaky')] }, auth);
    expect(r.body.executions[0]).toMatchObject({ status: 'failed', error_class: 'internal' });

    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (t.app.server.address() as { port: number }).port;
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws?token=${encodeURIComponent(TOKEN)}`);
    const hello = await new Promise<string>((resolve, reject) => {
      ws.once('message', (m) => resolve(String(m)));
      ws.once('error', reject);
    });
    expect(JSON.parse(hello)).toMatchObject({ type: 'hello', principal: 'ops' });
    ws.close();
    await t.close();
    t = undefined;

    const text = out.text();
    for (const secret of [TOKEN, encodeURIComponent(TOKEN), ENV_SECRET, PATTERN_SECRET]) expect(text).not.toContain(secret);
    const lines = out.lines();
    // The lines the secrets were in are there, masked.
    const error = lines.find((l) => l.msg === 'pipeline error');
    expect(error).toBeDefined();
    expect(error).toMatchObject({ reqId: 'req-leaky-1', tool: 'Leaky' });
    expect(String(error!.execution_id)).toMatch(/^ex_/);
    expect(JSON.stringify(error!.err)).toContain('Bearer [redacted] with [redacted] and [redacted]');
    const urls = lines.map((l) => (l.req as { url?: string } | undefined)?.url).filter((u): u is string => typeof u === 'string');
    expect(urls).toContain('/stats?token=[redacted]');
    expect(urls.some((u) => u.startsWith('/ws?token=[redacted]'))).toBe(true);
    // The README names the fields operators filter on, as these lines have them.
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const obs = readme.slice(readme.indexOf('\n## Observability\n'), readme.indexOf('\n## Benchmarks\n'));
    const completed = lines.find((l) => l.msg === 'request completed');
    expect(completed).toMatchObject({ reqId: expect.any(String), res: { statusCode: expect.any(Number) }, responseTime: expect.any(Number) });
    for (const name of ['reqId', 'execution_id', 'tool', 'incoming request', 'request completed', 'responseTime']) expect(obs, name).toContain(name);
  });

  it('masks a secret in each form a JSON line can hold it', () => {
    const secret = 'a"b\\c d/é';
    const mask = makeMasker([secret])!;
    const line = JSON.stringify({ msg: `raw ${secret}`, url: `/x?q=${encodeURIComponent(secret)}` });
    const masked = mask(line);
    expect(masked).not.toContain(JSON.stringify(secret).slice(1, -1));
    expect(masked).not.toContain(encodeURIComponent(secret));
    expect(JSON.parse(masked)).toEqual({ msg: 'raw [redacted]', url: '/x?q=[redacted]' });
    expect(makeMasker([], [])).toBeUndefined();
  });

  it('reads server.redact entries as patterns, paths and variable names, and refuses a bad pattern', () => {
    const plan = planRedaction(['/tok-[0-9]+/i', 'body.password', 'API_KEY', 'UNSET_VAR'], { API_KEY: 'key-value-1234' });
    expect(plan.patterns.map(String)).toEqual(['/tok-[0-9]+/gi']);
    expect(plan.paths).toEqual(['body.password', 'API_KEY', 'UNSET_VAR']);
    expect(plan.secrets).toEqual(['key-value-1234']);
    expect(() => planRedaction(['/(unclosed/'], {})).toThrow(/server\.redact/);
  });
});
