// Resumable uploads from the web studio (tus 1.0 core + creation + termination). The bytes so far
// sit in the coordinator's data dir; the row says how many arrived. When the last byte lands the
// video moves into the organization's storage (a file row, counted against the plan) and becomes a
// job whose source is WEB_APP. Everything that can refuse the job is checked when the upload is
// created, before the first byte: size, storage (counting uploads still arriving), phone, credits.
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Coordinator } from '../coordinator.js';
import { AppError, badRequest, conflict } from '../../../common/src/errors.js';
import { isId, newId } from '../../../common/src/ids.js';
import { PLAN_LIMITS, toMB } from '../tenancy/plans.js';
import { getUser, requireOrganization, type Organization, type User } from '../tenancy/tenancy.js';
import { checkPreconditions, createJob } from '../jobs/jobs.js';
import { MINIMUM_JOB_COST } from '../jobs/pricing.js';
import { storeFile } from '../files/store-file.js';
import { deleteFile } from '../files/delete-file.js';
import { storeWatermarkImage, WATERMARK_MAX_BYTES } from '../brandings/watermark-import.js';
import type { Queryable } from '../db/db.js';

export const UPLOAD_STATES = { receiving: 'receiving', completed: 'completed', failed: 'failed' } as const;
export type UploadState = (typeof UPLOAD_STATES)[keyof typeof UPLOAD_STATES];

/** A video for a new job, or a brand preset's watermark image. */
export const UPLOAD_PURPOSES = ['job', 'watermark'] as const;
export type UploadPurpose = (typeof UPLOAD_PURPOSES)[number];

export interface UploadRow {
  id: string;
  purpose: UploadPurpose;
  organizationId: string;
  userId: string | null;
  lengthBytes: number;
  offsetBytes: number;
  fileName: string;
  title: string | null;
  contentType: string | null;
  state: UploadState;
  errorMessage: string | null;
  fileId: string | null;
  jobId: string | null;
}

const COLUMNS = `id, purpose, organization_id AS "organizationId", user_id AS "userId", length_bytes AS "lengthBytes",
  offset_bytes AS "offsetBytes", file_name AS "fileName", title, content_type AS "contentType", state,
  error_message AS "errorMessage", file_id AS "fileId", job_id AS "jobId"`;

type Deps = Pick<Coordinator, 'db' | 'store' | 'log' | 'queue' | 'config'>;

const partPath = (app: Deps, id: string) => path.resolve(app.config.dataDir, 'uploads', id);

/**
 * Refuses, before any byte is sent, an upload the plan could not keep or the job could not start
 * from. Runs inside the transaction `q` that holds the organization's row lock (createUpload).
 */
async function checkUploadFits(
  app: Deps, q: Queryable, org: Organization, user: User | undefined, lengthBytes: number, purpose: UploadPurpose,
): Promise<void> {
  const limits = PLAN_LIMITS[org.plan];
  if (purpose === 'watermark' && lengthBytes > WATERMARK_MAX_BYTES) {
    throw new AppError(413, 'Payload Too Large', `A watermark image is at most ${toMB(WATERMARK_MAX_BYTES)} MB; this one is ${toMB(lengthBytes)} MB`);
  }
  if (lengthBytes > limits.maxDownloadBytes) {
    throw new AppError(413, 'Payload Too Large', `The video is ${toMB(lengthBytes)} MB; the ${org.plan} plan takes videos up to ${toMB(limits.maxDownloadBytes)} MB`);
  }
  await expireStaleUploads(app, q, org.id);
  const inflight = Number((await q.query<{ n: string }>(
    `SELECT COALESCE(sum(length_bytes), 0)::bigint AS n FROM uploads WHERE organization_id = $1 AND state = 'receiving'`, [org.id],
  )).rows[0]!.n);
  const committed = org.storageUsedBytes + inflight;
  if (committed + lengthBytes > limits.storageBytes) {
    const available = Math.max(0, limits.storageBytes - committed);
    throw new AppError(403, 'fullStorage',
      `Not enough storage for this video: ${toMB(lengthBytes)} MB needed, ${toMB(available)} MB of ${toMB(limits.storageBytes)} MB free` +
      (inflight ? ` (${toMB(inflight)} MB are held by uploads still in progress)` : ''),
      { storageInfo: { usedSize: toMB(org.storageUsedBytes), totalSize: toMB(limits.storageBytes), availableSize: toMB(available) } });
  }
  // Phone verification and credits, in the contract's order (storage passed above).
  if (purpose === 'job') checkPreconditions({ ...org, storageUsedBytes: 0 }, user, MINIMUM_JOB_COST * app.config.creditsPerDollar);
}

