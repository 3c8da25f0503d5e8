import { z } from 'zod';
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

export const fileViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(['image', 'video', 'audio']),
  size: z.number().describe('Bytes'),
  length: z.number().describe('Seconds; 0 when not applicable'),
  status: z.enum(['completed', 'pending']),
  description: z.string().nullable(),
  tags: z.array(z.string()),
  jobId: z.string().nullable(),
  url: z.string().describe('Signed URL; expires (SIGNED_URL_TTL_SEC), supports range requests'),
  thumbnailUrl: z.string().nullable().describe('Signed URL of a frame grabbed at store time, for videos'),
  createdAt: z.string(),
});
export type FileView = z.infer<typeof fileViewSchema>;

export const storageSummarySchema = z.object({
  subSize: z.number().describe('MB (1,000,000 bytes) allocated by the plan'),
  usedSize: z.number().describe('MB used'),
  usedSizePercent: z.number().describe('0 to 100'),
  files: z.array(fileViewSchema),
});
