// CORS for the origins CORS_ORIGINS names, and for no other. Browsers on those pages call the API
// with an API key or bearer token; cookies are never allowed cross-origin (no Allow-Credentials),
// so the studio's session stays usable only from its own pages.
import type Koa from 'koa';

export const CORS_ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const CORS_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-API-Key',
  'Idempotency-Key',
  'X-Request-Id',
  // tus uploads (api/tus.ts)
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Offset',
  // MCP's streamable HTTP at /mcp (mcp/http-transport.ts)
  'Mcp-Protocol-Version',
];
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'Retry-After',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Idempotent-Replayed',
  'Location',
  'Tus-Resumable',
  'Upload-Offset',
  'Upload-Length',
];
const PREFLIGHT_MAX_AGE_SEC = 600;

/** "https://a.example,http://localhost:5173": each an origin exactly (no path, no trailing slash, no "*"). */
export function parseCorsOrigins(text: string): string[] {
  const origins = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      /* refused below */
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin.toLowerCase()) {
      throw new Error(`"${origin}" is not an origin: write scheme://host[:port], lower case, with no path`);
    }
  }
  return [...new Set(origins.map((o) => o.toLowerCase()))];
}

/**
 * Outermost but for the request id, so error answers carry the headers too (a page can read its
 * 4xx). A preflight (OPTIONS with Access-Control-Request-Method) from a listed origin is answered
 * 204 here; from another origin it goes on and gets no CORS header, which the browser takes as no.
 */
export function corsMiddleware(origins: readonly string[]): Koa.Middleware {
  const allowed = new Set(origins);
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    if (!allowed.size) return next();
    ctx.vary('Origin');
    if (!origin || !allowed.has(origin)) return next();
    ctx.set('Access-Control-Allow-Origin', origin);
    if (ctx.method === 'OPTIONS' && ctx.get('access-control-request-method')) {
      ctx.vary('Access-Control-Request-Headers');
      ctx.set('Access-Control-Allow-Methods', CORS_ALLOWED_METHODS.join(', '));
      ctx.set('Access-Control-Allow-Headers', CORS_ALLOWED_HEADERS.join(', '));
      ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SEC));
      ctx.status = 204;
      return;
    }
    ctx.set('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS.join(', '));
    return next();
  };
}
