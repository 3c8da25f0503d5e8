import type { ObjectStore } from './object-store.js';
import { LocalObjectStore } from './local-store.js';
import { S3ObjectStore, type S3StoreConfig } from './s3-store.js';

export type ObjectStoreConfig = { kind: 'local'; root: string } | ({ kind: 's3' } & S3StoreConfig);

/** The store the configuration names: the local filesystem, or an S3-compatible service. */
export function createObjectStore(config: ObjectStoreConfig): ObjectStore {
  return config.kind === 'local' ? new LocalObjectStore(config.root) : new S3ObjectStore(config);
}
