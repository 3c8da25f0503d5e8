import net from 'node:net';

// Which addresses a request made on a user's behalf may reach (DECISIONS.md "Fetching URLs").

const V4_BLOCKS: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this" network, unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];

function v4ToInt(ip: string): number {
  return ip.split('.').reduce((n, part) => (n << 8) + Number(part), 0) >>> 0;
}

function v4Blocked(ip: string): boolean {
  const n = v4ToInt(ip);
  return V4_BLOCKS.some(([base, bits]) => {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    return (n & mask) === (v4ToInt(base) & mask);
  });
}

/** Expands an IPv6 address to its 8 groups. */
function v6Groups(ip: string): number[] {
  let addr = ip.toLowerCase().split('%')[0]!;
  // A trailing dotted IPv4 (::ffff:1.2.3.4) becomes two groups.
  const dotted = addr.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) {
    const n = v4ToInt(dotted[1]!);
    addr = addr.slice(0, -dotted[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = addr.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g || '0', 16));
}

const embeddedV4 = (g: number[], hi: number, lo: number) => `${g[hi]! >> 8}.${g[hi]! & 255}.${g[lo]! >> 8}.${g[lo]! & 255}`;

function v6Blocked(ip: string): boolean {
  const g = v6Groups(ip);
  if (g.length !== 8) return true;
  const allZero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (allZero(0, 8)) return true; // ::
  if (allZero(0, 7) && g[7] === 1) return true; // ::1
  if (allZero(0, 5) && g[5] === 0xffff) return v4Blocked(embeddedV4(g, 6, 7)); // IPv4-mapped
  if (allZero(0, 6)) return v4Blocked(embeddedV4(g, 6, 7)); // IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b) return v4Blocked(embeddedV4(g, 6, 7)); // NAT64
  if (g[0] === 0x2002) return v4Blocked(embeddedV4(g, 1, 2)); // 6to4
  const first = g[0]!;
  if ((first & 0xfe00) === 0xfc00) return true; // unique-local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return true; // link-local fe80::/10
  if ((first & 0xffc0) === 0xfec0) return true; // site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return true; // multicast
  if (first === 0x2001 && g[1] === 0x0db8) return true; // documentation
  if (first === 0x0100 && allZero(1, 4)) return true; // discard-only 100::/64
  return false;
}

/** True for any address a user-supplied URL must not reach. */
export function isBlockedAddress(ip: string): boolean {
  const kind = net.isIP(ip.split('%')[0]!);
  if (kind === 4) return v4Blocked(ip);
  if (kind === 6) return v6Blocked(ip);
  return true;
}

/** Names that are local by definition, whatever DNS says. */
export function isBlockedHostname(name: string): boolean {
  const host = name.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal') || host === '';
}

export interface AllowEntry {
  host: string;
  port?: number;
}

/** `FETCH_ALLOWLIST`: comma-separated `host[:port]` (IPv6 in brackets). */
export function parseAllowlist(raw: string | undefined): AllowEntry[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const m = entry.match(/^\[([^\]]+)\](?::(\d+))?$/) ?? entry.match(/^([^:]+)(?::(\d+))?$/);
      if (!m) return { host: entry.toLowerCase() };
      return { host: m[1]!.toLowerCase(), port: m[2] ? Number(m[2]) : undefined };
    });
}

export function isAllowlisted(allowlist: readonly AllowEntry[], host: string, port: number): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return allowlist.some((e) => e.host === h && (e.port === undefined || e.port === port));
}

/** An http(s) URL with the host and port a connection would use, or why it is not one. Both
 *  the edge's check (url-rules.ts) and the fetch guard (safe-fetch.ts) start from this. */
export function httpTarget(raw: string | URL): { url: URL; host: string; port: number } | 'invalid' | 'not_http' {
  let url: URL;
  try {
    url = typeof raw === 'string' ? new URL(raw) : raw;
  } catch {
    return 'invalid';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'not_http';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return { url, host, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}
