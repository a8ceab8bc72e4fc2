/**
 * Fixtures for fuzzing the built-in tools through POST /execute: a workspace
 * of awkward files, a local HTTP server for WebFetch, a closed port, and a
 * checker that holds every answer to "no 5xx, no `internal`, a real result".
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import type { TestApp } from './helpers.js';

export function notebookJson(cells: Array<Record<string, unknown>>): string {
  return `${JSON.stringify({ cells, metadata: { language_info: { name: 'python' } }, nbformat: 4, nbformat_minor: 5 }, null, 1)}\n`;
}

const VALID_CELLS = [
  { cell_type: 'markdown', id: 'intro', metadata: {}, source: ['# Title'] },
  { cell_type: 'code', id: 'calc', metadata: {}, execution_count: 3, outputs: [{ output_type: 'stream', name: 'stdout', text: ['2\n'] }], source: ['print(1+1)'] },
];

/** Fills `ws` with files of every awkward kind; returns names relative to it. */
export function fillWorkspace(ws: string): { readable: string[]; writable: string[]; notebooks: string[] } {
  const w = (rel: string, data: string | Buffer) => {
    fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true });
    fs.writeFileSync(path.join(ws, rel), data);
  };
  w('text.txt', Array.from({ length: 50 }, (_, i) => `line ${i} foo bar ${i % 7 === 0 ? 'needle' : ''}`).join('\n') + '\n');
  w('empty.txt', '');
  w('bin.bin', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131) % 256)));
  w('huge-line.txt', `${'x'.repeat(100_000)}needle\n`);
  w('crlf.txt', 'one\r\ntwo\r\nthree needle\r\n');
  w('invalid-utf8.txt', Buffer.from([0x61, 0xff, 0xfe, 0x0a, 0xc3, 0x28, 0x0a, 0xed, 0xa0, 0x80, 0x0a]));
  w('cafe\u0301.txt', 'cafe\u0301 NFD\n');
  w('caf\u00e9.txt', 'caf\u00e9 NFC\n');
  w('bogus.pdf', '%PDF-1.4 not really\n');
  w('tiny.png', Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex'));
  w('nb.ipynb', notebookJson(VALID_CELLS));
  w('nb-edit.ipynb', notebookJson(VALID_CELLS));
  w('bad.ipynb', '{"cells": [ {"cell_type": "code", ');
  w('weird.ipynb', JSON.stringify({ cells: 'not a list', nbformat: 'four' }));
  w('weird2.ipynb', JSON.stringify({ cells: [null, 3, { cell_type: 'raw' }, { source: 7 }], nbformat: 4, nbformat_minor: 5 }));
  w('nulls.ipynb', 'null');
  let deep = 'deep';
  for (let i = 0; i < 30; i++) deep = path.join(deep, `d${i}`);
  w(path.join(deep, 'bottom.txt'), 'at the bottom needle\n');
  fs.mkdirSync(path.join(ws, 'dir', 'sub'), { recursive: true });
  fs.symlinkSync('loop-b', path.join(ws, 'loop-a'));
  fs.symlinkSync('loop-a', path.join(ws, 'loop-b'));
  // A directory link back up: `**` must not walk it forever.
  fs.symlinkSync('..', path.join(ws, 'dir', 'up'));
  fs.symlinkSync('missing-target', path.join(ws, 'dangling'));
  execFileSync('mkfifo', [path.join(ws, 'fifo')]);
  for (const n of ['a.txt', 'crlf.txt', 'multi.txt', 'nfd.txt']) {
    w(`edit/${n}`, n === 'crlf.txt' ? 'alpha\r\nbeta\r\nalpha\r\n' : n === 'nfd.txt' ? 'cafe\u0301 and caf\u00e9\n' : 'alpha beta\nalpha gamma\nalpha\n');
  }
  const readable = [
    'text.txt', 'empty.txt', 'bin.bin', 'huge-line.txt', 'crlf.txt', 'invalid-utf8.txt', 'cafe\u0301.txt', 'caf\u00e9.txt', 'bogus.pdf',
    'tiny.png', 'nb.ipynb', 'bad.ipynb', 'weird.ipynb', 'weird2.ipynb', 'nulls.ipynb', path.join(deep, 'bottom.txt'), 'dir', 'loop-a',
    'dangling', 'fifo', 'nope.txt', 'dir/up/text.txt', 'deep', '.',
  ];
  const writable = ['edit/a.txt', 'edit/crlf.txt', 'edit/multi.txt', 'edit/nfd.txt', 'w/new.txt', 'w/x/y/z/new.txt', 'dir', 'fifo', 'loop-a', 'dangling', 'edit', 'w/caf\u00e9.txt', 'edit/nb.txt'];
  return { readable, writable, notebooks: ['nb.ipynb', 'nb-edit.ipynb', 'bad.ipynb', 'weird.ipynb', 'weird2.ipynb', 'nulls.ipynb', 'text.txt', 'dir', 'fifo', 'nope.ipynb', 'loop-a'] };
}