/** An upload silent this long is given up: its bytes go and it stops holding storage. */
export const UPLOAD_EXPIRY_HOURS = 24;

async function expireStaleUploads(app: Deps, q: Queryable, organizationId: string): Promise<void> {
  const { rows: stale } = await q.query<{ id: string }>(
    `UPDATE uploads SET state = 'failed', error_message = 'expired: no data for ${UPLOAD_EXPIRY_HOURS} hours', updated_at = now()
     WHERE organization_id = $1 AND state = 'receiving' AND updated_at < now() - make_interval(hours => ${UPLOAD_EXPIRY_HOURS})
     RETURNING id`,
    [organizationId],
  );
  for (const { id } of stale) await rm(partPath(app, id), { force: true });
}

export async function createUpload(
  app: Deps,
  input: { org: Organization; user?: User; purpose: UploadPurpose; lengthBytes: number; fileName: string; title: string | null; contentType: string | null },
): Promise<UploadRow> {
  if (!Number.isSafeInteger(input.lengthBytes) || input.lengthBytes <= 0) throw badRequest('Upload-Length must be a positive whole number of bytes');
  if (!(UPLOAD_PURPOSES as readonly string[]).includes(input.purpose)) throw badRequest(`purpose must be one of ${UPLOAD_PURPOSES.join(', ')}`);
  const id = newId();
  await mkdir(path.dirname(partPath(app, id)), { recursive: true });
  // Checked and recorded under the organization's row lock: two uploads created at once must not
  // both be promised the same free space.
  await app.db.tx(async (c) => {
    await c.query(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [input.org.id]);
    const org = await requireOrganization(c, input.org.id);
    await checkUploadFits(app, c, org, input.user, input.lengthBytes, input.purpose);
    await c.query(
      `INSERT INTO uploads (id, purpose, organization_id, user_id, length_bytes, file_name, title, content_type) VALUES ($1, $8, $2, $3, $4, $5, $6, $7)`,
      [id, input.org.id, input.user?.id ?? null, input.lengthBytes, input.fileName.slice(0, 200), input.title?.slice(0, 300) ?? null, input.contentType, input.purpose],
    );
  });
  return (await findUpload(app, input.org.id, id))!;
}

export async function findUpload(app: Pick<Deps, 'db'>, organizationId: string, id: string): Promise<UploadRow | undefined> {
  if (!isId(id)) return undefined;
  return app.db.one(`SELECT ${COLUMNS} FROM uploads WHERE id = $1 AND organization_id = $2`, [id, organizationId]);
}

/** Which organization an upload belongs to, so the route can check the caller against it. */
export async function uploadOrganization(app: Pick<Deps, 'db'>, id: string): Promise<string | undefined> {
  if (!isId(id)) return undefined;
  return (await app.db.one<{ org: string }>('SELECT organization_id AS org FROM uploads WHERE id = $1', [id]))?.org;
}

// One writer per upload in this process; a second PATCH while one streams is a 409, as tus says.
const writing = new Set<string>();

/**
 * Appends a PATCH body at `offset` (which must be where the upload stands), keeping whatever
 * arrived even when the connection drops, so the client can resume from the new offset.
 */
