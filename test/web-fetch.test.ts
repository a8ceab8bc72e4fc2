/**
 * WebFetch against a real HTTP server on 127.0.0.1: conversion, text types,
 * binary refusal, size and time caps, redirects, the SSRF guard, and
 * `WebFetch(domain:…)` rules (including URL spellings meant to fool them).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../src/config/schema.js';
import { compileRules, RuleIndex } from '../src/permissions/rule-index.js';
import type { Behavior, PermissionQuery } from '../src/permissions/types.js';
import type { ToolContext } from '../src/tool/types.js';
import { webFetchTool } from '../src/tools/web-fetch.js';
import { hostOfUrl } from '../src/web/domain-rules.js';
import { blockedAddressReason } from '../src/web/ip.js';
import { bodyToText } from '../src/web/to-text.js';
import { cleanupTmp, execute, makeApp, textOf, use, type TestApp } from './helpers.js';

const PAGE = `<!doctype html><html><head><title>Test  Page</title><style>.x{color:red}</style>
<script>alert("never shown")</script></head><body>
<h1>Hello</h1><p>Some <b>bold</b> text and a <a href="/link">link</a>.</p>
<ul><li>one</li><li>two</li></ul><pre><code>const x = 1;</code></pre></body></html>`;

const hits = new Map<string, number>();
let server: http.Server;
let port: number;
let base: string;

function count(path: string): number {
  return hits.get(path) ?? 0;
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, count(path) + 1);
    switch (path) {
      case '/page.html':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(PAGE);
      case '/plain.txt':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end('plain text ünïcödé\nsecond line\n');
      case '/data.json':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"ok":true,"items":[1,2,3]}');
      case '/latin1':
        res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
        return res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      case '/gzip.html':
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        return res.end(zlib.gzipSync(Buffer.from('<p>compressed <em>page</em></p>')));
      case '/bomb':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        return res.end(zlib.gzipSync(Buffer.alloc(8 * 1024 * 1024, 'a')));
      case '/image.png':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': '1024' });
        return res.end(Buffer.alloc(1024, 0x89));
      case '/sniffed':
        res.writeHead(200);
        return res.end(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0, 0]));
      case '/big': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        let sent = 0;
        const chunk = Buffer.alloc(16 * 1024, 'x');
        const pump = (): void => {
          while (sent < 4 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => {});
        return pump();
      }
      case '/emoji':
        // 'a' then emoji: WebFetch's 100,000-character cut falls between the halves of one.
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return res.end('a' + '😀'.repeat(60_000));
      case '/big-declared':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(50 * 1024 * 1024) });
        return res.write('x');
      case '/slow':
        res.writeHead(200, { 'content-type': 'text/plain' });
        return res.write('the start of a response that never ends\n');
      case '/slow-gzip': {
        const gz = zlib.gzipSync(Buffer.alloc(4096, 'z'));
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        return res.write(gz.subarray(0, gz.length >> 1));
      }
      case '/redirect-same':
        res.writeHead(302, { location: '/page.html' });
        return res.end();
      case '/redirect-loop':
        res.writeHead(302, { location: '/redirect-loop' });
        return res.end();
      case '/redirect-other':
        res.writeHead(301, { location: `http://localhost:${port}/page.html` });
        return res.end();
      case '/missing':
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not here');
      default:
        res.writeHead(500);
        return res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  cleanupTmp();
});

async function app(config: ConfigInput = {}): Promise<TestApp> {
  return makeApp(
    {
      webFetch: { allowPrivateNetwork: true, maxBytes: 64 * 1024, timeoutMs: 1500 },
      permissions: { allow: ['WebFetch(domain:127.0.0.1)'] },
      ...config,
    },
    { extraTools: [webFetchTool] },
  );
}

const wellFormed = (s: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

async function fetchVia(t: TestApp, url: string, prompt = 'Summarise the page') {
  const r = await execute(t.app, { session_id: 'wf', tool_uses: [use('WebFetch', { url, prompt })] });
  const ex = r.body.executions[0]!;
  return { text: textOf(r.body.tool_results[0]!.content), isError: r.body.tool_results[0]!.is_error === true, status: ex.status, errorClass: ex.error_class, decision: ex.decision };
}

describe('WebFetch content', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await app();
  });
  afterAll(async () => t.close());

  it('converts HTML to Markdown, drops scripts and styles, and restates the prompt', async () => {
    const r = await fetchVia(t, `${base}/page.html`, 'What does the page say?');
    expect(r.isError).toBe(false);
    expect(r.text).toContain(`Fetched ${base}/page.html (200 OK, text/html converted to Markdown,`);
    expect(r.text).toContain('Title: Test Page');
    expect(r.text).toContain('Prompt: What does the page say?');
    expect(r.text).toContain('# Hello\n\nSome **bold** text and a [link](/link).');
    expect(r.text).toContain('-   one');
    expect(r.text).toContain('```\nconst x = 1;\n```');
    expect(r.text).not.toContain('never shown');
    expect(r.text).not.toContain('color:red');
  });

  it('returns other text as it is, decoded with its charset, and decompresses', async () => {
    expect((await fetchVia(t, `${base}/plain.txt`)).text).toMatch(/\n\nplain text ünïcödé\nsecond line\n$/);
    expect((await fetchVia(t, `${base}/data.json`)).text).toMatch(/application\/json, 27 B\)[\s\S]*\n\n\{"ok":true,"items":\[1,2,3\]\}$/);
    expect((await fetchVia(t, `${base}/latin1`)).text).toMatch(/\n\ncafé$/);
    expect((await fetchVia(t, `${base}/gzip.html`)).text).toMatch(/\n\ncompressed _page_$/);
  });

  it('refuses binary content, from its headers or by sniffing', async () => {
    const png = await fetchVia(t, `${base}/image.png`);
    expect(png).toMatchObject({ isError: true, errorClass: 'tool_error' });
    expect(png.text).toContain('cannot return binary content');
    expect(png.text).toContain('image/png, 1.0 KB');
    const sniffed = await fetchVia(t, `${base}/sniffed`);
    expect(sniffed.isError).toBe(true);
    expect(sniffed.text).toContain('cannot return binary content');
  });

  it('stops reading past webFetch.maxBytes, also after decompression, and refuses a declared oversize', async () => {
    for (const path of ['/big', '/bomb']) {
      const r = await fetchVia(t, `${base}${path}`);
      expect(r.isError).toBe(true);
      expect(r.text).toContain('is larger than 64.0 KB (webFetch.maxBytes); WebFetch stopped reading it');
    }
    const declared = await fetchVia(t, `${base}/big-declared`);
    expect(declared.text).toContain('is 50.0 MB, more than 64.0 KB (webFetch.maxBytes); WebFetch did not read it');
  });

  it('cuts a long page between characters, never between the halves of one', async () => {
    // A lone surrogate in a tool_result makes Anthropic's API refuse the whole next request.
    const big = await app({ webFetch: { allowPrivateNetwork: true, maxBytes: 1024 * 1024, timeoutMs: 5000 } });
    try {
      const r = await execute(big.app, { session_id: 'wf-emoji', tool_uses: [use('WebFetch', { url: `${base}/emoji`, prompt: 'p' })] });
      const id = r.body.executions[0]!.result_id as string;
      expect(id).toBeTruthy();
      // Stored as UTF-8, a lone half would come back as U+FFFD.
      const stored = big.app.toolexec.results.readAll(id) ?? '';
      expect(stored).toContain('😀😀');
      expect(stored).not.toContain('\uFFFD');
      expect(wellFormed(textOf(r.body.tool_results[0]!.content))).toBe(true);
    } finally {
      await big.close();
    }
  });

  it('gives up after webFetch.timeoutMs, also in the middle of a compressed body', async () => {
    for (const path of ['/slow', '/slow-gzip']) {
      const r = await fetchVia(t, `${base}${path}`);
      expect(r).toMatchObject({ isError: true, errorClass: 'timeout' });
      expect(r.text).toContain('WebFetch timed out after 1.5 s');
    }
  });

  it('follows a redirect on the same host, but not one to another host', async () => {
    const same = await fetchVia(t, `${base}/redirect-same`);
    expect(same.text).toContain(`Fetched ${base}/page.html (redirected from ${base}/redirect-same)`);
    const before = count('/page.html');
    const other = await fetchVia(t, `${base}/redirect-other`, 'find the title');
    expect(other.isError).toBe(false);
    expect(other.text).toContain('REDIRECT DETECTED: The URL redirects to a different host.');
    expect(other.text).toContain(`Redirect URL: http://localhost:${port}/page.html`);
    expect(other.text).toContain('Status: 301 Moved Permanently');
    expect(other.text).toContain('- prompt: "find the title"');
    expect(count('/page.html')).toBe(before);
    const loop = await fetchVia(t, `${base}/redirect-loop`);
    expect(loop.isError).toBe(true);
    expect(loop.text).toContain('redirected more than 10 times');
  });

  it('reports HTTP errors with a class', async () => {
    const r = await fetchVia(t, `${base}/missing`);
    expect(r).toMatchObject({ isError: true, errorClass: 'not_found' });
    expect(r.text).toContain('answered 404 Not Found');
  });

  it('refuses URLs it will not fetch before asking anyone', async () => {
    for (const [url, msg] of [
      ['ftp://127.0.0.1/file', 'http and https URLs only'],
      ['not a url', 'Invalid URL'],
      [`http://user:pw@127.0.0.1:${port}/page.html`, 'user name or password'],
      [`http://127.0.0.1/${'a'.repeat(2100)}`, 'longer than 2000'],
    ] as const) {
      const r = await fetchVia(t, url);
      expect(r).toMatchObject({ isError: true, errorClass: 'validation' });
      expect(r.text).toContain(msg);
    }
  });
});

describe('WebFetch SSRF guard', () => {
  it('refuses loopback, private and link-local targets however they are spelt, without connecting', async () => {
    const t = await app({ webFetch: { allowPrivateNetwork: false }, permissions: { allow: ['WebFetch'] } });
    try {
      const before = count('/page.html');
      for (const [url, why] of [
        [`http://127.0.0.1:${port}/page.html`, 'a loopback address'],
        [`http://localhost:${port}/page.html`, 'a loopback address'],
        [`http://[::1]:${port}/page.html`, 'a loopback address'],
        [`http://[::ffff:127.0.0.1]:${port}/page.html`, 'IPv4 127.0.0.1 inside IPv6'],
        [`http://2130706433:${port}/page.html`, 'a loopback address'],
        [`http://0x7f.1:${port}/page.html`, 'a loopback address'],
        ['http://169.254.169.254/latest/meta-data/', 'a link-local address'],
        ['http://10.1.2.3/', 'a private network address'],
        ['http://[fd00::1]/', 'a unique local (private) address'],
      ] as const) {
        const r = await fetchVia(t, url);
        expect(r).toMatchObject({ isError: true, errorClass: 'permission' });
        expect(r.text).toContain(why);
        expect(r.text).toContain('webFetch.allowPrivateNetwork');
      }
      expect(count('/page.html')).toBe(before);
    } finally {
      await t.close();
    }
  });

  it('classifies addresses', () => {
    const blocked = ['0.0.0.0', '10.0.0.1', '100.64.0.1', '127.1.2.3', '169.254.169.254', '172.31.255.255', '192.168.1.1', '224.0.0.1', '255.255.255.255', '::', '::1', '::ffff:10.0.0.1', '::127.0.0.1', '64:ff9b::7f00:1', '2002:c0a8:101::1', '2001::1', '2001:db8::1', 'fc00::1', 'fe80::1%eth0', 'ff02::1'];
    const allowed = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'];
    for (const a of blocked) expect(blockedAddressReason(a), a).toBeDefined();
    for (const a of allowed) expect(blockedAddressReason(a), a).toBeUndefined();
  });
});

describe('WebFetch(domain:…) rules', () => {
  const rules = new RuleIndex(
    compileRules([
      { raw: 'WebFetch(domain:allowed.com)', behavior: 'allow', source: 'config' },
      { raw: 'WebFetch(domain:*.docs.example)', behavior: 'allow', source: 'config' },
      { raw: 'WebFetch(domain:EVIL.com.)', behavior: 'deny', source: 'config' },
      { raw: 'WebFetch(domain:bücher.de)', behavior: 'deny', source: 'config' },
      { raw: 'WebFetch(domain:ask.example)', behavior: 'ask', source: 'config' },
    ]).rules,
    { root: '/', cwd: '/', home: '/', caseInsensitive: false },
  );
  const permissions: PermissionQuery = {
    mode: 'default',
    contentRules: (tool: string, b: Behavior) => rules.contentRules(tool, b),
    pathRule: () => undefined,
    pathRuleBelow: () => undefined,
    isReadDenied: () => false,
    hardLinkChecker: () => Object.assign(() => undefined, { anyLinked: () => false, meet: () => undefined }),
  };
  const ctx = { permissions } as unknown as ToolContext;
  const decide = async (url: string) => webFetchTool.checkPermissions({ url, prompt: 'p' }, ctx);

  it.each([
    ['https://allowed.com/x', 'allow'],
    ['HTTPS://ALLOWED.COM/x', 'allow'],
    ['https://allowed.com./x', 'allow'],
    ['https://allowed.com:8443/x', 'allow'],
    ['https://allowed。com/x', 'allow'],
    ['https://allowed.com\\@evil.com/', 'allow'],
    ['https://a.docs.example/', 'allow'],
    ['https://deep.a.docs.example/', 'allow'],
    ['https://docs.example/', 'passthrough'],
    ['https://allowed.com.evil.com/', 'passthrough'],
    ['https://allowed.com%2eevil.com/', 'passthrough'],
    ['https://notallowed.com/', 'passthrough'],
    ['https://evil.com/', 'deny'],
    ['https://EVIL.COM:8080/', 'deny'],
    ['https://evil.com./', 'deny'],
    ['https://evil.com#@allowed.com', 'deny'],
    ['https://evil.com?@allowed.com', 'deny'],
    ['https://bücher.de/', 'deny'],
    ['https://xn--bcher-kva.de/', 'deny'],
    ['https://BÜCHER.de/', 'deny'],
    ['https://ask.example/', 'ask'],
    ['https://evil.com@allowed.com/', 'deny'],
  ])('%s → %s', async (url, behavior) => {
    const r = await decide(url);
    expect(r.behavior).toBe(behavior);
    if (behavior !== 'passthrough') expect(r).toMatchObject({ type: url.includes('@allowed.com/') ? 'tool' : 'rule' });
  });

  it('an IPv4 rule holds for every spelling of that address: decimal, hex, octal, short, trailing dot, IPv4-mapped IPv6, NAT64, and 0.0.0.0 / [::] for loopback', async () => {
    const ipRules = new RuleIndex(
      compileRules([
        { raw: 'WebFetch(domain:127.0.0.1)', behavior: 'deny', source: 'config' },
        { raw: 'WebFetch(domain:localhost)', behavior: 'deny', source: 'config' },
        { raw: 'WebFetch(domain:10.1.2.3)', behavior: 'ask', source: 'config' },
        { raw: 'WebFetch(domain:[::ffff:192.0.2.7])', behavior: 'deny', source: 'config' },
      ]).rules,
      { root: '/', cwd: '/', home: '/', caseInsensitive: false },
    );
    const ipCtx = { permissions: { ...permissions, contentRules: (tool: string, b: Behavior) => ipRules.contentRules(tool, b) } } as unknown as ToolContext;
    const judge = async (url: string) => (await webFetchTool.checkPermissions({ url, prompt: 'p' }, ipCtx)).behavior;
    for (const url of [
      'http://127.0.0.1:18080/a',
      'http://2130706433:18080/a',
      'http://0x7f000001:18080/a',
      'http://0177.0.0.1:18080/a',
      'http://127.1:18080/a',
      'http://127.0.0.1.:18080/a',
      'http://[::ffff:127.0.0.1]:18080/a',
      'http://[::FFFF:7F00:1]:18080/a',
      'http://[0:0:0:0:0:ffff:127.0.0.1]/a',
      'http://[64:ff9b::127.0.0.1]/a',
      'http://0.0.0.0:18080/a',
      'http://0:18080/a',
      'http://[::]:18080/a',
      'http://[::ffff:0.0.0.0]/a',
      'http://LOCALHOST./a',
      'http://192.0.2.7/a',
      'http://[::ffff:c000:207]/a',
    ]) {
      expect(await judge(url), url).toBe('deny');
    }
    for (const url of ['http://10.1.2.3/', 'http://0xa010203/', 'http://[::ffff:10.1.2.3]/', 'http://[::ffff:a01:203]/']) expect(await judge(url), url).toBe('ask');
    // Other addresses are left to the whole-tool allow rule (the engine applies it).
    for (const url of ['http://127.0.0.2/', 'http://[::2]/', 'http://10.1.2.4/']) expect(await judge(url), url).toBe('passthrough');
    expect(hostOfUrl(new URL('http://[::ffff:127.0.0.1]/'))).toBe('127.0.0.1');
  });

  it('the review reproduction: WebFetch(domain:127.0.0.1) denies [::ffff:127.0.0.1] and 0.0.0.0 through the pipeline; nothing is fetched', async () => {
    const t = await app({ permissions: { allow: ['WebFetch'], deny: ['WebFetch(domain:127.0.0.1)', 'WebFetch(domain:localhost)'] } });
    try {
      const before = count('/plain.txt');
      for (const url of [`http://[::ffff:127.0.0.1]:${port}/plain.txt`, `http://0.0.0.0:${port}/plain.txt`, `http://0:${port}/plain.txt`]) {
        const d = await fetchVia(t, url);
        expect(d, url).toMatchObject({ isError: true, status: 'denied' });
        expect(d.decision, url).toMatchObject({ behavior: 'deny', reason: { type: 'rule' } });
        expect(d.text).not.toContain('plain text');
      }
      expect(count('/plain.txt')).toBe(before);
    } finally {
      await t.close();
    }
  });

  it('judges the host the request goes to, not one in the user info', () => {
    expect(hostOfUrl(new URL('http://allowed.com@evil.com/'))).toBe('evil.com');
    expect(hostOfUrl(new URL('http://evil.com@allowed.com/'))).toBe('allowed.com');
  });

  it('goes through the pipeline: a deny rule denies, no rule asks (denied headless), an allow rule fetches', async () => {
    const denied = await app({ permissions: { allow: ['WebFetch'], deny: ['WebFetch(domain:127.0.0.1)'] } });
    const unruled = await app({ permissions: { allow: [] } });
    const allowed = await app();
    try {
      const d = await fetchVia(denied, `${base}/plain.txt`);
      expect(d).toMatchObject({ isError: true, status: 'denied' });
      expect(d.decision).toMatchObject({ behavior: 'deny', reason: { type: 'rule', detail: 'WebFetch(domain:127.0.0.1)' } });
      expect((await fetchVia(unruled, `${base}/plain.txt`)).status).toBe('denied');
      const a = await fetchVia(allowed, `${base}/plain.txt`);
      expect(a.decision).toMatchObject({ behavior: 'allow', reason: { type: 'rule', detail: 'WebFetch(domain:127.0.0.1)' } });
      expect(a.isError).toBe(false);
    } finally {
      await Promise.all([denied.close(), unruled.close(), allowed.close()]);
    }
  });
});

describe('WebFetch: HTML that is slow to convert', () => {
  it('converts off the event loop and gives up on a page that takes too long (deeply nested elements)', async () => {
    // 50,000 nested <div>s (550 KB): turndown's parser spends 30 s on it, then overflows its stack.
    const page = Buffer.from(`<html><title>t</title><body>${'<div>'.repeat(50_000)}x${'</div>'.repeat(50_000)}</body></html>`);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 50);
    const r = await bodyToText(page, 'text/html', undefined, undefined, 2_000).then(
      () => 'converted',
      (e: Error) => e.message,
    );
    clearInterval(ticker);
    expect(r).toContain("could not convert the page's HTML to text");
    expect(ticks).toBeGreaterThan(10);
    // An ordinary page still converts, with its title.
    const ok = await bodyToText(Buffer.from('<html><head><title>Hi  there</title></head><body><h1>A</h1><p><em>b</em></p></body></html>'), 'text/html', undefined);
    expect(ok).toMatchObject({ title: 'Hi there', converted: true });
    expect(ok.text).toContain('# A\n\n_b_');
  });
});
