/**
 * `WebFetch(domain:…)` rules. The host of a request is the one the WHATWG URL
 * parser finds, the same parse the fetch connects with — so user info
 * (`http://a.com@b.com` goes to b.com), backslashes, percent-encoded dots,
 * full-width dots, upper case, IDN (compared as punycode) and ports cannot
 * make a rule see a different host than the one contacted. Hosts are compared
 * lower-cased without trailing dots.
 *
 *   domain:example.com     exactly example.com
 *   domain:*.example.com   any subdomain of example.com (not example.com itself)
 *   domain:*               every host
 */
import type { PermissionRule } from '../permissions/types.js';

/** A host in comparable form, or undefined if it is not a valid host. */
export function normalizeHost(host: string): string | undefined {
  let h: string;
  try {
    h = new URL(`http://${host}/`).hostname;
  } catch {
    return undefined;
  }
  h = h.replace(/\.+$/, '');
  return h.length > 0 ? h : undefined;
}

/** The host a URL connects to, normalised. */
export function hostOfUrl(url: URL): string {
  return url.hostname.replace(/\.+$/, '').toLowerCase();
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

export function firstMatchingRule(rules: readonly PermissionRule[], host: string): PermissionRule | undefined {
  return rules.find((r) => domainRuleMatches(r, host));
}
