import type { ObjectStore } from './object-store.js';
import { signObjectUrl, type UploadGrant } from './signed-url.js';

/** Time-limited URLs for stored objects: presigned by the store when it can (S3), else signed by
 *  the coordinator and served by its /objects route. Uploads are always the coordinator's: only it
 *  can refuse one whose lease has ended or that runs past its size. */
export interface ObjectUrls {
  sign(key: string, method: 'GET', ttlSec?: number): Promise<{ url: string; expiresAt: Date }>;
  signUpload(key: string, grant: UploadGrant, ttlSec?: number): { url: string; expiresAt: Date };
}

export function createObjectUrls(store: ObjectStore, opts: { publicUrl: string; secret: string; ttlSec: number }): ObjectUrls {
  return {
    async sign(key, method, ttlSec = opts.ttlSec) {
      const expiresAt = new Date(Date.now() + ttlSec * 1000);
      if (store.presignedUrl) return { url: await store.presignedUrl(key, method, ttlSec), expiresAt };
      return { url: signObjectUrl(opts.publicUrl, key, { method, expiresAt, secret: opts.secret }), expiresAt };
    },
    signUpload(key, grant, ttlSec = opts.ttlSec) {
      const expiresAt = new Date(Date.now() + ttlSec * 1000);
      return { url: signObjectUrl(opts.publicUrl, key, { method: 'PUT', expiresAt, secret: opts.secret, grant }), expiresAt };
    },
  };
}
