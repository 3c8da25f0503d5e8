import type { Readable } from 'node:stream';

export type ObjectSource = Buffer | Readable | { path: string };

export interface StoredObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
}

/** Where files live: the local filesystem by default, any S3-compatible service when configured. */
export interface ObjectStore {
  readonly kind: 'local' | 's3';
  put(key: string, source: ObjectSource, opts?: { contentType?: string }): Promise<{ size: number }>;
  get(key: string, range?: { start: number; end?: number }): Promise<{ stream: Readable; size: number; contentType?: string }>;
  stat(key: string): Promise<{ size: number; lastModified: Date } | null>;
  delete(key: string): Promise<void>;
  list(prefix: string): AsyncIterable<StoredObjectInfo>;
  /** Puts an object under another key, replacing what was there; the old key is gone after. An
   *  upload is received under a staging key and moved into place only while its lease is live. */
  move(from: string, to: string): Promise<void>;
  /** Stores that can sign their own download URLs (S3) skip the coordinator's /objects route. */
  presignedUrl?(key: string, method: 'GET', expiresSec: number): Promise<string>;
}

/** Removes every object under a prefix (a failed task's uploads, a consumed staging upload). */
export async function deletePrefix(store: Pick<ObjectStore, 'list' | 'delete'>, prefix: string): Promise<void> {
  for await (const obj of store.list(prefix)) await store.delete(obj.key);
}

/** Keys are relative, slash-separated, without `..` or empty parts. */
export function checkKey(key: string): string {
  if (
    !key ||
    key.startsWith('/') ||
    key.includes('\\') ||
    key.split('/').some((p) => p === '' || p === '.' || p === '..') ||
    // Control characters are what this refuses: a key is a path, never a place for them.
    // eslint-disable-next-line no-control-regex
    /[\0-\x1f]/.test(key)
  ) {
    throw new Error(`invalid object key: ${JSON.stringify(key)}`);
  }
  return key;
}
