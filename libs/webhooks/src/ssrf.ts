/**
 * SSRF guard for webhook endpoint URLs.
 *
 * Two checks share one policy:
 * - `checkUrl` at create/update time: syntax (absolute http/https, no credentials), literal IP addresses in every
 *   spelling a resolver might accept (`127.1`, `2130706433`, `0x7f.1`, `017700000001`, `[::ffff:7f00:1]`, ...)
 *   and host names that are internal by definition (`localhost`, `*.localhost`, `metadata.google.internal`, ...).
 * - `checkUrlResolved` at delivery time: the same, plus DNS resolution of every address of the host. Any forbidden
 *   address refuses the whole host, and the first address is returned so the caller connects to exactly the
 *   address that was checked (see `deliverOnce`, which pins it through the `lookup` option).
 *
 * `allowPrivate: true` (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true) switches the address and name policy off; syntax is
 * still checked and delivery still pins the resolved address.
 */
import { promises as dns } from 'node:dns';
import { BlockList, isIP, isIPv6 } from 'node:net';

export type NormalizedHost = { kind: 'ip4' | 'ip6' | 'name'; address: string };

export type UrlCheck = { ok: true } | { ok: false; reason: string };

/** One resolved address, as returned by `dns.promises.lookup(host, { all: true })`. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/**
 * Resolves a host name to all its addresses. The default is `dns.promises.lookup(host, { all: true })`; tests and
 * callers with their own resolver inject one through the `lookup` option.
 */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface CheckOptions {
  allowPrivate: boolean;
}

export interface ResolveOptions extends CheckOptions {
  lookup?: HostResolver;
}

export type ResolvedUrlCheck =
  | {
      ok: true;
      url: URL;
      /** Host name without IPv6 brackets; used for the Host header and TLS SNI. */
      hostname: string;
      /** The address that was checked; the connection must go there and nowhere else. */
      address: string;
      family: 4 | 6;
    }
  | { ok: false; reason: string };

export class InvalidHostError extends Error {
  constructor(host: string) {
    super(`invalid host ${JSON.stringify(host)}`);
    this.name = 'InvalidHostError';
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------------------------------------------

/** Parses one IPv4 part the way inet_aton/WHATWG do: `0x` hex, leading-zero octal, else decimal. */
function parseIPv4Number(part: string): number | null {
  if (part === '') return null;
  let radix = 10;
  let digits = part;
  if (/^0x/i.test(part)) {
    radix = 16;
    digits = part.slice(2);
    if (digits === '') return 0;
  } else if (part.length > 1 && part.startsWith('0')) {
    radix = 8;
    digits = part.slice(1);
  }
  const pattern = radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : /^[0-9]+$/;
  if (!pattern.test(digits)) return null;
  // Strip leading zeros so very long zero-padded parts do not lose precision.
  const value = parseInt(digits.replace(/^0+(?=.)/, ''), radix);
  return Number.isSafeInteger(value) ? value : Number.POSITIVE_INFINITY;
}

/**
 * Returns the 32-bit value for any IPv4 spelling (1 to 4 parts, each decimal, octal or hex, the last part filling
 * the remaining bytes), `null` when the input is not an IPv4 address at all, or `'invalid'` when it ends in a
 * number but is not a valid address (WHATWG treats such hosts as errors, resolvers may treat them as addresses).
 */
function parseIPv4(input: string): number | null | 'invalid' {
  const parts = input.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  const last = parts[parts.length - 1];
  const endsInNumber = /^[0-9]+$/.test(last) || parseIPv4Number(last) !== null;
  if (!endsInNumber) return null;
  if (parts.length > 4) return 'invalid';
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Number(part);
    if (n === null) return 'invalid';
    numbers.push(n);
  }
  const head = numbers.slice(0, -1);
  if (head.some((n) => n > 255)) return 'invalid';
  const tail = numbers[numbers.length - 1];
  if (tail >= 256 ** (5 - numbers.length)) return 'invalid';
  let value = tail;
  head.forEach((n, i) => {
    value += n * 256 ** (3 - i);
  });
  return value;
}

function ipv4ToString(value: number): string {
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

/** Eight 16-bit groups of a valid IPv6 address (zone id already removed), or null. */
function parseIPv6Groups(input: string): number[] | null {
  if (!isIPv6(input)) return null;
  let text = input.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const lastPart = text.slice(lastColon + 1);
  if (lastPart.includes('.')) {
    // Embedded dotted IPv4 tail ("::ffff:127.0.0.1"): rewrite as two hex groups.
    const v4 = lastPart.split('.').map((p) => Number(p));
    const hi = ((v4[0] << 8) | v4[1]).toString(16);
    const lo = ((v4[2] << 8) | v4[3]).toString(16);
    text = `${text.slice(0, lastColon + 1)}${hi}:${lo}`;
  }
  const toGroups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  let groups: number[];
  const doubleColon = text.indexOf('::');
  if (doubleColon >= 0) {
    const left = toGroups(text.slice(0, doubleColon));
    const right = toGroups(text.slice(doubleColon + 2));
    const missing = 8 - left.length - right.length;
    if (missing < 0) return null;
    groups = [...left, ...new Array<number>(missing).fill(0), ...right];
  } else {
    groups = toGroups(text);
  }
  if (groups.length !== 8 || groups.some((g) => !Number.isInteger(g) || g < 0 || g > 0xffff)) return null;
  return groups;
}

/** RFC 5952 text form: lower case, longest run (>= 2) of zero groups compressed. */
function ipv6ToString(groups: number[]): string {
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  const left = hex.slice(0, bestStart).join(':');
  const right = hex.slice(bestStart + bestLen).join(':');
  return `${left}::${right}`;
}

function isIPv4Mapped(groups: number[]): boolean {
  return groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
}

function embeddedIPv4(groups: number[], high: number): string {
  const value = groups[high] * 0x10000 + groups[high + 1];
  return ipv4ToString(value);
}

/**
 * Canonical form of a host for policy checks.
 *
 * - IPv4 in any spelling (`127.1`, `2130706433`, `0x7f.1`, `017700000001`, `0177.0.0.1`) -> `{ kind: 'ip4',
 *   address: '127.0.0.1' }`.
 * - IPv6, with or without brackets, zone id dropped -> RFC 5952 text. IPv4-mapped addresses (`::ffff:7f00:1`,
 *   `::ffff:127.0.0.1`) are reported as the IPv4 address they reach: `{ kind: 'ip4', address: '127.0.0.1' }`.
 * - Anything else -> `{ kind: 'name', address }`, lower-cased, without a trailing dot.
 *
 * Throws `InvalidHostError` for hosts no URL parser would accept (empty, bad brackets, a name ending in a number
 * that is not a valid IPv4 address such as `1.2.3.4.5` or `1.2.3.09`, characters outside a host name).
 */
export function normalizeHost(host: string): NormalizedHost {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') || h.endsWith(']')) {
    if (!(h.startsWith('[') && h.endsWith(']'))) throw new InvalidHostError(host);
    h = h.slice(1, -1);
    if (!h.includes(':')) throw new InvalidHostError(host);
  }
  if (h.includes(':')) {
    const zone = h.indexOf('%');
    const bare = zone >= 0 ? h.slice(0, zone) : h;
    const groups = parseIPv6Groups(bare);
    if (!groups) throw new InvalidHostError(host);
    if (isIPv4Mapped(groups)) return { kind: 'ip4', address: embeddedIPv4(groups, 6) };
    return { kind: 'ip6', address: ipv6ToString(groups) };
  }
  if (h.endsWith('.') && h.length > 1) h = h.slice(0, -1);
  if (h === '' || h.length > 253) throw new InvalidHostError(host);
  const v4 = parseIPv4(h);
  if (v4 === 'invalid') throw new InvalidHostError(host);
  if (v4 !== null) return { kind: 'ip4', address: ipv4ToString(v4) };
  if (!/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(h)) throw new InvalidHostError(host);
  return { kind: 'name', address: h };
}

