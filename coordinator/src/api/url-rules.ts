import { badRequest } from '../../../common/src/errors.js';

/** Cheap syntactic check at the edge; the real SSRF guard runs where the URL is fetched. */
export function checkFetchableUrl(raw: string, field = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`${field} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`${field} must be an http or https URL`);
  return url;
}
