import type Koa from 'koa';
import net from 'node:net';

// Which address a request comes from, for per-address limits. X-Forwarded-For is whatever the
// client wrote until a proxy we run appends to it, so it is read only as far as TRUST_PROXY says:
//   unset             forwarded headers are ignored: the address is the TCP peer's
//   a number N        N proxies we run stand in front: the Nth address from the right is the client's
//                     (Koa's `proxy` with `maxIpsCount`); the coordinator must be reachable only through them
//   addresses/CIDRs   forwarded headers count only when the TCP peer is one of these; the client is
//                     the rightmost address in the chain that is not one of them
export type TrustProxy = { hops: number } | { addresses: string[] } | undefined;

const FORWARDED_HEADERS = ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'];

/** TRUST_PROXY's text as a TrustProxy; throws with the reason when it is neither form. */
export function parseTrustProxy(text: string | undefined): TrustProxy {
  const value = text?.trim();
  if (!value || value === '0') return undefined;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops > 10) throw new Error(`${hops} proxy hops is not a believable chain (at most 10)`);
    return { hops };
  }
  const addresses = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const address of addresses) {
    if (!toBlockListEntry(address)) {
      throw new Error(`"${address}" is neither an IP address nor a CIDR range: give a count of proxy hops, or the proxies' addresses`);
    }
  }
  return { addresses };
}

type Entry =
  | { kind: 'address'; address: string; family: 'ipv4' | 'ipv6' }
  | { kind: 'subnet'; address: string; prefix: number; family: 'ipv4' | 'ipv6' };

function toBlockListEntry(text: string): Entry | undefined {
  const [address, prefixText, ...rest] = text.split('/');
  const version = net.isIP(address ?? '');
  if (!address || !version || rest.length) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return { kind: 'address', address, family };
  const prefix = Number(prefixText);
  if (!/^\d+$/.test(prefixText) || prefix > (version === 4 ? 32 : 128)) return undefined;
  return { kind: 'subnet', address, prefix, family };
}

/** `::ffff:10.0.0.1` (an IPv4 peer on a dual-stack socket) is 10.0.0.1. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

function trustedSet(addresses: string[]): (address: string) => boolean {
  const list = new net.BlockList();
  for (const text of addresses) {
    const entry = toBlockListEntry(text)!;
    if (entry.kind === 'address') list.addAddress(entry.address, entry.family);
    else list.addSubnet(entry.address, entry.prefix, entry.family);
  }
  return (address) => {
    const ip = plain(address);
    const version = net.isIP(ip);
    return version !== 0 && list.check(ip, version === 4 ? 'ipv4' : 'ipv6');
  };
}

/** Sets Koa's proxy trust; for a list of proxies, also returns the middleware (first in line) that applies it. */
export function applyTrustProxy(koa: Koa, trust: TrustProxy): Koa.Middleware | undefined {
  koa.proxy = trust !== undefined;
  koa.maxIpsCount = trust && 'hops' in trust ? trust.hops : 0;
  if (!trust || 'hops' in trust) return undefined;
  const trusted = trustedSet(trust.addresses);
  return async (ctx, next) => {
    const peer = ctx.socket.remoteAddress ?? '';
    if (!trusted(peer)) {
      // Not from one of our proxies: whatever it says about the client, the scheme or the host is its own say-so.
      for (const name of FORWARDED_HEADERS) delete ctx.req.headers[name];
    } else {
      const chain = [
        ...(ctx.get('x-forwarded-for') || '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
        peer,
      ];
      let client = chain[0]!;
      for (let i = chain.length - 1; i >= 0; i--) {
        if (!trusted(chain[i]!)) {
          client = chain[i]!;
          break;
        }
      }
      ctx.request.ip = plain(client);
    }
    await next();
  };
}
