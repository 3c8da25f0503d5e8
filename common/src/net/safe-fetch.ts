import { createWriteStream } from 'node:fs';
import { open as openFile, rename, rm } from 'node:fs/promises';
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { mp4Layout } from '../media/mp4-layout.js';
import { httpTarget, isAllowlisted, isBlockedAddress, isBlockedHostname, type AllowEntry } from './address-policy.js';

// Every URL fetched on a user's behalf (fileUrl, waterMarkUrl, webhooks, social media URLs) goes
// through here: resolve, check every address, connect to the checked address (so DNS rebinding
// cannot swap it), re-check after each redirect, cap size and time.

export type FetchRefusal = 'invalid_url' | 'blocked_host' | 'too_large' | 'timeout' | 'http_status' | 'too_many_redirects' | 'network';

export class FetchRefusedError extends Error {
  constructor(
    readonly code: FetchRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'FetchRefusedError';
  }
}

export type LookupFn = (host: string) => Promise<Array<{ address: string; family: number }>>;

export interface SafeFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  maxBytes?: number;
  timeoutMs?: number;
  maxRedirects?: number;
  /** The caller needs the status line only (a webhook): the body is not read at all, so an answer of
   *  any size or pace costs nothing, and `maxBytes` does not apply. */
  discardBody?: boolean;
  allowlist?: readonly AllowEntry[];
  signal?: AbortSignal;
  /** Injectable for tests; default resolves with the system resolver. */
  lookup?: LookupFn;
}

const defaultLookup: LookupFn = (host) => dns.lookup(host, { all: true, verbatim: true });

interface Target {
  url: URL;
  address: string;
  family: number;
}

/** Checks one hop and returns the address to connect to. */
export async function checkUrl(raw: string | URL, opts: Pick<SafeFetchOptions, 'allowlist' | 'lookup'> = {}): Promise<Target> {
  const target = httpTarget(raw);
  if (target === 'invalid') throw new FetchRefusedError('invalid_url', 'URL is not valid; it must be a public http or https URL');
  if (target === 'not_http') throw new FetchRefusedError('invalid_url', 'URL must be a public http or https URL');
  const { url, host, port } = target;
  if (url.username || url.password) throw new FetchRefusedError('invalid_url', 'URL must not carry credentials');
  const allowed = isAllowlisted(opts.allowlist ?? [], host, port);
  if (!allowed && isBlockedHostname(host)) throw new FetchRefusedError('blocked_host', `host ${host} is a local name and is not allowed`);
  let addresses: Array<{ address: string; family: number }>;
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await (opts.lookup ?? defaultLookup)(host);
    } catch {
      throw new FetchRefusedError('network', `host ${host} could not be resolved`);
    }
  }
  if (!addresses.length) throw new FetchRefusedError('network', `host ${host} has no address`);
  if (!allowed) {
    const bad = addresses.find((a) => isBlockedAddress(a.address));
    if (bad)
      throw new FetchRefusedError('blocked_host', `host ${host} resolves to a private, loopback or reserved address (${bad.address})`);
  }
  return { url, address: addresses[0]!.address, family: addresses[0]!.family };
}

interface Hop {
  res: http.IncomingMessage;
  finalUrl: string;
}