// ---------------------------------------------------------------------------------------------------------------
// Address policy
// ---------------------------------------------------------------------------------------------------------------

const blockedV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT shared space (includes Alibaba metadata 100.100.100.200)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (includes 169.254.169.254 metadata)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast 255.255.255.255
] as const) {
  blockedV4.addSubnet(net, prefix, 'ipv4');
}
blockedV4.addAddress('168.63.129.16', 'ipv4'); // Azure wire server / metadata relay (a public address)

const blockedV6 = new BlockList();
for (const [net, prefix] of [
  // Only global unicast 2000::/3 is deliverable: block everything outside it. This covers ::, ::1, the
  // deprecated IPv4-compatible ::/96, IPv4-translated ::ffff:0:0:0/96, discard 100::/64 and NAT64 local-use
  // 64:ff9b:1::/48. (IPv4-mapped and well-known NAT64 prefixes are checked by their embedded IPv4 first.)
  ['::', 3],
  ['4000::', 2],
  ['8000::', 1], // includes ULA fc00::/7 (AWS metadata fd00:ec2::254), link-local fe80::/10, multicast ff00::/8
  // Special-purpose ranges inside 2000::/3
  ['2001::', 23], // IETF protocol assignments (Teredo 2001::/32, benchmarking, ORCHID)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
] as const) {
  blockedV6.addSubnet(net, prefix, 'ipv6');
}

/**
 * True when a connection to `ip` must be refused: loopback, private, link-local, CGNAT, unspecified, multicast,
 * reserved/documentation, cloud-metadata addresses, and anything that is not an IP address at all (fail closed).
 * Accepts every spelling `normalizeHost` understands; IPv4-mapped (`::ffff:a.b.c.d`), well-known NAT64
 * (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`) addresses are judged by the IPv4 address they embed.
 */
