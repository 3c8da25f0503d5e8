import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { checkKey, type ObjectSource, type ObjectStore, type StoredObjectInfo } from './object-store.js';

export interface S3StoreConfig {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle?: boolean;
  /** Objects up to this size are moved by one server-side CopyObject (at most 5 GB, the default). */
  maxCopyBytes?: number;
}

/** Any S3-compatible service. The coordinator still signs and serves the URLs it hands out. */
export class S3ObjectStore implements ObjectStore {
  readonly kind = 's3' as const;
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly maxCopyBytes: number;

  constructor(config: S3StoreConfig) {
    if (!config.bucket) throw new Error('S3_BUCKET is required with STORAGE=s3');
    this.bucket = config.bucket;
    this.maxCopyBytes = config.maxCopyBytes ?? 5_000_000_000;
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle ?? true,
      credentials:
        config.accessKeyId && config.secretAccessKey
          ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey }
          : undefined,
    });
  }

  async put(key: string, source: ObjectSource, opts: { contentType?: string } = {}) {
    const body = Buffer.isBuffer(source)
      ? source
      : source instanceof Readable
        ? source
        : createReadStream((source as { path: string }).path);
    await new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: checkKey(key), Body: body, ContentType: opts.contentType },
    }).done();
    const s = await this.stat(key);
    return { size: s?.size ?? 0 };
  }

  async get(key: string, range?: { start: number; end?: number }) {
    const res = await this.client.send(
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: checkKey(key),
        Range: range ? `bytes=${range.start}-${range.end ?? ''}` : undefined,
      }),
    );
    const total = res.ContentRange ? Number(res.ContentRange.split('/')[1]) : Number(res.ContentLength ?? 0);
    return { stream: res.Body as Readable, size: total, contentType: res.ContentType };
  }

  async stat(key: string) {
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
      return { size: Number(res.ContentLength ?? 0), lastModified: res.LastModified ?? new Date(0) };
    } catch (err) {
      const e = err as { $metadata?: { httpStatusCode?: number }; name?: unknown } | null | undefined;
      if (e?.$metadata?.httpStatusCode === 404 || e?.name === 'NotFound') return null;
      throw err;
    }
  }

  async move(from: string, to: string): Promise<void> {
    const size = (await this.stat(from))?.size;
    if (size === undefined) throw new Error(`no object to move at ${from}`);
    if (size <= this.maxCopyBytes) {
      const source = `${this.bucket}/${checkKey(from).split('/').map(encodeURIComponent).join('/')}`;
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: checkKey(to), CopySource: source }));
    } else {
      // Past what one CopyObject takes, the bytes go through here once more (UploadPartCopy would
      // not, but S3-compatible services such as s3rver lack it).
      await this.put(to, (await this.get(from)).stream);
    }
    await this.delete(from);
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkKey(key) }));
  }

  async *list(prefix: string): AsyncIterable<StoredObjectInfo> {
    let token: string | undefined;
    do {
      const res = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of res.Contents ?? []) yield { key: o.Key!, size: Number(o.Size ?? 0), lastModified: o.LastModified ?? new Date(0) };
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
  }
}
