import { copyFile, link, mkdir, readdir, rename, rm, stat, statfs, utimes } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '@shorts/common/logger';
import { downloadObject } from './download.js';
import type { StoredObjects } from './task-context.js';

/**
 * Stored objects this agent read or wrote lately, kept on its disk so that the next task of the same
 * job here takes its copy from the disk instead of the store: a long source's shorts reframed after
 * its analysis stored it (issue 22), a render after another render of the same source, a chunk after
 * the split. An object is written once under its key; each use still asks the store for its size
 * (one byte range), so a key stored again since (a retried task's new copy) is fetched again.
 *
 * Tasks get hard links: evicting an entry never takes a file from a task that uses it. Bounded by
 * `maxBytes`, and by half of what the disk would have free without the cache; least recently used
 * entries go first.
 */
export class StoredObjectCache implements StoredObjects {
  constructor(
    private readonly dir: string,
    private readonly maxBytes: number,
    private readonly log: Logger,
  ) {}

  /** The object `objectKey` (readable at the signed `url`) at `dest`: from the cache when it holds
   *  the stored size, else downloaded and kept. */
  async fetch(objectKey: string, url: string, dest: string, signal: AbortSignal): Promise<{ bytes: number; cached: boolean }> {
    if (await this.reuse(objectKey, url, dest, signal)) return { bytes: (await stat(dest)).size, cached: true };
    const { bytes } = await downloadObject(url, dest, signal);
    await this.keep(objectKey, dest);
    return { bytes, cached: false };
  }

  /** The kept copy of `objectKey` at `dest` when there is one of the stored size (dated as used);
   *  false, and nothing fetched, when there is none. */
  async reuse(objectKey: string, url: string, dest: string, signal: AbortSignal): Promise<boolean> {
    const entry = this.entryOf(objectKey);
    const kept = this.maxBytes > 0 ? await stat(entry).catch(() => undefined) : undefined;
    if (!kept || (await storedSize(url, signal)) !== kept.size) return false;
    await linkOrCopy(entry, dest);
    const now = new Date();
    await utimes(entry, now, now).catch(() => undefined);
    return true;
  }

  /** Keeps a local file that is (or has just been stored as) `objectKey`. Never fails a task: a
   *  cache that cannot keep a file only costs a later download. A short-lived entry is dated as
   *  never used, so eviction takes it before any other; a fetch of it dates it afresh. */
  async keep(objectKey: string, file: string, opts: { shortLived?: boolean } = {}): Promise<void> {
    if (this.maxBytes <= 0) return;
    const entry = this.entryOf(objectKey);
    try {
      await mkdir(this.dir, { recursive: true });
      const staged = `${entry}.${process.pid}.${Date.now()}.part`;
      await linkOrCopy(file, staged);
      // A hard link shares the task's file's dates: the task's own copy is dated too (harmless).
      if (opts.shortLived) await utimes(staged, NEVER_USED, NEVER_USED);
      await rename(staged, entry);
      await this.evict();
    } catch (err) {
      this.log.warn('could not keep a stored object on disk', { objectKey, err: (err as Error).message });
    }
  }

  async forget(objectKey: string): Promise<void> {
    await rm(this.entryOf(objectKey), { force: true }).catch((err: Error) =>
      this.log.warn('could not drop a stored object from disk', { objectKey, err: err.message }),
    );
  }

  private entryOf(objectKey: string): string {
    return path.join(this.dir, cacheEntryName(objectKey));
  }

  private async evict(): Promise<void> {
    const entries = [];
    for (const name of await readdir(this.dir)) {
      if (name.endsWith('.part')) continue;
      const file = path.join(this.dir, name);
      const info = await stat(file).catch(() => undefined);
      if (info) entries.push({ file, size: info.size, usedMs: info.mtimeMs });
    }
    let total = entries.reduce((sum, e) => sum + e.size, 0);
    const disk = await statfs(this.dir);
    const limit = Math.min(this.maxBytes, (disk.bavail * disk.bsize + total) / 2);
    for (const e of entries.sort((a, b) => a.usedMs - b.usedMs)) {
      if (total <= limit) break;
      await rm(e.file, { force: true });
      total -= e.size;
    }
  }
}

/** The stored object's size, from a one-byte range request; undefined when the store does not say. */
async function storedSize(url: string, signal: AbortSignal): Promise<number | undefined> {
  try {
    const res = await fetch(url, { headers: { range: 'bytes=0-0' }, signal });
    await res.body?.cancel();
    if (res.status === 206) {
      const total = Number(res.headers.get('content-range')?.split('/')[1]);
      return Number.isInteger(total) ? total : undefined;
    }
    return undefined;
  } catch {
    signal.throwIfAborted();
    return undefined;
  }
}

/** The file name an object's copy has in the cache folder. */
export const cacheEntryName = (objectKey: string): string => createHash('sha256').update(objectKey).digest('hex');

/** The date of a short-lived entry: older than any use. */
const NEVER_USED = new Date(0);

async function linkOrCopy(from: string, to: string): Promise<void> {
  await rm(to, { force: true });
  try {
    await link(from, to);
  } catch {
    // Another file system, or one without hard links.
    await copyFile(from, to);
  }
}
