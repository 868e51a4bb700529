/**
 * SSRF guard for every URL the service connects to on a customer's behalf: webhook endpoints, certificate logos,
 * SCORM fonts and media, and what later features fetch.
 *
 * Two checks share one policy:
 * - `checkUrl` when a URL is stored (a webhook endpoint at create/update time): syntax (absolute http/https, no
 *   credentials), literal IP addresses in every spelling a resolver might accept (`127.1`, `2130706433`, `0x7f.1`,
 *   `017700000001`, `[::ffff:7f00:1]`, ...) and host names that are internal by definition (`localhost`,
 *   `*.localhost`, `metadata.google.internal`, ...).
 * - `checkUrlResolved` at connection time: the same, plus DNS resolution of every address of the host. Any
 *   forbidden address refuses the whole host, and the first address is returned so the caller connects to exactly
 *   the address that was checked (`openGuarded` and the webhook `deliverOnce` pin it through the `lookup` option).
 *
 * `allowPrivate: true` (ALLOW_PRIVATE_NETWORKS=true, `OutboundEnv`) switches the address and name policy off;
 * syntax is still checked and a connection still pins the resolved address.
 */
import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

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
  /**
   * The address policy, `isForbiddenAddress` unless given. A seam for tests, which have only loopback servers:
   * narrowing it to one loopback address lets another stand in for a public host (a redirect from "public" to
   * "private" can then be tried for real). Production code never passes it.
   */
  isForbidden?: (address: string) => boolean;
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
// Normalisation: the WHATWG URL host parser for IPv4 spellings and names, ipaddr.js for IPv6
// ---------------------------------------------------------------------------------------------------------------

