/**
 * `WebFetch(domain:…)` rules. The host of a request is the one the WHATWG URL
 * parser finds, the same parse the fetch connects with — so user info
 * (`http://a.com@b.com` goes to b.com), backslashes, percent-encoded dots,
 * full-width dots, upper case, IDN (compared as punycode) and ports cannot
 * make a rule see a different host than the one contacted. Hosts are compared
 * lower-cased without trailing dots, an IPv4-mapped IPv6 literal as its IPv4
 * address; deny and ask rules also see the other names of what a NAT64 or
 * unspecified (`0.0.0.0`, `[::]`) address connects to (hostsOfUrl).
 *
 *   domain:example.com     exactly example.com
 *   domain:*.example.com   any subdomain of example.com (not example.com itself)
 *   domain:*               every host
 */
import type { PermissionRule } from '../permissions/types.js';
import { parseV6 } from './ip.js';

/**
 * An IPv6 literal that carries an IPv4 address the connection really goes
 * to, as that IPv4 address: IPv4-mapped `[::ffff:a.b.c.d]` (the URL parser
 * writes it `[::ffff:7f00:1]`). Other hosts unchanged.
 */
function canonicalIp(h: string): string {
  if (!h.startsWith('[')) return h;
  const g = parseV6(h.slice(1, -1));
  if (g && g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff) return dotted(g[6]!, g[7]!);
  return h;
}

function dotted(hi: number, lo: number): string {
  return [hi >>> 8, hi & 255, lo >>> 8, lo & 255].join('.');
}

/** A host in comparable form, or undefined if it is not a valid host. */
export function normalizeHost(host: string): string | undefined {
  let h: string;
  try {
    h = new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
  h = h.replace(/\.+$/, '');
  return h.length > 0 ? canonicalIp(h) : undefined;
}

/**
 * The host a URL connects to, normalised: the URL parser's form (IPv4 in
 * decimal, hex, octal or short spellings as a dotted quad, lower case, IDN as
 * punycode), without trailing dots, and an IPv4-mapped IPv6 literal as the
 * IPv4 address it stands for.
 */
export function hostOfUrl(url: URL): string {
  return canonicalIp(url.hostname.replace(/\.+$/, '').toLowerCase());
}

/**
 * Every name of the place a URL connects to, for deny and ask rules: its host
 * (hostOfUrl); for a NAT64 literal (`[64:ff9b::a.b.c.d]`) also the IPv4
 * address it is translated to; for the unspecified address (`0.0.0.0`,
 * `[::]`), which connects to this machine, also 127.0.0.1, [::1] and
 * localhost.
 */
export function hostsOfUrl(url: URL): string[] {
  const host = hostOfUrl(url);
  const out = [host];
  if (host.startsWith('[')) {
    const g = parseV6(host.slice(1, -1));
    if (g && g[0] === 0x64 && g[1] === 0xff9b && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0) out.push(dotted(g[6]!, g[7]!));
    if (g && g.every((x) => x === 0)) out.push('127.0.0.1', '[::1]', 'localhost');
  } else if (host === '0.0.0.0') {
    out.push('127.0.0.1', '[::1]', 'localhost');
  }
  return out;
}

type Pattern = { kind: 'any' } | { kind: 'exact'; host: string } | { kind: 'suffix'; suffix: string };

function parsePattern(content: string | undefined): Pattern | undefined {
  if (content === undefined) return undefined;
  const m = /^domain:(.+)$/.exec(content.trim());
  if (!m) return undefined;
  const spec = m[1]!.trim();
  if (spec === '*') return { kind: 'any' };
  if (spec.startsWith('*.')) {
    const suffix = normalizeHost(spec.slice(2));
    return suffix ? { kind: 'suffix', suffix } : undefined;
  }
  const host = normalizeHost(spec);
  return host ? { kind: 'exact', host } : undefined;
}

const cache = new WeakMap<PermissionRule, Pattern | null>();

function patternOf(rule: PermissionRule): Pattern | undefined {
  let p = cache.get(rule);
  if (p === undefined) {
    p = parsePattern(rule.content) ?? null;
    cache.set(rule, p);
  }
  return p ?? undefined;
}

export function domainRuleMatches(rule: PermissionRule, host: string): boolean {
  const p = patternOf(rule);
  if (!p) return false;
  switch (p.kind) {
    case 'any':
      return true;
    case 'exact':
      return host === p.host;
    case 'suffix':
      return host.endsWith(`.${p.suffix}`);
  }
}

/** The first rule matching the host, or any of the hosts (hostsOfUrl). */
export function firstMatchingRule(rules: readonly PermissionRule[], host: string | readonly string[]): PermissionRule | undefined {
  const hosts = typeof host === 'string' ? [host] : host;
  return rules.find((r) => hosts.some((h) => domainRuleMatches(r, h)));
}
