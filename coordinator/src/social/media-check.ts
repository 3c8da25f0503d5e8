import { badRequest } from '../errors.js';
import { safeFetch, FetchRefusedError } from '@shorts/common/net/safe-fetch';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { checkFetchableUrl } from '@shorts/common/net/url-rules';

/** A media URL is handed to the provider only after we reached it ourselves through the same SSRF
 *  guard as every other user-supplied URL: a public address (checked on connect and after each
 *  redirect) answering 2xx. Only the first bytes are asked for; the provider downloads the rest. */
export function createMediaCheck(opts: {
  fetchAllowlist: string;
  timeoutMs?: number;
  reachability?: boolean;
}): (urls: string[]) => Promise<void> {
  const allowlist = parseAllowlist(opts.fetchAllowlist);
  if (opts.reachability === false) {
    // Without a download, only what the URL says can be checked: scheme and private-looking hosts.
    return async (urls) => {
      for (const url of urls) checkFetchableUrl(url, `Media URL ${url}`, allowlist);
    };
  }
  return async (urls) => {
    await Promise.all(
      [...new Set(urls)].map(async (url) => {
        let status: number;
        try {
          const res = await safeFetch(url, {
            method: 'GET',
            headers: { range: 'bytes=0-1023', 'user-agent': 'shorts-social/1' },
            allowlist,
            timeoutMs: opts.timeoutMs ?? 10_000,
            maxBytes: 64 * 1024,
          });
          status = res.status;
        } catch (err) {
          if (err instanceof FetchRefusedError) {
            // A server that ignores Range and sends the whole file is still reachable.
            if (err.code === 'too_large') return;
            throw badRequest(`Media URL ${url} cannot be used: ${err.message}`);
          }
          throw err;
        }
        if (status < 200 || status >= 300) throw badRequest(`Media URL ${url} answered HTTP ${status}; it must be publicly reachable`);
      }),
    );
  };
}