/** A loopback server with pages of every awkward kind; and a port nothing listens on. */
export async function startWebServer(): Promise<{ base: string; closedPort: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const u = req.url ?? '/';
    if (u.startsWith('/html')) {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end('<html><head><title>T</title></head><body><h1>Hi</h1><script>x()</script><p>para</body>');
    } else if (u.startsWith('/json')) {
      res.setHeader('content-type', 'application/json');
      res.end('{"a": [1, 2, {"b": null}]}');
    } else if (u.startsWith('/binary')) {
      res.setHeader('content-type', 'application/octet-stream');
      res.end(Buffer.from([0, 1, 2, 255, 254]));
    } else if (u.startsWith('/latin1')) {
      res.setHeader('content-type', 'text/plain; charset=bogus-charset');
      res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    } else if (u.startsWith('/big')) {
      res.setHeader('content-type', 'text/plain');
      res.end('y'.repeat(300_000));
    } else if (u.startsWith('/redirect-same')) {
      res.writeHead(302, { location: '/html' });
      res.end();
    } else if (u.startsWith('/redirect-other')) {
      res.writeHead(301, { location: 'http://localhost:1/elsewhere' });
      res.end();
    } else if (u.startsWith('/redirect-bad')) {
      res.writeHead(302, { location: 'ht!tp://::::' });
      res.end();
    } else if (u.startsWith('/redirect-loop')) {
      res.writeHead(302, { location: '/redirect-loop' });
      res.end();
    } else if (u.startsWith('/500')) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('boom');
    } else if (u.startsWith('/empty')) {
      res.writeHead(204);
      res.end();
    } else if (u.startsWith('/reset')) {
      req.socket.destroy();
    } else if (u.startsWith('/no-type')) {
      res.removeHeader('content-type');
      res.end('plain bytes');
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not here');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const probe = http.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return {
    base: `http://127.0.0.1:${port}`,
    closedPort,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export interface Outcome {
  status: number;
  isError: boolean;
  errorClass: string | null;
  text: string;
  resultId: string | null;
}

/** POSTs tool uses and asserts the invariants; returns the first result's outcome. */
export async function send(t: TestApp, session: string, uses: Array<{ name: string; input: unknown }>): Promise<Outcome> {
  const tool_uses = uses.map((u, i) => ({ type: 'tool_use', id: `toolu_fz${i}_${Math.random().toString(36).slice(2, 8)}`, name: u.name, input: u.input }));
  const res = await t.app.inject({ method: 'POST', url: '/execute', payload: { session_id: session, tool_uses } });
  const what = () => `${JSON.stringify(uses).slice(0, 600)} -> ${res.statusCode} ${res.body.slice(0, 600)}`;
  if (res.statusCode !== 200) {
    if (res.statusCode >= 500 || res.statusCode < 400) throw new Error(`bad status: ${what()}`);
    const code = (res.json() as { error?: { code?: string } }).error?.code;
    if (!code?.startsWith('TOOLEXEC_ERR_')) throw new Error(`4xx without an error code: ${what()}`);
    return { status: res.statusCode, isError: true, errorClass: null, text: '', resultId: null };
  }
  const body = res.json() as {
    tool_results: Array<{ content: unknown; is_error?: boolean }>;
    executions: Array<{ error_class: string | null; status: string; result_id: string | null }>;
  };
  if (body.tool_results.length !== uses.length) throw new Error(`missing tool results: ${what()}`);
  for (const r of body.tool_results) {
    const ok = typeof r.content === 'string' || (Array.isArray(r.content) && r.content.every((b) => typeof b === 'object' && b !== null && typeof (b as { type?: unknown }).type === 'string'));
    if (!ok) throw new Error(`tool_result content is neither a string nor blocks: ${what()}`);
  }
  for (const [i, e] of body.executions.entries()) {
    if (e.error_class === 'internal') throw new Error(`internal error: ${what()}`);
    if (body.tool_results[i]?.is_error && e.status !== 'denied' && e.error_class === null) throw new Error(`an error without a class: ${what()}`);
  }
  // A JavaScript runtime message in a tool's error is an unguarded bug, whatever its class.
  const leaked = /Cannot read propert|is not a function|is not iterable|Cannot convert|Maximum call stack|is not defined|Invalid array length/;
  for (const r of body.tool_results) {
    const text = typeof r.content === 'string' ? r.content : JSON.stringify(r.content);
    if (r.is_error && leaked.test(text)) throw new Error(`a runtime error leaked into the result: ${what()}`);
  }
  const first = body.tool_results[0]!;
  const text = typeof first.content === 'string' ? first.content : JSON.stringify(first.content);
  return { status: 200, isError: first.is_error === true, errorClass: body.executions[0]?.error_class ?? null, text, resultId: body.executions[0]?.result_id ?? null };
}

/** A valid-shaped input, or the same with one field wrong-typed, dropped, or an unknown key added. */
export function mutated<T extends Record<string, unknown>>(valid: fc.Arbitrary<T>, protect: string[] = []): fc.Arbitrary<unknown> {
  // Random JSON must never carry a string in a protected field (a Bash command).
  const safe = (v: unknown) => typeof v !== 'object' || v === null || protect.every((k) => typeof (v as Record<string, unknown>)[k] !== 'string');
  const junk = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, -1, 1e308, '', true, [], {}, 'NaN'));
  const mutation = fc.tuple(valid, fc.nat(), junk, fc.constantFrom('wrong', 'drop', 'extra')).map(([v, n, j, how]) => {
    // Protected fields are only ever made non-strings, never another string.
    const keys = Object.keys(v);
    const out: Record<string, unknown> = { ...v };
    if (how === 'extra' || keys.length === 0) out[`extra_${n % 3}`] = j;
    else if (how === 'drop') delete out[keys[n % keys.length]!];
    else {
      const k = keys[n % keys.length]!;
      out[k] = protect.includes(k) && typeof j === 'string' ? [j] : j;
    }
    return out;
  });
  return fc.oneof({ weight: 3, arbitrary: valid as fc.Arbitrary<unknown> }, { weight: 1, arbitrary: mutation }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).filter(safe) });
}