/** Follows redirects hop by hop, each checked; resolves with the final response (body unread). */
async function open(raw: string, opts: SafeFetchOptions, signal: AbortSignal): Promise<Hop> {
  const maxRedirects = opts.maxRedirects ?? 5;
  let current = raw;
  let method = (opts.method ?? 'GET').toUpperCase();
  let body = opts.body;
  for (let hop = 0; ; hop++) {
    const target = await checkUrl(current, opts);
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const lib = target.url.protocol === 'https:' ? https : http;
      const req = lib.request(
        target.url,
        {
          method,
          headers: { ...(opts.headers ?? {}), ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
          signal,
          // Connect to the address we checked, not to whatever a second resolution returns.
          lookup: ((_host, o, cb) =>
            o?.all
              ? cb(null, [{ address: target.address, family: target.family }])
              : cb(null, target.address, target.family)) satisfies net.LookupFunction,
        } as http.RequestOptions,
        resolve,
      );
      req.on('error', (err) =>
        reject(
          signal.aborted
            ? new FetchRefusedError('timeout', 'the request timed out')
            : new FetchRefusedError('network', `request failed: ${err.message}`),
        ),
      );
      if (body !== undefined) req.end(body);
      else req.end();
    });
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location && maxRedirects > 0) {
      res.resume();
      if (hop + 1 > maxRedirects) throw new FetchRefusedError('too_many_redirects', `more than ${maxRedirects} redirects`);
      current = new URL(res.headers.location, target.url).toString();
      if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
        method = 'GET';
        body = undefined;
      }
      continue;
    }
    return { res, finalUrl: target.url.toString() };
  }
}

function withDeadline(opts: SafeFetchOptions): { signal: AbortSignal; done(): void } {
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), opts.timeoutMs ?? 30_000);
  const onOuter = () => ctrl.abort();
  opts.signal?.addEventListener('abort', onOuter, { once: true });
  return {
    signal: ctrl.signal,
    done: () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onOuter);
    },
  };
}

function byteCap(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      if (seen > maxBytes) cb(new FetchRefusedError('too_large', `response is larger than ${maxBytes} bytes`));
      else cb(null, chunk);
    },
  });
}

function checkLength(res: http.IncomingMessage, maxBytes: number): void {
  const declared = Number(res.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    res.destroy();
    throw new FetchRefusedError('too_large', `response is larger than ${maxBytes} bytes (${declared})`);
  }
}

const rethrow = (err: unknown, signal: AbortSignal): never => {
  if (err instanceof FetchRefusedError) throw err;
  if (signal.aborted) throw new FetchRefusedError('timeout', 'the request timed out');
  throw new FetchRefusedError('network', `transfer failed: ${(err as Error).message}`);
};

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  finalUrl: string;
  body: Buffer;
}

/** A small request (webhooks, API calls, images): the body is returned in memory. Any status is returned. */
export async function safeFetch(url: string, opts: SafeFetchOptions = {}): Promise<SafeResponse> {
  const maxBytes = opts.maxBytes ?? 10_000_000;
  const deadline = withDeadline(opts);
  try {
    const { res, finalUrl } = await open(url, opts, deadline.signal);
    if (opts.discardBody) {
      res.destroy();
      return { status: res.statusCode ?? 0, headers: res.headers, finalUrl, body: Buffer.alloc(0) };
    }
    checkLength(res, maxBytes);
    const chunks: Buffer[] = [];
    try {
      await pipeline(res as Readable, byteCap(maxBytes), async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) chunks.push(chunk);
      });
    } catch (err) {
      rethrow(err, deadline.signal);
    }
    return { status: res.statusCode ?? 0, headers: res.headers, finalUrl, body: Buffer.concat(chunks) };
  } finally {
    deadline.done();
  }
}

export interface DownloadOptions extends SafeFetchOptions {
  /**
   * Called once, with the partial file, as soon as an MP4's index (`moov`) is on disk ahead of the
   * rest (read from the end first where the file keeps it there): a caller can probe the file and
   * refuse it before the media data is fetched. Throwing stops the download.
   */
  onIndex?: (partialPath: string) => Promise<void>;
  /** How many times a transfer that broke off is resumed with a range request (default 5). */
  maxResumes?: number;
}

export interface DownloadResult {
  bytes: number;
  finalUrl: string;
  contentType: string | undefined;
  /** Whether the server took range requests (so the file came in parts, and a break was resumable). */
  ranged: boolean;
}

class OwnError {
  constructor(readonly inner: unknown) {}
}
const ownError = (err: unknown): never => {
  throw new OwnError(err);
};

