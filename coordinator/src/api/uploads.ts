import { z } from 'zod';
import { pageParams, pageQueryParam, type Api, type ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { requireOrg } from './auth-context.js';
import { DEFAULT_ORG_MESSAGES, type OrganizationMessages } from '../tenancy/auth.js';
import { FILE_TYPES, findFile, listFiles, storageUsage, type FileType } from '../files/files.js';
import { fileView } from '../files/views.js';
import { deletedFileSchema, fileListSchema, fileViewSchema, storageSummarySchema } from '@shorts/common/api/files';
import { deleteFile } from '../files/delete-file.js';

/** Contract section 7 words the files routes' organization errors in `message`. */
export const FILES_ORG_MESSAGES: OrganizationMessages = {
  ...DEFAULT_ORG_MESSAGES,
  missing: new AppError(400, 'Bad Request', 'Organization ID is required'),
};

const SUMMARY_FILES = 50;

const orgQuery = z.object({ organizationId: z.string().optional() });

const listQuery = orgQuery.extend({
  type: z.string().optional(),
  tags: z.union([z.string(), z.array(z.string())]).optional(),
  limit: pageQueryParam,
  offset: pageQueryParam,
});

function typeParam(raw: string | undefined): FileType | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!(FILE_TYPES as readonly string[]).includes(raw)) throw badRequest(`type must be one of ${FILE_TYPES.join(', ')}`);
  return raw as FileType;
}

/** `tags=a,b` (or repeated `tags=`): any of them matches. */
function tagsParam(raw: string | string[] | undefined): string[] | undefined {
  const tags = [raw ?? []]
    .flat()
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  return tags.length ? [...new Set(tags)] : undefined;
}

const EXAMPLE_FILE = {
  id: '3f9a2c64-1b7e-4d28-9e05-8a6b4c2d1e77',
  name: 'render-7e0d4c1a-92b5-4f3e-b8a7-5c6d2e1f0a93.mp4',
  type: 'video' as const,
  size: 5123456,
  length: 26.5,
  status: 'completed' as const,
  description: null,
  tags: ['render'],
  jobId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11',
  url: 'https://shorts.example.com/objects/orgs/…/render-7e0d4c1a-92b5-4f3e-b8a7-5c6d2e1f0a93.mp4?expires=…&sig=…',
  thumbnailUrl: 'https://shorts.example.com/objects/orgs/…/render-7e0d4c1a-92b5-4f3e-b8a7-5c6d2e1f0a93.jpg?expires=…&sig=…',
  createdAt: '2026-11-25T12:01:00.000Z',
};
const EXAMPLE_USAGE = { subSize: 50000, usedSize: 1234.57, usedSizePercent: 2.47 };

export function registerUploadRoutes(api: Api, app: Coordinator): void {
  const org = (ctx: ApiContext, supplied: unknown) => requireOrg(app, ctx, supplied, FILES_ORG_MESSAGES);

  api.route(
    {
      method: 'get',
      path: '/api/uploads',
      tag: 'Files',
      summary: 'Storage summary: plan allocation, usage (MB of 1,000,000 bytes) and the newest files',
      description: `\`files\` holds the ${SUMMARY_FILES} newest files; page through all of them with GET /api/uploads/files.`,
      query: orgQuery,
      response: storageSummarySchema,
      example: { ...EXAMPLE_USAGE, files: [EXAMPLE_FILE] },
    },
    async (ctx, { query }) => {
      const orgId = await org(ctx, query.organizationId);
      const usage = await storageUsage(app.db.pool, orgId);
      const { rows } = await listFiles(app.db.pool, orgId, { limit: SUMMARY_FILES, offset: 0 });
      return { ...usage, files: await Promise.all(rows.map((r) => fileView(r, app.urls))) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/uploads/files',
      tag: 'Files',
      summary: 'List files, newest first; type and tags (any of, comma-separated) filters combine',
      description:
        '`limit` 1-100 (default 50), `offset` >= 0 (default 0); `total` counts matching files before paging, `pages` = ceil(total / limit).',
      query: listQuery,
      response: fileListSchema,
      example: { ...EXAMPLE_USAGE, files: [EXAMPLE_FILE], total: 1, limit: 50, offset: 0, pages: 1 },
    },
    async (ctx, { query }) => {
      const orgId = await org(ctx, query.organizationId);
      const { limit, offset } = pageParams(query, 50);
      const filter = { type: typeParam(query.type), tags: tagsParam(query.tags), limit, offset };
      const [usage, { rows, total }] = await Promise.all([storageUsage(app.db.pool, orgId), listFiles(app.db.pool, orgId, filter)]);
      const files = await Promise.all(rows.map((r) => fileView(r, app.urls)));
      return { ...usage, files, total, limit, offset, pages: Math.ceil(total / limit) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/uploads/files/:fileId',
      tag: 'Files',
      summary: 'One file, with signed url and thumbnailUrl',
      query: orgQuery,
      response: fileViewSchema,
      example: EXAMPLE_FILE,
    },
    async (ctx, { query }) => {
      const orgId = await org(ctx, query.organizationId);
      const row = await findFile(app.db.pool, orgId, ctx.params.fileId!);
      if (!row) throw notFound('File not found');
      return fileView(row, app.urls);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/uploads/files/:fileId',
      tag: 'Files',
      summary: 'Delete a file from the database and the object store, giving its bytes back to the quota',
      description: 'When the object store fails the answer is 500 `{id, deleted: false, error}` and the file is kept.',
      query: orgQuery,
      response: deletedFileSchema,
      example: { id: EXAMPLE_FILE.id, deleted: true },
    },
    async (ctx, { query }) => {
      const orgId = await org(ctx, query.organizationId);
      const outcome = await deleteFile(app, orgId, ctx.params.fileId!);
      if (!outcome.deleted) {
        ctx.status = 500;
        ctx.body = outcome;
        return undefined;
      }
      return outcome;
    },
  );
}
