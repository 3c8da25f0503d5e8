/**
 * The REST API as the MCP tools call it: over HTTP with the caller's own credentials, so every tool
 * is scoped, rate-limited, idempotent and refused exactly as the same REST request would be.
 */

/** An error answer of the API: its status and body's `error`, `message` and `code`. */
export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    message: string,
    readonly code: string,
    readonly body: Record<string, unknown>,
  ) {
    super(message);
  }
}

export interface ApiClient {
  /** The API's base URL as a client outside reaches it (links in tool results are under it). */
  readonly publicUrl: string;
  /** JSON in, JSON (or text) out; an error answer throws ApiCallError. */
  call(method: string, path: string, opts?: { body?: unknown; headers?: Record<string, string> }): Promise<unknown>;
}

/**
 * @param baseUrl where requests go (the coordinator's own loopback address, or a remote API).
 * @param auth the headers that carry the caller's credentials (`Authorization` or `X-API-Key`).
 * @param publicUrl the base of links handed to the caller (defaults to baseUrl).
 */
export function httpApiClient(opts: {
  baseUrl: string;
  auth: Record<string, string>;
  publicUrl?: string;
  requestId?: string;
  fetch?: typeof fetch;
}): ApiClient {
  const base = opts.baseUrl.replace(/\/+$/, '');
  const doFetch = opts.fetch ?? fetch;
  return {
    publicUrl: (opts.publicUrl ?? base).replace(/\/+$/, ''),
    async call(method, path, { body, headers = {} } = {}) {
      const res = await doFetch(base + path, {
        method,
        headers: {
          ...opts.auth,
          ...(opts.requestId ? { 'x-request-id': opts.requestId } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') {
        try {
          parsed = JSON.parse(text);
        } catch {
          /* the text as it came */
        }
      }
      if (!res.ok) {
        const b = (parsed && typeof parsed === 'object' ? parsed : {}) as Record<string, unknown>;
        const str = (v: unknown, d: string) => (typeof v === 'string' ? v : d);
        throw new ApiCallError(
          res.status,
          str(b.error, res.statusText),
          str(b.message, str(b.error, `HTTP ${res.status}`)),
          str(b.code, 'internal_error'),
          b,
        );
      }
      return parsed;
    },
  };
}
