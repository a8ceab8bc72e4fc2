/**
 * Every built-in tool fuzzed through POST /execute with schema-shaped inputs
 * (and wrong-typed mutations of them) over a workspace of awkward files: the
 * service answers 200 (or a coded 4xx for the envelope), each failure is a
 * tool_result with is_error and a class other than `internal`, and the
 * service still works afterwards. Bash runs only harmless commands confined to
 * the workspace; WebFetch reaches only loopback.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupTmp, makeApp, type TestApp } from './helpers.js';
import { fillWorkspace, mutated, notebookJson, send, startWebServer } from './helpers-fuzz-tools.js';

let t: TestApp;
let files: ReturnType<typeof fillWorkspace>;
let web: Awaited<ReturnType<typeof startWebServer>>;
const SESSION = 'fuzz-tools';

beforeAll(async () => {
  web = await startWebServer();
  t = await makeApp({
    permissions: { defaultMode: 'bypassPermissions', allowBypass: true },
    bash: { defaultTimeoutMs: 5000 },
    webFetch: { allowPrivateNetwork: true, timeoutMs: 3000, maxBytes: 200_000 },
  });
  files = fillWorkspace(t.workspace);
});
afterAll(async () => {
  await t?.close();
  await web?.close();
  cleanupTmp();
});

/** Per tool, how many calls succeeded and failed: the fuzz must reach the tools, not just their schemas. */
const tally = new Map<string, { ok: number; err: number; classes: Set<string> }>();
async function run(name: string, input: unknown) {
  const t0 = Date.now();
  const o = await send(t, SESSION, [{ name, input }]);
  if (process.env.FUZZ_TOOLS_DEBUG && Date.now() - t0 > 1000) console.log(`SLOW ${Date.now() - t0} ms ${name} ${JSON.stringify(input).slice(0, 400)}`);
  const e = tally.get(name) ?? { ok: 0, err: 0, classes: new Set<string>() };
  if (o.isError) e.err += 1;
  else e.ok += 1;
  if (o.errorClass) e.classes.add(o.errorClass);
  if (process.env.FUZZ_TOOLS_DEBUG && o.isError) console.log(`ERR ${name} ${o.errorClass} ${o.text.slice(0, 140).replace(/\n/g, ' ')}`);
  tally.set(name, e);
  return o;
}
const field = (i: unknown, k: string): unknown => (typeof i === 'object' && i !== null ? (i as Record<string, unknown>)[k] : undefined);

/** A property for an editing tool: sometimes the file is Read first (so the edit may pass the read-before-edit check), then the tool runs. */
const afterMaybeRead =
  (tool: string, pathKey: string) =>
  async (i: unknown, readFirst: boolean): Promise<void> => {
    const p = field(i, pathKey);
    if (readFirst && typeof p === 'string') await run('Read', { file_path: p });
    await run(tool, i);
  };
