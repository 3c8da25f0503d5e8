// The coordinator's own way to add a file to an organization's library: an operator's file, an
// imported watermark. Object first, then the row (with the usage) in one transaction; when the row
// is refused (storage full) the objects go again, so nothing is stored that no row accounts for.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Coordinator } from '../context.js';
import { badRequest } from '../errors.js';
import { newId } from '../ids.js';
import { findFile, insertFiles, type FileRow, type FileType } from './files.js';
import { grabFrame, probeLength } from './media-info.js';

export interface StoreFileInput {
  organizationId: string;
  name: string;
  source: Buffer | { path: string };
  type?: FileType;
  contentType?: string;
  jobId?: string | null;
  tags?: string[];
  description?: string | null;
}

type Deps = Pick<Coordinator, 'db' | 'store' | 'log'>;

const BY_EXTENSION: Record<string, [FileType, string]> = {
  '.png': ['image', 'image/png'],
  '.jpg': ['image', 'image/jpeg'],
  '.jpeg': ['image', 'image/jpeg'],
  '.webp': ['image', 'image/webp'],
  '.gif': ['image', 'image/gif'],
  '.svg': ['image', 'image/svg+xml'],
  '.mp4': ['video', 'video/mp4'],
  '.mov': ['video', 'video/quicktime'],
  '.webm': ['video', 'video/webm'],
  '.mkv': ['video', 'video/x-matroska'],
  '.mp3': ['audio', 'audio/mpeg'],
  '.wav': ['audio', 'audio/wav'],
  '.m4a': ['audio', 'audio/mp4'],
  '.aac': ['audio', 'audio/aac'],
  '.ogg': ['audio', 'audio/ogg'],
};

function classify(input: StoreFileInput): { type: FileType; contentType: string } {
  const fromName = BY_EXTENSION[path.extname(input.name).toLowerCase()];
  const fromMime = input.contentType?.split('/')[0];
  const type = input.type ?? (fromMime === 'image' || fromMime === 'video' || fromMime === 'audio' ? fromMime : fromName?.[0]);
  if (!type) throw badRequest(`Cannot tell whether ${input.name} is an image, a video or audio`);
  return { type, contentType: input.contentType ?? fromName?.[1] ?? 'application/octet-stream' };
}

/** Object names keep the original name readable but never let it escape the file's folder. */
const safeName = (name: string) =>
  path
    .basename(name)
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .slice(-120) || 'file';

export async function storeFile(app: Deps, input: StoreFileInput): Promise<FileRow> {
  const { type, contentType } = classify(input);
  // The row's id is made by insertFiles; the folder only has to be unique.
  const prefix = `orgs/${input.organizationId}/files/${newId()}/`;
  // In its own folder, so no original name can collide with the thumbnail's.
  const objectKey = `${prefix}original/${safeName(input.name)}`;
  const work = await mkdtemp(path.join(os.tmpdir(), 'store-file-'));
  const written: string[] = [];
  try {
    let localPath: string;
    if (Buffer.isBuffer(input.source)) {
      localPath = path.join(work, safeName(input.name));
      if (type !== 'image') await writeFile(localPath, input.source);
    } else {
      localPath = input.source.path;
    }
    const lengthSec = type === 'image' ? 0 : await probeLength(localPath);
    const thumb = type === 'video' ? await grabFrame(localPath, lengthSec, path.join(work, 'thumbnail.jpg')) : undefined;

    // Usage counts what the store holds, not what the caller believed it sent.
    const { size: sizeBytes } = await app.store.put(objectKey, input.source, { contentType });
    written.push(objectKey);
    let thumbnailKey: string | null = null;
    if (thumb) {
      thumbnailKey = prefix + 'thumbnail.jpg';
      await app.store.put(thumbnailKey, { path: thumb }, { contentType: 'image/jpeg' });
      written.push(thumbnailKey);
    }
    const [id] = await app.db.tx((c) =>
      insertFiles(c, [
        {
          organizationId: input.organizationId,
          jobId: input.jobId ?? null,
          name: input.name,
          type,
          contentType,
          sizeBytes,
          lengthSec,
          objectKey,
          thumbnailKey,
          tags: input.tags ?? [],
          description: input.description ?? null,
        },
      ]),
    );
    written.length = 0;
    return (await findFile(app.db.pool, input.organizationId, id!))!;
  } finally {
    for (const key of written)
      await app.store.delete(key).catch((err) => app.log.warn('could not remove an unaccounted object', { key, err }));
    await rm(work, { recursive: true, force: true });
  }
}

/** For operators and tests: a file on this machine into an organization's library. */
export function addFileFromPath(
  app: Deps,
  organizationId: string,
  filePath: string,
  opts: Omit<StoreFileInput, 'organizationId' | 'source' | 'name'> & { name?: string } = {},
): Promise<FileRow> {
  return storeFile(app, { ...opts, organizationId, name: opts.name ?? path.basename(filePath), source: { path: filePath } });
}
