// The file routes' answers (coordinator/src/api/uploads.ts, contract 2.7); the studio reads their types.
import { z } from 'zod';

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
export type FileView = z.output<typeof fileViewSchema>;

/** GET /api/uploads. */
export const storageSummarySchema = z.object({
  subSize: z.number().describe('MB (1,000,000 bytes) allocated by the plan'),
  usedSize: z.number().describe('MB used'),
  usedSizePercent: z.number().describe('0 to 100'),
  files: z.array(fileViewSchema),
});
export type StorageSummary = z.output<typeof storageSummarySchema>;

/** GET /api/uploads/files. */
export const fileListSchema = storageSummarySchema.extend({ total: z.number(), limit: z.number(), offset: z.number(), pages: z.number() });
export type FileList = z.output<typeof fileListSchema>;

/** DELETE /api/uploads/files/:fileId (also the body of its 500 when the object store failed). */
export const deletedFileSchema = z.object({
  id: z.string(),
  deleted: z.boolean(),
  error: z.string().optional(),
  message: z.string().optional(),
});
export type DeletedFile = z.output<typeof deletedFileSchema>;
