/**
 * POST /execute fuzzed with thousands of random and malformed bodies: the
 * service answers 2xx or 4xx with an error code, never 5xx, and stays up.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTmp, makeApp, probeTool, type TestApp } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ permissions: { allow: ['Probe', 'Read', 'Glob'] } }, { extraTools: [probeTool({})] });
});
afterAll(async () => {
  await t.close();
  cleanupTmp();
});

async function post(payload: string, contentType = 'application/json') {
  const res = await t.app.inject({ method: 'POST', url: '/execute', payload, headers: { 'content-type': contentType } });
  return res;
}

function check(res: Awaited<ReturnType<typeof post>>): void {
  expect(res.statusCode).toBeLessThan(500);
  if (res.statusCode >= 400) expect(res.json().error.code).toMatch(/^TOOLEXEC_ERR_/);
}

const toolName = fc.oneof(fc.constantFrom('Probe', 'Read', 'Glob', 'mcp__x__y', '', 'constructor', '__proto__'), fc.string());
const input = fc.oneof(
  fc.jsonValue(),
  fc.record({ value: fc.oneof(fc.string(), fc.integer()), count: fc.oneof(fc.integer(), fc.string()) }, { requiredKeys: [] }),
  fc.record({ file_path: fc.oneof(fc.string(), fc.constantFrom('.', '/', '/dev/zero', '../../etc/passwd', 'result://nope')), offset: fc.integer(), limit: fc.integer() }, { requiredKeys: [] }),
  fc.record({ pattern: fc.oneof(fc.string(), fc.constantFrom('**/*', '[', '{a,b', '***')), path: fc.string() }, { requiredKeys: [] }),
);
const anthropic = fc.record({ type: fc.constant('tool_use'), id: fc.oneof(fc.string(), fc.integer()), name: toolName, input }, { requiredKeys: ['type'] });
const openai = fc.record({
  id: fc.string(),
  type: fc.constant('function'),
  function: fc.record({ name: toolName, arguments: fc.oneof(fc.json(), fc.string(), fc.jsonValue()) }, { requiredKeys: [] }),
});
const item = fc.oneof(anthropic, openai, fc.jsonValue(), fc.record({ type: fc.string(), text: fc.string() }));
const envelope = fc.record(
  {
    session_id: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    tool_uses: fc.oneof(fc.array(item, { maxLength: 6 }), item, fc.record({ role: fc.constant('assistant'), content: fc.array(item, { maxLength: 4 }) })),
    wait: fc.oneof(fc.boolean(), fc.jsonValue()),
  },
  { requiredKeys: [] },
);

describe('POST /execute fuzz', () => {
  it('never answers 5xx to structured envelopes with random tool uses', async () => {
    await fc.assert(
      fc.asyncProperty(envelope, async (body) => {
        check(await post(JSON.stringify(body)));
      }),
      { numRuns: 2500 },
    );
  });

  it('never answers 5xx to arbitrary JSON or arbitrary bytes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.json(), fc.string(), fc.string({ unit: 'binary' })), async (raw) => {
        check(await post(raw));
      }),
      { numRuns: 2000 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', ''), async (raw, ct) => {
        check(await post(raw, ct));
      }),
      { numRuns: 300 },
    );
  });

  it('still serves normally afterwards', async () => {
    const res = await post(JSON.stringify({ tool_uses: [{ type: 'tool_use', id: 'ok', name: 'Probe', input: { value: 'still up' } }] }));
    expect(res.statusCode).toBe(200);
    expect(res.json().tool_results[0].content).toBe('value=still up');
  });
});
