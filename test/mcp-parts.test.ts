/**
 * The MCP client's parts on their own: `${VAR}` expansion, the bounded JSON
 * Schema compiler and its issues, the pattern guard, and the stdio
 * transport's framing, size limit and process-group cleanup (real child
 * processes).
 */
import { describe, expect, it } from 'vitest';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { expandServerConfig, expandString } from '../src/mcp/env-expand.js';
import { isRiskyPattern, SchemaCompiler } from '../src/mcp/input-schema.js';
import { ProcessStdioTransport } from '../src/mcp/stdio-transport.js';
import { formatIssues } from '../src/pipeline/input-errors.js';
import { isAlive, waitFor } from './helpers-mcp.js';

describe('${VAR} expansion', () => {
  it('expands set variables and defaults, and reports unset ones without a default', () => {
    const missing: string[] = [];
    const env = { HOST: 'example.test', EMPTY: '' };
    expect(expandString('https://${HOST}/mcp', env, missing)).toBe('https://example.test/mcp');
    expect(expandString('${PORT:-8080}', env, missing)).toBe('8080');
    expect(expandString('${EMPTY:-x}', env, missing)).toBe('');
    expect(expandString('a${NOPE}b${NOPE}', env, missing)).toBe('a${NOPE}b${NOPE}');
    expect(missing).toEqual(['NOPE']);
  });

  it('expands command, args, env and cwd of stdio servers and url and headers of HTTP ones', () => {
    const env = { BIN: '/usr/bin/node', TOKEN: 't0k' };
    const stdio = expandServerConfig({ command: '${BIN}', args: ['--x=${X:-1}'], env: { K: '${TOKEN}' }, cwd: '${D:-/tmp}' }, env);
    expect(stdio).toEqual({ value: { command: '/usr/bin/node', args: ['--x=1'], env: { K: 't0k' }, cwd: '/tmp' }, missing: [] });
    const web = expandServerConfig({ type: 'http', url: 'http://${H:-127.0.0.1}:1/mcp', headers: { authorization: 'Bearer ${TOKEN}', x: '${MISSING}' } }, env);
    expect(web.value).toMatchObject({ url: 'http://127.0.0.1:1/mcp', headers: { authorization: 'Bearer t0k' } });
    expect(web.missing).toEqual(['MISSING']);
  });
});

describe('pattern guard', () => {
  it('flags nested quantifiers and backreferences, and passes ordinary patterns', () => {
    for (const p of ['^(a+)+$', '(\\w*)*', '(x{2,})+', '((ab)*c)+', '(a)\\1', '(?:a+){2,}']) expect(isRiskyPattern(p), p).toBe(true);
    for (const p of ['^[a-z]+$', '(ab)+', '(a|b)*', '\\d{3}-\\d{4}', '(a{1})+', '^(\\+|-)?\\d+$', '[(+*)]+', '(a+)?b'])
      expect(isRiskyPattern(p), p).toBe(false);
  });
});