/** The first request asks for this much: enough for the top-level boxes of an MP4 and a faststart index. */
const HEAD_BYTES = 256 * 1024;

/** `bytes a-b/total` of a 206 answer; total is undefined when the server gives `*`. */
function contentRange(res: http.IncomingMessage): { start: number; end: number; total: number | undefined } | undefined {
  const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(String(res.headers['content-range'] ?? '').trim());
  if (!m) return undefined;
  return { start: Number(m[1]), end: Number(m[2]) + 1, total: m[3] === '*' ? undefined : Number(m[3]) };
}

/**
 * Streams a URL to a file (temp name, then rename); a partial file never remains. Non-2xx is refused.
 *
 * Where the server takes range requests the file comes in parts, each byte once: the head, then for an
 * MP4 that keeps its index at the end the tail holding it, then the middle; a part whose connection
 * breaks is resumed where it broke, guarded by the validator (`If-Range`) so that a file changed
 * meanwhile is never stitched from two versions. A server without range support gets one plain
 * transfer, as before: a break then fails the download, saying why it cannot be resumed. Every
 * request, the parts' included, goes through the same address check and redirect re-check.
 */
export async function safeDownload(url: string, destPath: string, opts: DownloadOptions = {}): Promise<DownloadResult> {
  const maxBytes = opts.maxBytes ?? 1_000_000_000;
  const deadline = withDeadline({ ...opts, timeoutMs: opts.timeoutMs ?? 30 * 60_000 });
  const tmp = `${destPath}.part`;
  try {
    const headers = { ...(opts.headers ?? {}), range: `bytes=0-${HEAD_BYTES - 1}` };
    const { res, finalUrl } = await open(url, { ...opts, headers }, deadline.signal);
    const status = res.statusCode ?? 0;
    const range = status === 206 ? contentRange(res) : undefined;
    if (status === 206 && range?.start === 0 && range.total !== undefined) {
      const result = await rangedDownload(res, range.end, range.total, finalUrl, tmp, maxBytes, opts, deadline.signal);
      await rename(tmp, destPath);
      return result;
    }
    if (status === 206 || status === 416) {
      // A range answer this code cannot place (no total, another start), or an empty file that has no
      // byte 0 to give: take the file whole instead.
      res.resume();
      const whole = await open(finalUrl, opts, deadline.signal);
      return await wholeDownload(whole.res, whole.finalUrl, tmp, destPath, maxBytes, deadline.signal);
    }
    return await wholeDownload(res, finalUrl, tmp, destPath, maxBytes, deadline.signal);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  } finally {
    deadline.done();
  }
}

/** One plain 200 transfer of the whole file. */
async function wholeDownload(
  res: http.IncomingMessage,
  finalUrl: string,
  tmp: string,
  destPath: string,
  maxBytes: number,
  signal: AbortSignal,
): Promise<DownloadResult> {
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    res.resume();
    throw new FetchRefusedError('http_status', `the server answered HTTP ${status}`);
  }
  checkLength(res, maxBytes);
  let bytes = 0;
  try {
    await pipeline(
      res as Readable,
      byteCap(maxBytes),
      new Transform({
        transform(chunk: Buffer, _e, cb) {
          bytes += chunk.length;
          cb(null, chunk);
        },
      }),
      createWriteStream(tmp),
    );
  } catch (err) {
    if (err instanceof FetchRefusedError || signal.aborted) rethrow(err, signal);
    const declared = res.headers['content-length'];
    throw new FetchRefusedError(
      'network',
      `the transfer broke off after ${bytes} of ${declared ?? 'an unknown number of'} bytes (${(err as Error).message}); ` +
        'the server does not take range requests, so it could not be resumed',
    );
  }
  await rename(tmp, destPath);
  return { bytes, finalUrl, contentType: res.headers['content-type'], ranged: false };
}