/** Characters that would end a host inside a URL: a host containing one is not a host. */
const NOT_IN_HOST = /[/?#@\\\s]/;
const HOST_NAME = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;

/**
 * Canonical form of a host for policy checks.
 *
 * - IPv4 in any spelling (`127.1`, `2130706433`, `0x7f.1`, `017700000001`, `0177.0.0.1`) -> `{ kind: 'ip4',
 *   address: '127.0.0.1' }`: the WHATWG URL host parser reads every form inet_aton accepts, as the URL a
 *   delivery is made to will be read.
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
    // A zone id (`%eth0`, `%25eth0` in a URL) names an interface, not another address.
    const zone = h.indexOf('%');
    const bare = zone >= 0 ? h.slice(0, zone) : h;
    if (!ipaddr.IPv6.isValid(bare)) throw new InvalidHostError(host);
    const ip = ipaddr.IPv6.parse(bare);
    if (ip.isIPv4MappedAddress()) return { kind: 'ip4', address: ip.toIPv4Address().toString() };
    return { kind: 'ip6', address: ip.toRFC5952String() };
  }
  if (h === '' || NOT_IN_HOST.test(h)) throw new InvalidHostError(host);
  let parsed: string;
  try {
    parsed = new URL(`http://${h}/`).hostname;
  } catch {
    throw new InvalidHostError(host);
  }
  if (ipaddr.IPv4.isValidFourPartDecimal(parsed)) return { kind: 'ip4', address: parsed };
  if (parsed.endsWith('.') && parsed.length > 1) parsed = parsed.slice(0, -1);
  if (parsed === '' || parsed.length > 253 || !HOST_NAME.test(parsed)) throw new InvalidHostError(host);
  return { kind: 'name', address: parsed };
}

// ---------------------------------------------------------------------------------------------------------------
// Address policy
// ---------------------------------------------------------------------------------------------------------------

/** Azure wire server / metadata relay: a public address, but never a webhook receiver or a file host. */
const METADATA_V4 = [ipaddr.IPv4.parse('168.63.129.16'), 32] as [ipaddr.IPv4, number];
/** Global unicast: the only IPv6 space the service connects to. */
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
/** The well-known NAT64 prefix: the last 32 bits are the IPv4 address reached. */
const NAT64_V6 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * ipaddr.js names every special-purpose range (loopback, private, link-local, CGNAT, unspecified, multicast,
 * broadcast, documentation, benchmarking, reserved, …); only `unicast` is deliverable.
 */
function forbiddenV4(ip: ipaddr.IPv4): boolean {
  return ip.range() !== 'unicast' || ip.match(METADATA_V4);
}

function embeddedV4(ip: ipaddr.IPv6, high: number): ipaddr.IPv4 {
  const [a, b] = [ip.parts[high], ip.parts[high + 1]];
  return new ipaddr.IPv4([a >> 8, a & 0xff, b >> 8, b & 0xff]);
}

/**
 * True when a connection to `ip` must be refused: loopback, private, link-local, CGNAT, unspecified, multicast,
 * reserved/documentation, cloud-metadata addresses, and anything that is not an IP address at all (fail closed).
 * Accepts every spelling `normalizeHost` understands; IPv4-mapped (`::ffff:a.b.c.d`), well-known NAT64
 * (`64:ff9b::a.b.c.d`) and 6to4 (`2002:AABB:CCDD::`) addresses are judged by the IPv4 address they embed; other
 * IPv6 addresses must be ordinary global unicast (2000::/3 outside every special-purpose range: ULA fc00::/7 with
 * AWS metadata fd00:ec2::254, link-local, Teredo, documentation, …).
 */
export function isForbiddenAddress(ip: string): boolean {
  let host: NormalizedHost;
  try {
    host = normalizeHost(ip);
  } catch {
    return true;
  }
  if (host.kind === 'name') return true;
  if (host.kind === 'ip4') return forbiddenV4(ipaddr.IPv4.parse(host.address));
  const v6 = ipaddr.IPv6.parse(host.address);
  if (v6.match(NAT64_V6)) return forbiddenV4(embeddedV4(v6, 6));
  const range = v6.range();
  if (range === '6to4') return forbiddenV4(embeddedV4(v6, 1));
  return range !== 'unicast' || !v6.match(GLOBAL_UNICAST_V6);
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

function policyReason(host: NormalizedHost, isForbidden = isForbiddenAddress): string | null {
  if (host.kind === 'name') return forbiddenNameReason(host.address);
  return isForbidden(host.address) ? `private address ${host.address}` : null;
}

/**
 * Create/update-time check: absolute http(s) URL without credentials whose host is neither a forbidden literal
 * address (any spelling) nor an internal-only name. Does not touch DNS; connecting re-checks with
 * `checkUrlResolved`.
 */
export function checkUrl(url: string, opts: CheckOptions): UrlCheck {
  const parsed = parseUrl(url);
  if (!parsed.ok) return parsed;
  if (opts.allowPrivate) return { ok: true };
  const reason = policyReason(parsed.host);
  return reason === null ? { ok: true } : { ok: false, reason };
}

/** The system's resolution (getaddrinfo: hosts file, search domains, DNS), every address of the name. */
export const systemResolver: HostResolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/**
 * Connection-time check: `checkUrl`, then resolution of every address of the host (refused if ANY is forbidden),
 * returning the first address to pin the connection to. IP-literal hosts are not resolved. With `allowPrivate`
 * the policy is skipped but the host is still resolved once and pinned. Never throws.
 */
export async function checkUrlResolved(url: string, opts: ResolveOptions): Promise<ResolvedUrlCheck> {
  const parsed = parseUrl(url);
  if (!parsed.ok) return parsed;
  const { host, hostname } = parsed;
  if (!opts.allowPrivate) {
    const reason = policyReason(host, opts.isForbidden);
    if (reason !== null) return { ok: false, reason };
  }
  if (host.kind !== 'name') {
    // Connect to the literal as written (an IPv4-mapped literal stays IPv6); the policy judged what it reaches.
    return { ok: true, url: parsed.url, hostname, address: hostname, family: isIP(hostname) === 6 ? 6 : 4 };
  }
  let addresses: ResolvedAddress[];
  try {
    addresses = await (opts.lookup ?? systemResolver)(hostname);
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
    if (!opts.allowPrivate && (opts.isForbidden ?? isForbiddenAddress)(entry.address)) {
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
