import { createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { safeDownload, FetchRefusedError } from '../../../common/src/net/safe-fetch.js';
import { parseAllowlist } from '../../../common/src/net/address-policy.js';
import { TaskError, type TaskContext } from './task-context.js';

/** A URL a user gave: fetched under the SSRF guard (checked address, redirects re-checked, size cap). */
export async function downloadSource(ctx: TaskContext, url: string, dest: string, maxBytes: number): Promise<{ bytes: number }> {
  try {
    const res = await safeDownload(url, dest, {
      maxBytes,
      allowlist: parseAllowlist(ctx.config.fetchAllowlist),
      timeoutMs: 30 * 60_000,
      signal: ctx.signal,
    });
    return { bytes: res.bytes };
  } catch (err: unknown) {
    if (err instanceof FetchRefusedError) {
      const retryable = err.code === 'network' || err.code === 'timeout';
      throw new TaskError(`Could not download the video: ${err.message}`, `DOWNLOAD_${err.code.toUpperCase()}`, retryable);
    }
    throw err;
  }
}

/** A signed URL the coordinator issued for its own object store: trusted, no address policy. */
export async function downloadObject(url: string, dest: string, signal?: AbortSignal): Promise<{ bytes: number }> {
  const res = await fetch(url, { signal });
  if (!res.ok || !res.body) throw new TaskError(`Could not read a stored file (HTTP ${res.status})`, 'SOURCE_MISSING', res.status >= 500);
  const tmp = `${dest}.part`;
  try {
    await pipeline(Readable.fromWeb(res.body as any), createWriteStream(tmp), { signal });
    await rename(tmp, dest);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return { bytes: (await stat(dest)).size };
}

/** Uploads a file to a signed PUT URL. */
export async function uploadObject(url: string, localPath: string, contentType: string, signal?: AbortSignal): Promise<number> {
  const { size } = await stat(localPath);
  const { createReadStream } = await import('node:fs');
  const res = await fetch(url, {
    method: 'PUT',
    body: Readable.toWeb(createReadStream(localPath)) as any,
    headers: { 'content-type': contentType, 'content-length': String(size) },
    duplex: 'half',
    signal,
  } as RequestInit);
  if (!res.ok) throw new Error(`upload failed with HTTP ${res.status}: ${await res.text().catch(() => '')}`);
  return size;
}
