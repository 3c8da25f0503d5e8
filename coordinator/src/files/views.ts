import type { FileView } from '@shorts/common/api/files';
import type { ObjectUrls } from '../storage/urls.js';
import type { FileRow } from './files.js';

/** Contract 2.7: no `key`, `userId` or `organizationId`; URLs are signed and expire. */
export async function fileView(row: FileRow, urls: ObjectUrls): Promise<FileView> {
  const [url, thumbnailUrl] = await Promise.all([
    urls.sign(row.objectKey, 'GET'),
    row.thumbnailKey ? urls.sign(row.thumbnailKey, 'GET') : undefined,
  ]);
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    size: Number(row.sizeBytes),
    length: Number(row.lengthSec),
    status: row.status,
    description: row.description,
    tags: row.tags,
    jobId: row.jobId,
    url: url.url,
    thumbnailUrl: thumbnailUrl?.url ?? null,
    createdAt: new Date(row.createdAt).toISOString(),
  };
}
