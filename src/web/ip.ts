/**
 * Which IP addresses WebFetch may connect to without `allowPrivateNetwork`:
 * public unicast only. Refused: loopback, private (RFC 1918, unique local),
 * link-local, carrier-grade NAT, unspecified, multicast, broadcast, reserved
 * and documentation ranges — and an IPv4 address wrapped in IPv6
 * (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64
 * `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`) is judged as the
 * IPv4 address it carries. Teredo (`2001::/32`) hides its target, so it is
 * refused.
 */
import net from 'node:net';

type V4Range = [number, number, string];

function v4(a: string): number {
  return a.split('.').reduce((n, p) => n * 256 + Number(p), 0);
}

const V4_BLOCKED: readonly V4Range[] = (
  [
    ['0.0.0.0', 8, 'an unspecified ("this network") address'],
    ['10.0.0.0', 8, 'a private network address'],
    ['100.64.0.0', 10, 'a carrier-grade NAT address'],
    ['127.0.0.0', 8, 'a loopback address'],
    ['169.254.0.0', 16, 'a link-local address (cloud metadata services live here)'],
    ['172.16.0.0', 12, 'a private network address'],
    ['192.0.0.0', 24, 'a reserved (IETF protocol) address'],
    ['192.0.2.0', 24, 'a documentation address'],
    ['192.88.99.0', 24, 'a reserved (6to4 relay) address'],
    ['192.168.0.0', 16, 'a private network address'],
    ['198.18.0.0', 15, 'a benchmarking address'],
    ['198.51.100.0', 24, 'a documentation address'],
    ['203.0.113.0', 24, 'a documentation address'],
    ['224.0.0.0', 4, 'a multicast address'],
    ['240.0.0.0', 4, 'a reserved address'],
  ] as const
).map(([base, bits, why]) => [v4(base), bits, why]);

function v4Reason(n: number): string | undefined {
  for (const [base, bits, why] of V4_BLOCKED) {
    const size = 2 ** (32 - bits);
    if (n >= base && n < base + size) return why;
  }
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (with an embedded dotted quad resolved). */
export function parseV6(addr: string): number[] | undefined {
  let s = addr;
  const zone = s.indexOf('%');
  if (zone !== -1) s = s.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    if (net.isIPv4(dotted[1]!) === false) return undefined;
    const n = v4(dotted[1]!);
    s = `${s.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) => parseInt(g, 16));
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return undefined;
  return groups;
}

function embeddedV4(hi: number, lo: number): number {
  return hi * 65536 + lo;
}

function v6Reason(g: number[]): string | undefined {
  const [a, b, c, d, e, f, h6, h7] = g as [number, number, number, number, number, number, number, number];
  const zeroHead = a === 0 && b === 0 && c === 0 && d === 0 && e === 0;
  if (zeroHead && f === 0 && h6 === 0 && h7 === 0) return 'an unspecified address';
  if (zeroHead && f === 0 && h6 === 0 && h7 === 1) return 'a loopback address';
  // IPv4-mapped and IPv4-compatible: the IPv4 address decides.
  if (zeroHead && (f === 0xffff || f === 0)) return describeEmbedded(embeddedV4(h6, h7));
  if (a === 0x64 && b === 0xff9b && c === 0 && d === 0 && e === 0 && f === 0) return describeEmbedded(embeddedV4(h6, h7));
  if (a === 0x64 && b === 0xff9b && c === 1) return 'a NAT64 (local use) address';
  if (a === 0x2002) return describeEmbedded(embeddedV4(b, c));
  if (a === 0x2001 && b === 0) return 'a Teredo address';
  if (a === 0x2001 && b === 0xdb8) return 'a documentation address';
  if (a === 0x100 && b === 0 && c === 0 && d === 0) return 'a discard-only address';
  if ((a & 0xfe00) === 0xfc00) return 'a unique local (private) address';
  if ((a & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((a & 0xffc0) === 0xfec0) return 'a site-local address';
  if ((a & 0xff00) === 0xff00) return 'a multicast address';
  return undefined;
}

function describeEmbedded(n: number): string | undefined {
  const why = v4Reason(n) ?? (n === 0xffffffff ? 'a broadcast address' : undefined);
  if (!why) return undefined;
  const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  return `${why} (IPv4 ${dotted} inside IPv6)`;
}

/** Why an address may not be fetched from, or undefined for a public address. */
export function blockedAddressReason(addr: string): string | undefined {
  const a = addr.startsWith('[') && addr.endsWith(']') ? addr.slice(1, -1) : addr;
  if (net.isIPv4(a)) {
    const n = v4(a);
    if (n === 0xffffffff) return 'a broadcast address';
    return v4Reason(n);
  }
  if (net.isIPv6(a)) {
    const g = parseV6(a);
    return g ? v6Reason(g) : 'an address that could not be parsed';
  }
  return 'not an IP address';
}
