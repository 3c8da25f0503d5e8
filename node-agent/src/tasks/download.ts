import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { safeDownload, FetchRefusedError } from '@shorts/common/net/safe-fetch';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { downloadFailureCode } from '@shorts/common/tasks/failure-codes';
import { TaskError, type TaskContext } from './task-context.js';

/** A URL a user gave: fetched under the SSRF guard (checked address, redirects re-checked, size cap),
 *  with range requests where the server takes them (safeDownload). */
export async function downloadSource(
  ctx: Pick<TaskContext, 'config' | 'signal'>,
  url: string,
  dest: string,
  maxBytes: number,
  /** What the URL is said to hold in a failure: the user must know which of their URLs failed. */
  what = 'the video',
  /** Called with the partial file once an MP4's index has arrived, before its media data (safeDownload's `onIndex`). */
  onIndex?: (partialPath: string) => Promise<void>,
): Promise<{ bytes: number }> {
  try {
    const res = await safeDownload(url, dest, {
      maxBytes,
      allowlist: parseAllowlist(ctx.config.fetchAllowlist),
      timeoutMs: 30 * 60_000,
      signal: ctx.signal,
      ...(onIndex ? { onIndex } : {}),
    });
    return { bytes: res.bytes };
  } catch (err: unknown) {
    if (err instanceof FetchRefusedError) {
      const retryable = err.code === 'network' || err.code === 'timeout';
      throw new TaskError(`Could not download ${what}: ${err.message}`, downloadFailureCode(err.code), retryable);
    }
    throw err;
  }
}

/** How many times a stored file's download that broke off is resumed before the attempt fails. */
const OBJECT_RESUMES = 3;

/**
 * A signed URL the coordinator issued for its own object store: trusted, no address policy. A
 * transfer that breaks off is resumed from the last byte on disk where the store takes ranges (the
 * coordinator's routes and S3 do; a stored object never changes under its key, and the length is
 * checked again on every part).
 */
export async function downloadObject(url: string, dest: string, signal?: AbortSignal): Promise<{ bytes: number }> {
  return storeTransfer('a stored file', signal, async () => {
    const tmp = `${dest}.part`;
    try {
      let written = 0;
      let total = NaN;
      let resumable = false;
      // After a break the rest is asked as a range, even from byte 0 (a break before anything reached
      // the disk): the source already said it takes ranges, and its length is known.
      let resuming = false;
      for (let resumesLeft = OBJECT_RESUMES; ;) {
        const res = await fetch(url, { signal, ...(resuming ? { headers: { range: `bytes=${written}-` } } : {}) });
        if (!resuming) {
          if (!res.ok || !res.body)
            throw new TaskError(`Could not read a stored file (HTTP ${res.status})`, 'SOURCE_MISSING', res.status >= 500);
          total = Number(res.headers.get('content-length') ?? NaN);
          resumable = res.headers.get('accept-ranges') === 'bytes' && Number.isFinite(total);
        } else {
          const part = /^bytes (\d+)-\d+\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
          if (res.status !== 206 || !res.body || Number(part?.[1]) !== written || Number(part?.[2]) !== total) {
            throw new TaskError(
              `Could not resume a stored file's download at byte ${written} of ${total} (HTTP ${res.status})`,
              'TRANSFER_FAILED',
              true,
            );
          }
        }
        try {
          // fetch's body is the global ReadableStream type, which @types/node does not take for its own (node:stream/web) one.
          const body = Readable.fromWeb(res.body as NodeReadableStream<Uint8Array>);
          await pipeline(body, createWriteStream(tmp, { flags: written ? 'a' : 'w' }), { signal });
          break;
        } catch (err) {
          if (signal?.aborted || !brokenConnection(err) || !resumable || resumesLeft-- <= 0) throw err;
          // What reached the disk, not what was read: a write still queued when the stream broke is lost.
          written = (await stat(tmp)).size;
          resuming = true;
        }
      }
      await rename(tmp, dest);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
    return { bytes: (await stat(dest)).size };
  });
}

/** Uploads a file to a signed PUT URL. */
export async function uploadObject(url: string, localPath: string, contentType: string, signal?: AbortSignal): Promise<number> {
  const { size } = await stat(localPath);
  const { createReadStream } = await import('node:fs');
  return storeTransfer('a result', signal, async () => {
    const res = await fetch(url, {
      method: 'PUT',
      body: Readable.toWeb(createReadStream(localPath)),
      headers: { 'content-type': contentType, 'content-length': String(size) },
      duplex: 'half',
      signal,
    } as RequestInit);
    if (!res.ok) {
      throw new TaskError(
        `Could not store a result (HTTP ${res.status}): ${(await res.text().catch(() => '')).slice(0, 200)}`,
        'STORE_FAILED',
        res.status >= 500,
      );
    }
    return size;
  });
}

// Errors of the connection itself (fetch's own TypeErrors, socket codes), as opposed to the disk's or
// the request's.
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
]);
export function brokenConnection(err: unknown): boolean {
  const e = err as { name?: string; message?: string; code?: string; cause?: { code?: string } } | undefined;
  if (!e) return false;
  if (CONNECTION_CODES.has(e.code ?? '') || CONNECTION_CODES.has(e.cause?.code ?? '')) return true;
  return e.name === 'TypeError' && /^(fetch failed|terminated)$/.test(e.message ?? '');
}

/** A transfer with the coordinator's object store that broke off (the coordinator restarted, the
 *  network dropped) is worth another attempt: a retryable failure, not a crash of the task. */
export async function storeTransfer<T>(what: string, signal: AbortSignal | undefined, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (signal?.aborted || !brokenConnection(err)) throw err;
    const detail = (err as Error).message;
    throw new TaskError(
      `The transfer of ${what} with the coordinator broke off (${detail}); the task will be tried again`,
      'TRANSFER_FAILED',
      true,
    );
  }
}