export function isForbiddenAddress(ip: string): boolean {
  let host: NormalizedHost;
  try {
    host = normalizeHost(ip);
  } catch {
    return true;
  }
  if (host.kind === 'name') return true;
  if (host.kind === 'ip4') return blockedV4.check(host.address, 'ipv4');
  const groups = parseIPv6Groups(host.address);
  if (!groups) return true;
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) {
    return blockedV4.check(embeddedIPv4(groups, 6), 'ipv4');
  }
  if (groups[0] === 0x2002 && blockedV4.check(embeddedIPv4(groups, 1), 'ipv4')) return true;
  return blockedV6.check(host.address, 'ipv6');
}

const FORBIDDEN_NAMES = new Set([
  'localhost',
  'localhost.localdomain',
  'ip6-localhost',
  'ip6-loopback',
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'instance-data',
  'instance-data.ec2.internal',
]);
const FORBIDDEN_SUFFIXES = ['.localhost', '.local', '.localdomain', '.internal', '.home.arpa', '.arpa'];

/** Reason a host name is refused without resolving it, or null. `name` must be normalised. */
function forbiddenNameReason(name: string): string | null {
  if (FORBIDDEN_NAMES.has(name) || FORBIDDEN_SUFFIXES.some((s) => name.endsWith(s))) {
    return `forbidden host name ${name}`;
  }
  if (!name.includes('.')) return `single-label host name ${name} is not allowed`;
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// URL checks
// ---------------------------------------------------------------------------------------------------------------

const MAX_URL_LENGTH = 2048;

type ParsedUrl =
  { ok: true; url: URL; hostname: string; host: NormalizedHost } | { ok: false; reason: string };

function parseUrl(raw: string): ParsedUrl {
  if (typeof raw !== 'string' || raw.length === 0) return { ok: false, reason: 'invalid URL' };
  if (raw.length > MAX_URL_LENGTH)
    return { ok: false, reason: `URL longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'invalid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: `unsupported scheme ${url.protocol} (only http and https)` };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, reason: 'credentials in URL are not allowed' };
  }
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === '') return { ok: false, reason: 'URL has no host' };
  let host: NormalizedHost;
  try {
    host = normalizeHost(url.hostname);
  } catch {
    return { ok: false, reason: `invalid host ${url.hostname}` };
  }
  return { ok: true, url, hostname, host };
}

function policyReason(host: NormalizedHost): string | null {
  if (host.kind === 'name') return forbiddenNameReason(host.address);
  return isForbiddenAddress(host.address) ? `private address ${host.address}` : null;
}

/**
 * Create/update-time check: absolute http(s) URL without credentials whose host is neither a forbidden literal
 * address (any spelling) nor an internal-only name. Does not touch DNS; delivery re-checks with
 * `checkUrlResolved`.
 */
export function checkUrl(url: string, opts: CheckOptions): UrlCheck {
  const parsed = parseUrl(url);
  if (!parsed.ok) return parsed;
  if (opts.allowPrivate) return { ok: true };
  const reason = policyReason(parsed.host);
  return reason === null ? { ok: true } : { ok: false, reason };
}

const defaultResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Delivery-time check: `checkUrl`, then resolution of every address of the host (refused if ANY is forbidden),
 * returning the first address to pin the connection to. IP-literal hosts are not resolved. With `allowPrivate`
 * the policy is skipped but the host is still resolved once and pinned. Never throws.
 */
export async function checkUrlResolved(url: string, opts: ResolveOptions): Promise<ResolvedUrlCheck> {
  const parsed = parseUrl(url);
  if (!parsed.ok) return parsed;
  const { host, hostname } = parsed;
  if (!opts.allowPrivate) {
    const reason = policyReason(host);
    if (reason !== null) return { ok: false, reason };
  }
  if (host.kind !== 'name') {
    // Connect to the literal as written (an IPv4-mapped literal stays IPv6); the policy judged what it reaches.
    return { ok: true, url: parsed.url, hostname, address: hostname, family: isIP(hostname) === 6 ? 6 : 4 };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await (opts.lookup ?? defaultResolver)(hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    return { ok: false, reason: `DNS lookup failed for ${hostname}: ${code ?? String(err)}` };
  }
  if (!Array.isArray(addresses) || addresses.length === 0) {
    return { ok: false, reason: `DNS lookup returned no address for ${hostname}` };
  }
  for (const entry of addresses) {
    if (isIP(entry.address) === 0)
      return { ok: false, reason: `DNS lookup returned a non-address for ${hostname}` };
    if (!opts.allowPrivate && isForbiddenAddress(entry.address)) {
      return { ok: false, reason: `private address ${entry.address}` };
    }
  }
  const first = addresses[0];
  return {
    ok: true,
    url: parsed.url,
    hostname,
    address: first.address,
    family: isIP(first.address) === 6 ? 6 : 4,
  };
}

/**
 * Reads WEBHOOK_ALLOW_PRIVATE_NETWORKS: `true`/`1` -> true; unset, empty, `false`/`0` -> false; anything else
 * throws so a typo does not silently change the policy.
 */
export function parseAllowPrivate(value: string | undefined): boolean {
  const v = (value ?? '').trim().toLowerCase();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw new Error(`WEBHOOK_ALLOW_PRIVATE_NETWORKS must be "true" or "false", got ${JSON.stringify(value)}`);
}