async function rangedDownload(
  head: http.IncomingMessage,
  headEnd: number,
  total: number,
  finalUrl: string,
  tmp: string,
  maxBytes: number,
  opts: DownloadOptions,
  signal: AbortSignal,
): Promise<DownloadResult> {
  if (total > maxBytes) {
    head.destroy();
    throw new FetchRefusedError('too_large', `response is larger than ${maxBytes} bytes (${total})`);
  }
  const contentType = head.headers['content-type'];
  // A strong ETag, else Last-Modified: what If-Range compares, so a changed file answers 200, not a part.
  const etag = head.headers.etag;
  const validator = etag && !etag.startsWith('W/') ? etag : head.headers['last-modified'];
  let resumesLeft = opts.maxResumes ?? 5;
  const file = await openFile(tmp, 'w');
  try {
    const headBytes: Buffer[] = [];
    /** Fetches [start, end) into the file, resuming where a connection broke; `first` is an answer already open. */
    const part = async (start: number, end: number, first?: http.IncomingMessage, onProgress?: (pos: number) => Promise<void>) => {
      let pos = start;
      let res = first;
      while (pos < end) {
        if (!res) {
          const headers: Record<string, string> = { ...(opts.headers ?? {}), range: `bytes=${pos}-${end - 1}` };
          if (validator) headers['if-range'] = validator;
          ({ res } = await open(finalUrl, { ...opts, headers }, signal));
          const got = res.statusCode === 206 ? contentRange(res) : undefined;
          if (!got || got.start !== pos || got.total !== total) {
            res.resume();
            throw new FetchRefusedError(
              res.statusCode === 200 || res.statusCode === 206 ? 'network' : 'http_status',
              res.statusCode === 200 || res.statusCode === 206
                ? 'the file changed on the server while it was being downloaded'
                : `the server answered HTTP ${res.statusCode} to a range request`,
            );
          }
        }
        const answer: http.IncomingMessage = res;
        res = undefined;
        try {
          for await (const chunk of answer as AsyncIterable<Buffer>) {
            const take = Math.min(chunk.length, end - pos);
            await file.write(chunk, 0, take, pos).catch(ownError);
            if (start === 0) headBytes.push(chunk.subarray(0, take));
            pos += take;
            if (onProgress) await onProgress(pos).catch(ownError);
            if (pos >= end) break;
          }
        } catch (err) {
          // The disk's or the caller's failure is not a broken connection: it is not resumed.
          if (err instanceof OwnError) throw err.inner;
          if (err instanceof FetchRefusedError || signal.aborted) rethrow(err, signal);
          if (resumesLeft-- <= 0) {
            throw new FetchRefusedError(
              'network',
              `the transfer broke off at byte ${pos} of ${total} (${(err as Error).message}) after ${opts.maxResumes ?? 5} resumed attempts`,
            );
          }
          continue;
        } finally {
          answer.destroy();
        }
        // An answer that ended early without an error is resumed the same way.
        if (pos < end && resumesLeft-- <= 0)
          throw new FetchRefusedError('network', `the transfer kept ending early: ${pos} of ${total} bytes arrived`);
      }
    };
    await part(0, headEnd, head);
    const layout = mp4Layout(Buffer.concat(headBytes), total);
    const indexed = async () => {
      if (opts.onIndex) await opts.onIndex(tmp);
    };
    if (layout.kind === 'index-last' && layout.tailStart > headEnd) {
      await part(layout.tailStart, total);
      await indexed();
      await part(headEnd, layout.tailStart);
    } else if (layout.kind === 'index-first') {
      let told = false;
      const tell = async (pos: number) => {
        if (told || pos < layout.end) return;
        told = true;
        await indexed();
      };
      await tell(headEnd);
      await part(headEnd, total, undefined, tell);
    } else await part(headEnd, total);
    await file.sync();
  } finally {
    await file.close();
  }
  return { bytes: total, finalUrl, contentType, ranged: true };
}
