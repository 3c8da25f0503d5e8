import { prepared, type Queryable } from '../db/db.js';
import { AppError } from '../errors.js';
import { isId, newId } from '../ids.js';
import { PLAN_LIMITS, toMB, type Plan } from '../tenancy/plans.js';

export type FileType = 'image' | 'video' | 'audio';

export interface NewFile {
  organizationId: string;
  jobId?: string | null;
  name: string;
  type: FileType;
  contentType?: string | null;
  sizeBytes: number;
  lengthSec?: number;
  objectKey: string;
  thumbnailKey?: string | null;
  /** A render's caption script (renders only). */
  captionsKey?: string | null;
  tags?: string[];
  description?: string | null;
}

interface OrgUsageRow {
  plan: Plan;
  used: number;
}

/** Inserts file rows and moves the organization's usage by exactly their bytes, in the caller's
 *  transaction; refuses (and so rolls back) when the plan's storage would be exceeded. */
export async function insertFiles(c: Queryable, files: NewFile[]): Promise<string[]> {
  if (!files.length) return [];
  const organizationId = files[0]!.organizationId;
  const total = files.reduce((n, f) => n + f.sizeBytes, 0);
  const org = (
    await c.query<OrgUsageRow>(`SELECT plan, storage_used_bytes AS used FROM organizations WHERE id = $1 FOR UPDATE`, [organizationId])
  ).rows[0];
  if (!org) throw new AppError(404, 'Not Found', 'Organization not found');
  const limit = PLAN_LIMITS[org.plan].storageBytes;
  if (org.used + total > limit) {
    throw new AppError(
      403,
      'fullStorage',
      `Not enough storage: ${toMB(total)} MB needed, ${toMB(Math.max(0, limit - org.used))} MB of ${toMB(limit)} MB free`,
      {
        storageInfo: { usedSize: toMB(org.used), totalSize: toMB(limit), availableSize: toMB(Math.max(0, limit - org.used)) },
      },
    );
  }
  const ids: string[] = [];
  for (const f of files) {
    const id = newId();
    ids.push(id);
    await c.query(
      `INSERT INTO files (id, organization_id, job_id, name, type, content_type, size_bytes, length_sec, object_key, thumbnail_key, captions_key, tags, description)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      [
        id,
        f.organizationId,
        f.jobId ?? null,
        f.name,
        f.type,
        f.contentType ?? null,
        f.sizeBytes,
        f.lengthSec ?? 0,
        f.objectKey,
        f.thumbnailKey ?? null,
        f.captionsKey ?? null,
        f.tags ?? [],
        f.description ?? null,
      ],
    );
  }
  await c.query(`UPDATE organizations SET storage_used_bytes = storage_used_bytes + $2 WHERE id = $1`, [organizationId, total]);
  return ids;
}

/** Removes file rows and gives their bytes back, in the caller's transaction; returns the object
 *  keys the caller deletes from the store after commit. */
export async function deleteFileRows(
  c: Queryable,
  organizationId: string,
  where: { ids?: string[]; jobIds?: string[] },
): Promise<string[]> {
  const { rows } = await c.query<{ objectKey: string; thumbnailKey: string | null; captionsKey: string | null; sizeBytes: number }>(
    `DELETE FROM files WHERE organization_id = $1 AND (id = ANY($2) OR job_id = ANY($3))
     RETURNING object_key AS "objectKey", thumbnail_key AS "thumbnailKey", captions_key AS "captionsKey", size_bytes AS "sizeBytes"`,
    [organizationId, where.ids ?? [], where.jobIds ?? []],
  );
  const bytes = rows.reduce((n, r) => n + Number(r.sizeBytes), 0);
  if (bytes)
    await c.query(`UPDATE organizations SET storage_used_bytes = GREATEST(storage_used_bytes - $2, 0) WHERE id = $1`, [
      organizationId,
      bytes,
    ]);
  return rows.flatMap((r) => [r.objectKey, r.thumbnailKey, r.captionsKey].filter((k): k is string => !!k));
}

export const FILE_TYPES = ['image', 'video', 'audio'] as const;

/** A file row as the API layer sees it; `objectKey`/`thumbnailKey` never leave the coordinator. */
export interface FileRow {
  id: string;
  organizationId: string;
  jobId: string | null;
  name: string;
  type: FileType;
  contentType: string | null;
  sizeBytes: number;
  lengthSec: number;
  status: 'completed' | 'pending';
  description: string | null;
  tags: string[];
  objectKey: string;
  thumbnailKey: string | null;
  createdAt: Date;
}

export const FILE_COLUMNS = `id, organization_id AS "organizationId", job_id AS "jobId", name, type, content_type AS "contentType",
  size_bytes AS "sizeBytes", length_sec AS "lengthSec", status, description, tags, object_key AS "objectKey",
  thumbnail_key AS "thumbnailKey", created_at AS "createdAt"`;

/** Another organization's file, like a malformed id, is simply not found (contract section 5). */
export async function findFile(c: Queryable, organizationId: string, id: string): Promise<FileRow | undefined> {
  if (!isId(id)) return undefined;
  return (await c.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM files WHERE organization_id = $1 AND id = $2`, [organizationId, id])).rows[0];
}

export interface FileFilter {
  type?: FileType;
  /** Any of them (OR). */
  tags?: string[];
  limit: number;
  offset: number;
}

/** Newest first; `total` counts the filtered rows before paging. */
export async function listFiles(c: Queryable, organizationId: string, f: FileFilter): Promise<{ rows: FileRow[]; total: number }> {
  const where = ['organization_id = $1'];
  const params: unknown[] = [organizationId];
  if (f.type) {
    params.push(f.type);
    where.push(`type = $${params.length}`);
  }
  if (f.tags?.length) {
    params.push(f.tags);
    where.push(`tags && $${params.length}::text[]`);
  }
  const sqlWhere = where.join(' AND ');
  // The page and the total in one round trip; a page past the end has no row to carry the total.
  const page = (
    await c.query<FileRow & { totalCount: number }>(
      prepared(
        `SELECT ${FILE_COLUMNS}, count(*) OVER () AS "totalCount" FROM files WHERE ${sqlWhere} ORDER BY created_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, f.limit, f.offset],
      ),
    )
  ).rows;
  const total = page.length
    ? Number(page[0]!.totalCount)
    : f.offset > 0
      ? Number((await c.query<{ n: number }>(`SELECT count(*) AS n FROM files WHERE ${sqlWhere}`, params)).rows[0].n)
      : 0;
  return { rows: page.map(({ totalCount: _, ...row }) => row), total };
}

/** Usage against the plan, in MB of 1,000,000 bytes (DECISIONS.md). */
export async function storageUsage(
  c: Queryable,
  organizationId: string,
): Promise<{ subSize: number; usedSize: number; usedSizePercent: number }> {
  const org = (await c.query<OrgUsageRow>(`SELECT plan, storage_used_bytes AS used FROM organizations WHERE id = $1`, [organizationId]))
    .rows[0];
  if (!org) throw new AppError(404, 'Not Found', 'Organization not found');
  const limit = PLAN_LIMITS[org.plan].storageBytes;
  // Usage can exceed a plan after a downgrade; the percentage stays within its documented 0-100.
  const percent = Math.min(100, Math.round((org.used / limit) * 10_000) / 100);
  return { subSize: toMB(limit), usedSize: toMB(org.used), usedSizePercent: percent };
}
