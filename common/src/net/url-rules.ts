import net from 'node:net';
import { invalidInput } from '../invalid-input.js';
import { httpTarget, isAllowlisted, isBlockedAddress, isBlockedHostname, type AllowEntry } from './address-policy.js';

/**
 * The edge's check of a URL the service will fetch later: scheme, and hosts that are private by
 * their very spelling (IP literals in any notation, local names). Names that only resolve to a
 * private address are caught where the URL is fetched, by the guard that checks every address
 * (safe-fetch.ts). A refusal is a 400 naming the field.
 */
export function checkFetchableUrl(raw: string, field = 'url', allowlist: readonly AllowEntry[] = []): URL {
  const target = httpTarget(raw);
  if (target === 'invalid') throw invalidInput(`${field} is not a valid URL`);
  if (target === 'not_http') throw invalidInput(`${field} must be an http or https URL`);
  const { url, host, port } = target;
  const local = net.isIP(host) ? isBlockedAddress(host) : isBlockedHostname(host);
  if (local && !isAllowlisted(allowlist, host, port)) {
    throw invalidInput(`${field} must be a public URL: ${host} is a private, loopback or local address`);
  }
  return url;
}
