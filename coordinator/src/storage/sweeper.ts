import type { ObjectStore } from './object-store.js';

/**
 * Deletes objects under `prefix` that no database row knows, older than `olderThan` (so an upload
 * whose row is about to be written is never taken). Returns what it looked at and removed.
 */
export async function sweepOrphans(
  store: ObjectStore,
  prefix: string,
  isKnownKey: (key: string) => Promise<boolean>,
  opts: { olderThan: Date },
): Promise<{ scanned: number; deleted: number; deletedBytes: number }> {
  let scanned = 0;
  let deleted = 0;
  let deletedBytes = 0;
  for await (const obj of store.list(prefix)) {
    scanned++;
    if (obj.lastModified >= opts.olderThan) continue;
    if (await isKnownKey(obj.key)) continue;
    await store.delete(obj.key);
    deleted++;
    deletedBytes += obj.size;
  }
  return { scanned, deleted, deletedBytes };
}