export async function appendChunk(app: Deps, upload: UploadRow, offset: number, body: Readable, declaredLength?: number): Promise<UploadRow> {
  if (upload.state !== 'receiving') throw conflict(upload.state === 'completed' ? 'This upload is already complete' : `This upload failed: ${upload.errorMessage}`);
  if (offset !== upload.offsetBytes) throw conflict(`Upload-Offset ${offset} does not match the upload's offset ${upload.offsetBytes}`);
  if (declaredLength !== undefined && offset + declaredLength > upload.lengthBytes) throw badRequest('The chunk goes past the declared Upload-Length');
  if (writing.has(upload.id)) throw conflict('Another request is writing to this upload');
  writing.add(upload.id);
  const file = partPath(app, upload.id);
  let received = offset;
  try {
    // A crash between the write and the row update can leave extra bytes: the row is the truth.
    const onDisk = await stat(file).then((s) => s.size, () => 0);
    if (onDisk > offset) await truncate(file, offset);
    else if (onDisk < offset) throw new AppError(500, 'upload_lost', 'The bytes received so far are missing on this server; start the upload again');
    const limit = upload.lengthBytes - offset;
    let seen = 0;
    const out = createWriteStream(file, { flags: 'a' });
    await pipeline(body, async function* (source) {
      for await (const chunk of source as AsyncIterable<Buffer>) {
        seen += chunk.length;
        if (seen > limit) throw badRequest('The chunk goes past the declared Upload-Length');
        yield chunk;
      }
    }, out).catch(async (err) => {
      // Keep the bytes that made it, unless the client sent more than it declared.
      if (err instanceof AppError) await truncate(file, offset);
      else app.log.info('upload chunk interrupted', { uploadId: upload.id, err: String(err) });
      if (err instanceof AppError) throw err;
    });
    received = (await stat(file)).size;
    await app.db.query(`UPDATE uploads SET offset_bytes = $2, updated_at = now() WHERE id = $1`, [upload.id, received]);
  } finally {
    writing.delete(upload.id);
  }
  const updated = { ...upload, offsetBytes: received };
  return received === upload.lengthBytes ? finishUpload(app, updated) : updated;
}

/** The last byte arrived: into the organization's storage, then a job. Any refusal fails the upload. */
async function finishUpload(app: Deps, upload: UploadRow): Promise<UploadRow> {
  const file = partPath(app, upload.id);
  let fileId: string | null = null;
  try {
    if (upload.purpose === 'watermark') {
      const image = await storeWatermarkImage(app, upload.organizationId, await readFile(file), upload.fileName, 'Watermark uploaded in the studio');
      await app.db.query(`UPDATE uploads SET state = 'completed', file_id = $2, updated_at = now() WHERE id = $1`, [upload.id, image.id]);
      return { ...upload, state: 'completed', fileId: image.id };
    }
    const stored = await storeFile(app, {
      organizationId: upload.organizationId, name: upload.fileName, source: { path: file }, type: 'video',
      contentType: upload.contentType?.startsWith('video/') ? upload.contentType : undefined, tags: ['upload'],
    });
    fileId = stored.id;
    if (!(Number(stored.lengthSec) > 0)) throw badRequest(`${upload.fileName} is not a video that can be read`);
    const organization = await requireOrganization(app.db.pool, upload.organizationId);
    const user = upload.userId ? await getUser(app.db.pool, upload.userId) : undefined;
    const jobId = await createJob(app.db, app.queue, {
      org: organization,
      user,
      job: { title: upload.title ?? upload.fileName, youtubeVideoId: null, fileUrl: null, webhook: null, predefinedShorts: null, options: {} },
      creditsPerDollar: app.config.creditsPerDollar,
      source: 'WEB_APP',
      stored: { objectKey: stored.objectKey, fileId: stored.id, consume: true },
    });
    await app.db.query(`UPDATE uploads SET state = 'completed', file_id = $2, job_id = $3, updated_at = now() WHERE id = $1`, [upload.id, stored.id, jobId]);
    app.log.info('studio upload became a job', { uploadId: upload.id, jobId, organizationId: upload.organizationId, bytes: upload.lengthBytes });
    return { ...upload, state: 'completed', fileId: stored.id, jobId };
  } catch (err) {
    const message = err instanceof AppError ? err.message : 'The upload could not be stored';
    if (!(err instanceof AppError)) app.log.error('finishing an upload failed', { uploadId: upload.id, err });
    if (fileId) await deleteFile(app, upload.organizationId, fileId).catch(() => undefined);
    await app.db.query(`UPDATE uploads SET state = 'failed', error_message = $2, updated_at = now() WHERE id = $1`, [upload.id, message]);
    throw err;
  } finally {
    await rm(file, { force: true });
  }
}

/** tus termination: the client gave up; its bytes go and its storage hold ends. */
export async function cancelUpload(app: Deps, upload: UploadRow): Promise<void> {
  if (upload.state !== 'receiving') throw conflict('Only an upload in progress can be cancelled');
  await app.db.query(`UPDATE uploads SET state = 'failed', error_message = 'cancelled', updated_at = now() WHERE id = $1`, [upload.id]);
  await rm(partPath(app, upload.id), { force: true });
}
