import type { ObjectStore } from './object-store.js';
import { signObjectUrl } from './signed-url.js';

/** Time-limited URLs for stored objects: presigned by the store when it can (S3), else signed by
 *  the coordinator and served by its /objects route. */
export interface ObjectUrls {
  sign(key: string, method: 'GET' | 'PUT', ttlSec?: number): Promise<{ url: string; expiresAt: Date }>;
}

export function createObjectUrls(store: ObjectStore, opts: { publicUrl: string; secret: string; ttlSec: number }): ObjectUrls {
  return {
    async sign(key, method, ttlSec = opts.ttlSec) {
      const expiresAt = new Date(Date.now() + ttlSec * 1000);
      if (store.presignedUrl) return { url: await store.presignedUrl(key, method, ttlSec), expiresAt };
      return { url: signObjectUrl(opts.publicUrl, key, { method, expiresAt, secret: opts.secret }), expiresAt };
    },
  };
}