const abs = (rel: string) => path.join(t.workspace, rel);
/** A workspace path spelled absolute, relative, with ./, a trailing slash or doubled slashes. */
const spelled = (names: string[]) =>
  fc.tuple(fc.constantFrom(...names), fc.constantFrom('abs', 'rel', 'dot', 'slash', 'double')).map(([n, how]) => {
    if (how === 'rel') return n;
    if (how === 'dot') return `./${n}`;
    if (how === 'slash') return `${abs(n)}/`;
    if (how === 'double') return abs(n).replace(/\//g, '//');
    return abs(n);
  });
const weirdString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('', '\u0000', '\r\n', '\ufeff', 'e\u0301', '\u00e9', '\ud800', '\u202e', 'a'.repeat(70_000), '$(true)', '`x`', '%s%n'),
);
/** Mostly `valid`, sometimes `odd`: enough valid inputs reach the tools' own code. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, odd: fc.Arbitrary<U>) => fc.oneof({ weight: 8, arbitrary: valid as fc.Arbitrary<T | U> }, { weight: 1, arbitrary: odd as fc.Arbitrary<T | U> });
const bigInt = mostly(fc.oneof(fc.nat(60), fc.constantFrom(0, 1, 2 ** 31, 2 ** 53 - 1, Number.MAX_SAFE_INTEGER)), fc.oneof(fc.integer(), fc.constantFrom(-1, 1e300, 0.5)));
const runs = (n: number) => ({ numRuns: n, endOnFailure: true });

describe('built-in tools fuzzed through POST /execute (bypassPermissions)', () => {
  it('Read: odd files, offset/limit extremes, bogus result ids', async () => {
    const readPath = fc.oneof(
      { weight: 5, arbitrary: spelled(files.readable) },
      fc.constantFrom('result://bogus', 'result://', 'result://../../etc', '/etc/hostname', '/dev/null', '/dev/zero', '/dev/stdin', '/proc/self/fd/0', '/proc/self/status', '../../..', '~/x', '\u0000x', 'x'.repeat(5000), '/'),
    );
    const input = fc.record(
      { file_path: readPath, offset: bigInt, limit: bigInt.map((n) => (n === 0 ? 1 : n)) },
      { requiredKeys: ['file_path'] },
    );
    await fc.assert(fc.asyncProperty(mutated(input), async (i) => void (await run('Read', i))), runs(200));
  });

  it('Read of a stored result: offset/limit extremes', async () => {
    const big = await run('Bash', { command: 'for i in $(seq 1 3000); do echo "row $i of the stored output"; done', timeout: 10_000 });
    expect(big.isError).toBe(false);
    expect(big.resultId).toMatch(/\S/);
    const input = fc.record({ file_path: fc.constant(`result://${big.resultId}`), offset: bigInt, limit: bigInt }, { requiredKeys: ['file_path'] });
    await fc.assert(fc.asyncProperty(mutated(input), async (i) => void (await run('Read', i))), runs(60));
  });

  it('Write: new files, deep dirs, non-files, odd content', async () => {
    const input = fc.record({ file_path: spelled(files.writable), content: weirdString });
    await fc.assert(
      fc.asyncProperty(mutated(input), fc.boolean(), afterMaybeRead('Write', 'file_path')),
      runs(80),
    );
  });

  it('Edit: empty, missing and repeated old_string, replace_all, unicode forms, CRLF', async () => {
    const text = mostly(fc.constantFrom('', 'alpha', 'beta', 'alpha\n', 'alpha\r\nbeta', 'caf\u00e9', 'cafe\u0301', 'zzz-not-there', '\n', '\r', 'gamma'), weirdString);
    const input = fc
      .record({ file_path: spelled(files.writable), old_string: text, new_string: text, replace_all: fc.boolean() }, { requiredKeys: ['file_path', 'old_string', 'new_string'] })
      .map((i) => (i.old_string === i.new_string ? { ...i, new_string: `${i.new_string}+` } : i));
    // One edit known to succeed, so that the tally below sees Edit work.
    fs.writeFileSync(abs('edit/seed.txt'), 'seed one\r\n');
    await run('Read', { file_path: abs('edit/seed.txt') });
    expect((await run('Edit', { file_path: abs('edit/seed.txt'), old_string: 'one', new_string: 'two' })).isError).toBe(false);
    await fc.assert(
      fc.asyncProperty(mutated(input), fc.boolean(), afterMaybeRead('Edit', 'file_path')),
      runs(100),
    );
  });

  it('Glob: pathological patterns, braces, ** through a link loop', async () => {
    const pattern = fc.oneof(
      fc.constantFrom('**/*', '**/**/**/**/*', '{a,{b,{c,{d}}}}', '{,,,,}', '{1..100000}', '[', '[]', '[!]', '[z-a]', '***', '**/', '/', '../**', '\\', '\\\\*', 'a{b', '!(x)', '@(a|b)', '+(a)*', `${'*'.repeat(200)}x`, `${'{a,b}'.repeat(30)}`, '**/*.{txt,ipynb,bin}', 'dir/up/**/*', '.*', '**/.*'),
      fc.string(),
      fc.stringMatching(/^[*?{}[\]!,./a-z\\]{1,30}$/),
    );
    const input = fc.record({ pattern, path: mostly(spelled(['.', 'dir', 'deep', 'dir/up', 'loop-a', 'text.txt', 'nope', 'fifo']), fc.string()) }, { requiredKeys: ['pattern'] });
    await fc.assert(fc.asyncProperty(mutated(input), async (i) => void (await run('Glob', i))), runs(120));
  });

  it('Grep: catastrophic and invalid regexes, huge context, unknown types, limit extremes', async () => {
    const pattern = mostly(
      fc.constantFrom('needle', 'line \\d+', 'foo|bar', '^$', 'x{3,}', '(?i)NEEDLE', 'alpha\\r?$', '(a+)+$', '(a|aa)+b', '(x+x+)+y', '(.*)*needle', '^(\\w+\\s?)*$', '(', ')', '[', '\\', '*', '+?', 'a{99999}', 'a{2,1}', '(?<=x)y', '(?=a)', '(a)\\1', '\\p{Bogus}', '(?P<n>x)', '[[:alpha:]]', '\\x{110000}', '\\u{ffffff}', '', '.', '^', '$', '\\n', 'needle\\r?$', '(?s).', '(?i)NEEDLE', '\\K', '\\Z', '\u0000'),
      fc.string(),
    );
    const input = fc.record(
      {
        pattern,
        path: spelled(['.', 'dir', 'deep', 'text.txt', 'bin.bin', 'huge-line.txt', 'crlf.txt', 'invalid-utf8.txt', 'fifo', 'loop-a', 'nope', 'dir/up', 'dangling']),
        glob: mostly(fc.constantFrom('*.txt', '*.{ts,tsx}', '**', '!*.bin', '*.txt *.bin', 'a,b', '*.ipynb'), fc.oneof(fc.constantFrom('[', '{'), fc.string())),
        output_mode: fc.constantFrom('content', 'files_with_matches', 'count'),
        '-A': bigInt,
        '-B': bigInt,
        '-C': bigInt,
        '-n': fc.boolean(),
        '-i': fc.boolean(),
        type: mostly(fc.constantFrom('js', 'py', 'rust', 'txt', 'jupyter'), fc.oneof(fc.constantFrom('nosuchtype', '', 'all', 'ts,js'), fc.string())),
        head_limit: bigInt,
        offset: bigInt,
        multiline: fc.boolean(),
      },
      { requiredKeys: ['pattern'] },
    );
    await fc.assert(fc.asyncProperty(mutated(input), async (i) => void (await run('Grep', i))), runs(100));
  });

  it('NotebookEdit: bad cell ids and indexes, every edit mode, malformed notebooks', async () => {
    const input = fc.record(
      {
        notebook_path: spelled(files.notebooks),
        cell_id: mostly(fc.constantFrom('intro', 'calc', 'cell-0', 'cell-1', 'cell-999', 'cell--1', 'cell-', '0', '-1', '1e3', 'cell-1.5', ''), fc.string()),
        new_source: mostly(fc.constantFrom('x = 1', '', '# md'), weirdString),
        cell_type: mostly(fc.constantFrom('code', 'markdown'), fc.constant('raw')),
        edit_mode: mostly(fc.constantFrom('replace', 'insert', 'delete'), fc.constant('append')),
      },
      { requiredKeys: ['notebook_path', 'new_source'] },
    );
    fs.writeFileSync(abs('nb-seed.ipynb'), notebookJson([{ cell_type: 'code', id: 'c1', metadata: {}, execution_count: null, outputs: [], source: 'x' }]));
    await run('Read', { file_path: abs('nb-seed.ipynb') });
    expect((await run('NotebookEdit', { notebook_path: abs('nb-seed.ipynb'), cell_id: 'c1', new_source: 'y' })).isError).toBe(false);
    await fc.assert(
      fc.asyncProperty(mutated(input), fc.boolean(), afterMaybeRead('NotebookEdit', 'notebook_path')),
      runs(100),
    );
  });

  it('TodoWrite: odd lists', async () => {
    const item = fc.record(
      { content: mostly(fc.string({ minLength: 1 }), weirdString), status: mostly(fc.constantFrom('pending', 'in_progress', 'completed'), fc.constantFrom('done', '')), activeForm: mostly(fc.string({ minLength: 1 }), weirdString), id: fc.string() },
      { requiredKeys: ['content', 'status', 'activeForm', 'id'] },
    ).map(({ id, ...rest }) => (id.length % 5 === 0 ? { ...rest, id } : rest));
    const input = fc.record({ todos: mostly(fc.array(item, { maxLength: 30 }), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 5 })) });
    await fc.assert(fc.asyncProperty(mutated(input), async (i) => void (await run('TodoWrite', i))), runs(60));
  });

  it('ToolSearch: odd queries and selections of unknown tools', async () => {
    const query = fc.oneof(
      fc.constantFrom('', 'select:', 'select:NoSuchTool', 'select:Read,NoSuch,,', 'select:__proto__', 'select:constructor', 'select:mcp__x__y', '+web', '+', '*', '.*', 'notebook edit', 'SELECT:webfetch', 'a'.repeat(10_000)),
      fc.string(),
      fc.string().map((s) => `select:${s}`),
    );
    const input = fc.record({ query, max_results: fc.oneof(bigInt, fc.nat(200)) }, { requiredKeys: ['query'] });
    await fc.assert(fc.asyncProperty(mutated(input), async (i) => void (await run('ToolSearch', i))), runs(80));
  });

  it('Bash: harmless commands in the workspace, weird bytes, timeouts at their bounds', async () => {
    const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const command = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }).map((s) => `echo ${quote(s)}`),
      fc.string({ maxLength: 200 }).map((s) => `printf '%s' ${quote(s)}`),
      fc.array(fc.integer({ min: 1, max: 255 }), { minLength: 1, maxLength: 40 }).map((b) => `printf '${b.map((x) => `\\x${x.toString(16).padStart(2, '0')}`).join('')}'`),
      fc.constantFrom(...files.readable.filter((f) => f !== 'fifo' && !f.startsWith('.'))).map((f) => `cat -- ${quote(f)} | head -c 2000`),
      fc.constantFrom('true', 'false', 'exit 3', 'sleep 0', 'ls -la', 'wc -c text.txt', 'echo out; echo err >&2', 'head -c 100000 huge-line.txt', 'printf ""', ':', 'echo $((1/0))', 'cat nope.txt', 'echo "unterminated'),
    );
    const timeout = mostly(fc.constantFrom(1, 2, 50, 3000, 600_000), fc.constantFrom(600_001, 0, -1, 1.5, 1e12, '100', null, true));
    const input = fc.record({ command, timeout, description: fc.string(), run_in_background: mostly(fc.constant(false), fc.constant(true)) }, { requiredKeys: ['command'] });
    await fc.assert(fc.asyncProperty(mutated(input, ['command']), async (i) => void (await run('Bash', i))), runs(50));
  });

  it('TaskOutput and TaskStop: real, unknown and odd ids; block and timeout at and past their bounds', async () => {
    /** Real tasks of this session for the fuzz to find. */
    const startTasks = async (commands: string[]): Promise<string[]> => {
      const ids: string[] = [];
      for (const command of commands) {
        const o = await run('Bash', { command, run_in_background: true });
        const id = /with ID: (b[0-9a-f]{8})/.exec(o.text)?.[1];
        expect(id, o.text).toBeDefined();
        ids.push(id!);
      }
      return ids;
    };
    const idsAnd = (ids: string[]) =>
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...ids) },
        fc.constantFrom('b00000000', '', ' ', '__proto__', 'constructor', 'toString', ids[0]!.toUpperCase()),
        fc.string({ maxLength: 20 }),
      );
    // Tasks that end at once: a blocking read (whose timeout a mutation may drop to its 30 s default) never waits long.
    const ended = await startTasks(['echo short', 'printf "a\\nb"; exit 4']);
    const timeout = mostly(fc.constantFrom(0, 1, 50), fc.constantFrom(600_001, -1, 1.5, '5', null, 1e12));
    const output = fc.record({ task_id: idsAnd(ended), block: mostly(fc.boolean(), fc.constantFrom('yes', null, 0)), timeout }, { requiredKeys: ['task_id'] });
    await fc.assert(fc.asyncProperty(mutated(output), async (i) => void (await run('TaskOutput', i))), runs(60));

    const long = await startTasks(['sleep 30', 'sleep 30']);
    // One stop known to succeed (the fuzz may never draw a running task cleanly).
    const stopped = await run('TaskStop', { task_id: long.pop()! });
    expect(stopped.isError, stopped.text).toBe(false);
    const stop = fc.record({ task_id: idsAnd([...long, ...ended]), shell_id: idsAnd([...long, ...ended]) }, { requiredKeys: [] });
    await fc.assert(fc.asyncProperty(mutated(stop), async (i) => void (await run('TaskStop', i))), runs(40));
  });

  it('WebFetch: loopback pages, a closed port, invalid and huge URLs, other schemes', async () => {
    const url = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('/html', '/json', '/binary', '/latin1', '/big', '/redirect-same', '/redirect-other', '/redirect-bad', '/redirect-loop', '/500', '/empty', '/reset', '/no-type', '/nope', '/%', '/%E0%A4%A', '/?q=\u00e9').map((p) => web.base + p) },
      fc.constantFrom(
        `http://127.0.0.1:${web.closedPort}/`,
        `http://127.0.0.1:${web.closedPort}/x?y`,
        `${web.base}/${'a'.repeat(3000)}`,
        `${web.base}/${'a'.repeat(300_000)}`,
        'file:///etc/passwd',
        'ftp://127.0.0.1/',
        'javascript:alert(1)',
        'data:text/plain,hi',
        'http://',
        'http://[::1',
        'http://user:pw@127.0.0.1/',
        'http://127.0.0.1:99999/',
        'http://127.0.0.1:0/',
        '',
        ' ',
        '127.0.0.1',
      ),
      // Random text never spells a scheme, so it cannot reach past loopback.
      fc.string().filter((s) => !/[a-z0-9+.-]+:/i.test(s)),
    );
    const input = fc.record({ url, prompt: weirdString });
    await fc.assert(fc.asyncProperty(mutated(input, ['url']), async (i) => void (await run('WebFetch', i))), runs(60));
  });

  it('a batch of mixed tool uses in one envelope', async () => {
    const use = fc.oneof(
      fc.record({ name: fc.constant('Read'), input: fc.record({ file_path: spelled(files.readable), offset: bigInt }, { requiredKeys: ['file_path'] }) }),
      fc.record({ name: fc.constant('Glob'), input: fc.record({ pattern: fc.constantFrom('**/*', '*.txt', '[') }) }),
      fc.record({ name: fc.constant('Grep'), input: fc.record({ pattern: fc.constantFrom('needle', '(', '(a+)+$'), output_mode: fc.constantFrom('content', 'count') }) }),
      fc.record({ name: fc.constant('TodoWrite'), input: fc.record({ todos: fc.constant([{ content: 'x', status: 'pending', activeForm: 'xing' }]) }) }),
      fc.record({ name: fc.constant('Bash'), input: fc.constant({ command: 'echo batch', timeout: 5000 }) }),
      // Writers on one file in one envelope: they run in order, each sees the last one's file.
      fc.record({ name: fc.constant('Write'), input: fc.record({ file_path: fc.constant('w/batch.txt'), content: fc.constantFrom('one\n', 'one two\n', '') }) }),
      fc.record({ name: fc.constant('Edit'), input: fc.record({ file_path: fc.constant('w/batch.txt'), old_string: fc.constantFrom('one', 'two', ''), new_string: fc.constantFrom('two', 'three') }) }),
      fc.record({ name: fc.constant('Read'), input: fc.constant({ file_path: 'w/batch.txt' }) }),
    );
    await fc.assert(fc.asyncProperty(fc.array(use, { minLength: 1, maxLength: 6 }), async (uses) => void (await send(t, SESSION, uses))), runs(30));
  });

  it('regressions', async () => {
    // Each names an input that once answered `internal`.
    // Each once failed with a leaked TypeError: notebooks whose JSON is not an object, or whose cells or outputs are not.
    fs.writeFileSync(abs('reg-null.ipynb'), 'null');
    fs.writeFileSync(abs('reg-cells.ipynb'), JSON.stringify({ cells: [null, 7, { cell_type: 'code', source: ['a'], outputs: [null, 3, { text: 'out' }] }], nbformat: 4, nbformat_minor: 5 }));
    const nullNb = await run('Read', { file_path: abs('reg-null.ipynb') });
    expect(nullNb).toMatchObject({ isError: true, errorClass: 'tool_error' });
    expect(nullNb.text).toContain('is not a valid Jupyter notebook');
    const odd = await run('Read', { file_path: abs('reg-cells.ipynb') });
    expect(odd.isError).toBe(false);
    expect(odd.text).toContain('<cell id="cell-2"><cell_type>code</cell_type>a</cell>');
    expect(odd.text).toContain('out');
    // NotebookEdit on the same notebook: a clear refusal, not a TypeError.
    const edit = await run('NotebookEdit', { notebook_path: abs('reg-cells.ipynb'), cell_id: 'cell-2', new_source: 'b', edit_mode: 'delete' });
    expect(edit).toMatchObject({ isError: true, errorClass: 'validation' });
    expect(edit.text).toContain('it needs a "cells" list of cell objects');
    // A symlink loop once was reported as a path that does not exist.
    for (const [name, input] of [['Glob', { pattern: '*', path: abs('loop-a') }], ['Grep', { pattern: 'x', path: abs('loop-a') }]] as const) {
      const loop = await run(name, input);
      expect(loop).toMatchObject({ isError: true, errorClass: 'io' });
      expect(loop.text).toContain('ELOOP');
    }
    // A Glob pattern naming only a directory once reached picomatch as an empty pattern.
    for (const pattern of ['/', '//']) {
      const g = await run('Glob', { pattern });
      expect(g).toMatchObject({ isError: true, errorClass: 'validation' });
      expect(g.text).toContain('names a directory, not files');
    }
  });

  it('reached every tool with both successes and failures', () => {
    if (process.env.FUZZ_TOOLS_DEBUG) console.log([...tally].map(([n, e]) => `${n} ok=${e.ok} err=${e.err} ${[...e.classes].join(',')}`).join('\n'));
    for (const name of ['Read', 'Write', 'Edit', 'Glob', 'Grep', 'NotebookEdit', 'TodoWrite', 'ToolSearch', 'Bash', 'WebFetch', 'TaskOutput', 'TaskStop']) {
      const e = tally.get(name);
      expect(e?.ok, `${name} succeeded`).toBeGreaterThan(0);
      expect(e?.err, `${name} failed`).toBeGreaterThan(0);
      expect(e?.classes.has('validation'), `${name} had validation errors`).toBe(true);
    }
  });

  it('still serves afterwards: /healthz and a plain Read', async () => {
    const h = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(h.statusCode).toBe(200);
    const r = await run('Read', { file_path: abs('text.txt') });
    expect(r.isError).toBe(false);
    expect(r.text).toContain('line 0 foo bar');
  });
});
