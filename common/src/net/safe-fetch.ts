import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
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

/** Streams a URL to a file (temp name, then rename); a partial file never remains. Non-2xx is refused. */
export async function safeDownload(
  url: string,
  destPath: string,
  opts: SafeFetchOptions = {},
): Promise<{ bytes: number; finalUrl: string; contentType: string | undefined }> {
  const maxBytes = opts.maxBytes ?? 1_000_000_000;
  const deadline = withDeadline({ ...opts, timeoutMs: opts.timeoutMs ?? 30 * 60_000 });
  const tmp = `${destPath}.part`;
  try {
    const { res, finalUrl } = await open(url, opts, deadline.signal);
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
      rethrow(err, deadline.signal);
    }
    await rename(tmp, destPath);
    return { bytes, finalUrl, contentType: res.headers['content-type'] };
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  } finally {
    deadline.done();
  }
}
