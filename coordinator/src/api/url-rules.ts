import net from 'node:net';
import { badRequest } from '../../../common/src/errors.js';
import { isAllowlisted, isBlockedAddress, isBlockedHostname, type AllowEntry } from '../../../common/src/net/address-policy.js';

/**
 * The edge's check of a URL the service will fetch later: scheme, and hosts that are private by
 * their very spelling (IP literals in any notation, local names). Names that only resolve to a
 * private address are caught where the URL is fetched, by the guard that checks every address.
 */
export function checkFetchableUrl(raw: string, field = 'url', allowlist: readonly AllowEntry[] = []): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`${field} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`${field} must be an http or https URL`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const local = net.isIP(host) ? isBlockedAddress(host) : isBlockedHostname(host);
  if (local && !isAllowlisted(allowlist, host, port)) {
    throw badRequest(`${field} must be a public URL: ${host} is a private, loopback or local address`);
  }
  return url;
}
