import type Koa from 'koa';
import { randomBytes } from 'node:crypto';
import { finished, Transform } from 'node:stream';
import { AppError } from '../errors.js';
import type { UploadGate } from '../files/task-uploads.js';
import type { ObjectStore } from './object-store.js';
import { verifyObjectSignature, type UploadGrant } from './signed-url.js';

const CONTENT_TYPES: Record<string, string> = {
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
  mkv: 'video/x-matroska',
  avi: 'video/x-msvideo',
  flv: 'video/x-flv',
  ts: 'video/mp2t',
  mpg: 'video/mpeg',
  ogv: 'video/ogg',
  asf: 'video/x-ms-asf',
  mxf: 'application/mxf',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  json: 'application/json',
  ass: 'text/x-ssa; charset=utf-8',
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

/** Above any task's own limit: what one PUT may ever hold. */
const MAX_UPLOAD_BYTES = 20_000_000_000;

const tooLarge = (max: number) => new AppError(413, 'Payload Too Large', `This upload is limited to ${max} bytes`);

/**
 * Receives an upload under a staging key, counting bytes as they arrive (a chunked PUT declares no
 * length), then moves it into place through the gate, which allows it only while the lease lives
 * and only once. Whatever fails, nothing is left under the staging key and the key is unchanged.
 */
async function receiveUpload(
  ctx: Koa.Context,
  store: ObjectStore,
  gate: UploadGate,
  key: string,
  grant: UploadGrant,
  contentType: string,
): Promise<number> {
  const max = Math.min(grant.maxBytes, MAX_UPLOAD_BYTES);
  const declared = ctx.get('content-length');
  // The connection is closed after a refusal: the client may still be sending a body we will not read.
  if (declared && Number(declared) > max) {
    ctx.set('Connection', 'close');
    throw tooLarge(max);
  }
  // Listening from the first moment: a client that goes away while the gate is asked would otherwise
  // raise its 'aborted' error with no one listening, an uncaught exception that ends the process.
  let gone: Error | undefined;
  let counted: Transform | undefined;
  finished(ctx.req, (err) => {
    if (!err) return;
    gone = err;
    counted?.destroy(err); // the client went away mid-stream
  });
  await gate.check(grant, key);
  if (gone) throw gone;
  let received = 0;
  counted = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > max) done(tooLarge(max));
      else done(null, chunk);
    },
  });
  ctx.req.pipe(counted);
  const staging = `${key}.part-${randomBytes(6).toString('hex')}`;
  try {
    await store.put(staging, counted, { contentType });
    await gate.publish(grant, key, received, () => store.move(staging, key));
  } catch (err) {
    ctx.req.unpipe(counted);
    ctx.set('Connection', 'close');
    await store.delete(staging).catch(() => undefined);
    if (err instanceof AppError && err.status === 413) await drainBriefly(ctx.req);
    throw err;
  }
  return received;
}

/** What a refused upload's client may still send, read and dropped, before the refusal is answered. */
const DRAIN_MAX_BYTES = 32 * 1024 * 1024;
const DRAIN_MAX_MS = 2_000;

/**
 * A client still sending a body that is refused part-way gets a reset, not the 413, when the
 * connection closes under it (fetch reports "fetch failed", curl a broken pipe). Reading what is
 * still on its way, up to a bound in bytes and time, lets it finish and read why; one that keeps
 * sending past the bound is cut off as before.
 */
async function drainBriefly(req: Koa.Context['req']): Promise<void> {
  if (req.readableEnded || req.destroyed) return;
  await new Promise<void>((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      req.off('data', onData).off('end', done).off('error', done).off('close', done);
      req.pause();
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DRAIN_MAX_MS);
    req.on('data', onData).once('end', done).once('error', done).once('close', done);
    req.resume();
  });
}

/** Serves `/objects/<key>?exp&sig`: GET/HEAD with byte ranges (so a browser can seek in a video),
 *  PUT for agents' uploads, each bound to its task's lease and size limit (../files/task-uploads.ts).
 *  The signature is the only credential. */
export function createObjectRoutes(opts: { store: ObjectStore; secret: string; uploads?: UploadGate }): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith('/objects/')) return next();
    let key: string;
    try {
      key = ctx.path.slice('/objects/'.length).split('/').map(decodeURIComponent).join('/');
    } catch {
      throw new AppError(400, 'Bad Request', 'The object path holds a malformed %-escape');
    }
    const methods = opts.uploads ? ['GET', 'HEAD', 'PUT'] : ['GET', 'HEAD'];
    if (!methods.includes(ctx.method)) throw new AppError(405, 'Method Not Allowed', `Objects accept ${methods.join(', ')}`);
    const { check, grant } = verifyObjectSignature(key, ctx.method, ctx.query, opts.secret);
    if (check === 'expired') throw new AppError(403, 'Forbidden', 'This link has expired; fetch the resource again for a fresh URL');
    if (check !== 'ok') throw new AppError(403, 'Forbidden', 'Invalid signature for this URL');

    if (ctx.method === 'PUT') {
      const size = await receiveUpload(ctx, opts.store, opts.uploads!, key, grant!, ctx.get('content-type') || contentTypeOf(key));
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