describe('schema compiler', () => {
  const compiler = new SchemaCompiler();

  function issuesFor(schema: Record<string, unknown>, input: unknown): string {
    const c = compiler.compile(schema);
    if (!c.ok) throw new Error(c.error);
    const r = c.zod.safeParse(input);
    return r.success ? 'ok' : formatIssues('T', r.error.issues, input);
  }

  it('words ajv errors as the pipeline words zod issues, with paths', () => {
    const schema = {
      type: 'object',
      properties: {
        n: { type: 'integer' },
        items: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
      },
      required: ['n'],
      additionalProperties: false,
    };
    const text = issuesFor(schema, { n: 'x', items: [{}, { id: 3 }], extra: 1 });
    expect(text).toContain('The parameter `n` type is expected as `integer` but provided as `string`');
    expect(text).toContain('The required parameter `items[0].id` is missing');
    expect(text).toContain('The parameter `items[1].id` type is expected as `string` but provided as `number`');
    expect(text).toContain('An unexpected parameter `extra` was provided');
    expect(issuesFor(schema, [])).toContain('The input must be a JSON object');
    expect(issuesFor(schema, { n: 1, items: [{ id: 'a' }] })).toBe('ok');
  });

  it('reads draft-07 and 2020-12 schemas, and keeps $id collisions apart', () => {
    const d7 = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      $id: 'same',
      type: 'object',
      definitions: { s: { type: 'string' } },
      properties: { a: { $ref: '#/definitions/s' } },
    };
    const d2020 = { $schema: 'https://json-schema.org/draft/2020-12/schema', $id: 'same', type: 'object', $defs: { n: { type: 'number' } }, properties: { a: { $ref: '#/$defs/n' } } };
    expect(issuesFor(d7, { a: 1 })).toContain('expected as `string`');
    expect(issuesFor(d2020, { a: 'x' })).toContain('expected as `number`');
    expect(issuesFor({ ...d2020 }, { a: 2 })).toBe('ok');
  });

  it('leaves to the server the patterns JavaScript cannot read or should not run', () => {
    const s = (pattern: string) => ({ type: 'object', properties: { v: { type: 'string', pattern } } });
    expect(issuesFor(s('(?P<name>a)'), { v: 'zzz' })).toBe('ok');
    expect(issuesFor(s('^[a-z\\-]+$'), { v: 'a-b' })).toBe('ok');
    expect(issuesFor(s('^[a-z\\-]+$'), { v: 'A' })).toContain('must match pattern');
    expect(issuesFor(s('^(a+)+$'), { v: `${'a'.repeat(50)}!` })).toBe('ok');
  });

  it('refuses schemas that are not objects, not object-typed, too deep or too large', () => {
    expect(compiler.compile('nope')).toMatchObject({ ok: false });
    expect(compiler.compile({ type: 'string' })).toMatchObject({ ok: false, error: expect.stringContaining('not an object') });
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { x: deep } };
    expect(compiler.compile(deep)).toMatchObject({ ok: false, error: expect.stringContaining('deeper') });
    const big = { type: 'object', description: 'x'.repeat(200_000) };
    expect(compiler.compile(big)).toMatchObject({ ok: false, error: expect.stringContaining('characters of JSON') });
    expect(compiler.compile({ type: 'object', properties: { a: { $ref: 'http://example.test/s.json' } } })).toMatchObject({ ok: false });
  });
});

describe('stdio transport', () => {
  const node = (script: string, max?: number) =>
    new ProcessStdioTransport({ command: process.execPath, args: ['-e', script], env: process.env, cwd: process.cwd(), maxMessageBytes: max, killGraceMs: 500 });

  it('joins a message written in pieces and reports lines that are not JSON-RPC', async () => {
    const t = node(`process.stdout.write('not json\\n{"jsonrpc":"2.0",'); setTimeout(() => process.stdout.write('"method":"hello"}\\n'), 50); setInterval(() => {}, 1000);`);
    const got: JSONRPCMessage[] = [];
    const errors: string[] = [];
    t.onmessage = (m) => got.push(m);
    t.onerror = (e) => errors.push(e.message);
    await t.start();
    await waitFor(() => got.length > 0, 'the message');
    expect(got).toEqual([{ jsonrpc: '2.0', method: 'hello' }]);
    expect(errors[0]).toContain('not JSON-RPC');
    await t.close();
  });

  it('closes the connection on a message larger than the limit', async () => {
    const t = node(`process.stdout.write('x'.repeat(5000)); setInterval(() => {}, 1000);`, 1000);
    let closed = false;
    const errors: string[] = [];
    t.onclose = () => (closed = true);
    t.onerror = (e) => errors.push(e.message);
    await t.start();
    const pid = t.pid!;
    await waitFor(() => closed, 'the transport to close');
    expect(errors).toContain('the server sent a message larger than 1000 bytes');
    expect(isAlive(pid)).toBe(false);
  });

  it('kills the whole process group on close, so no grandchild is left behind', async () => {
    const t = node(
      // SIGTERM is ignored before the pid is printed: printed first, a loaded machine could deliver the
      // signal between the two statements, and the default action would end the server without a SIGKILL.
      `process.on('SIGTERM', () => {}); const c = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.error('grandchild ' + c.pid); setInterval(() => {}, 1000);`,
    );
    await t.start();
    const grandchild = Number(await waitFor(() => /grandchild (\d+)/.exec(t.stderrTail())?.[1], 'the grandchild pid'));
    const pid = t.pid!;
    expect(isAlive(grandchild)).toBe(true);
    // The server ignores SIGTERM: the grace ends in SIGKILL.
    await t.close();
    expect(t.exit?.signal).toBe('SIGKILL');
    await waitFor(() => !isAlive(grandchild) && !isAlive(pid), 'the group to be gone');
  });
});
