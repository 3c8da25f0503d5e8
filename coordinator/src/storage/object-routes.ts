import type Koa from 'koa';
import { AppError } from '../../../common/src/errors.js';
import type { ObjectStore } from './object-store.js';
import { verifyObjectSignature } from './signed-url.js';

const CONTENT_TYPES: Record<string, string> = {
  mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm', mkv: 'video/x-matroska', avi: 'video/x-msvideo', flv: 'video/x-flv',
  ts: 'video/mp2t', mpg: 'video/mpeg', ogv: 'video/ogg', asf: 'video/x-ms-asf', mxf: 'application/mxf', jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png',
  webp: 'image/webp', gif: 'image/gif', svg: 'image/svg+xml', wav: 'audio/wav', mp3: 'audio/mpeg', m4a: 'audio/mp4', json: 'application/json',
};

function contentTypeOf(key: string): string {
  return CONTENT_TYPES[key.split('.').pop()?.toLowerCase() ?? ''] ?? 'application/octet-stream';
}

/** `Range: bytes=a-b` for one range; undefined when absent, 'bad' when unsatisfiable. */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'bad' | undefined {
  if (!header) return undefined;
  const m = header.match(/^bytes=(\d*)-(\d*)$/);
  if (!m || (m[1] === '' && m[2] === '')) return 'bad';
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'bad';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) return 'bad';
  return { start, end };
}

/** Serves `/objects/<key>?exp&sig`: GET/HEAD with byte ranges (so a browser can seek in a video),
 *  PUT for agents' uploads. The signature is the only credential. */
export function createObjectRoutes(opts: { store: ObjectStore; secret: string; maxUploadBytes: number }): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/objects/')) return next();
    let key: string;
    try {
      key = ctx.path.slice('/objects/'.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      throw new AppError(400, 'Bad Request', 'The object path holds a malformed %-escape');
    }
    if (!['GET', 'HEAD', 'PUT'].includes(ctx.method)) throw new AppError(405, 'Method Not Allowed', 'Objects accept GET, HEAD and PUT');
    const check = verifyObjectSignature(key, ctx.method, ctx.query.exp as string | undefined, ctx.query.sig as string | undefined, opts.secret);
    if (check === 'expired') throw new AppError(403, 'Forbidden', 'This link has expired; fetch the resource again for a fresh URL');
    if (check !== 'ok') throw new AppError(403, 'Forbidden', 'Invalid signature for this URL');

    if (ctx.method === 'PUT') {
      const declared = Number(ctx.get('content-length') || 0);
      if (declared > opts.maxUploadBytes) throw new AppError(413, 'Payload Too Large', `Uploads are limited to ${opts.maxUploadBytes} bytes`);
      const { size } = await opts.store.put(key, ctx.req, { contentType: ctx.get('content-type') || contentTypeOf(key) });
      ctx.status = 201;
      ctx.body = { key, size };
      return;
    }

    const info = await opts.store.stat(key);
    if (!info) throw new AppError(404, 'Not Found', 'File not found');
    // Stored files are the tenants' own (an SVG logo, an agent's upload): opened from this origin they
    // must not run as a page with its cookies, nor be sniffed into one. The inline styles are those a
    // browser's own image viewer uses (raw.githubusercontent.com serves the same policy).
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
    ctx.set('Accept-Ranges', 'bytes');
    ctx.set('Cache-Control', 'private, max-age=300');
    ctx.type = contentTypeOf(key);
    const range = parseRange(ctx.get('range') || undefined, info.size);
    if (range === 'bad') {
      ctx.set('Content-Range', `bytes */${info.size}`);
      throw new AppError(416, 'Range Not Satisfiable', `The file has ${info.size} bytes`);
    }
    if (range) {
      ctx.status = 206;
      ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${info.size}`);
      ctx.length = range.end - range.start + 1;
    } else {
      ctx.status = 200;
      ctx.length = info.size;
    }
    if (ctx.method === 'HEAD') return;
    ctx.body = (await opts.store.get(key, range)).stream;
  };
}
