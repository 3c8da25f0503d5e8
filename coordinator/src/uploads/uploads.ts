// Resumable uploads from the web studio (tus 1.0 core + creation + termination), through any
// coordinator. Each PATCH body becomes one part object in the object store; the row says how many
// bytes count and `upload_parts` which objects hold them, so a client can resume through another
// coordinator than the one it started on. One writer at a time holds a lease on the row (renewed
// while it streams, so a coordinator that dies lets go within `uploadWriterLeaseMs`). When the last
// byte is accepted the parts are joined, the video moves into the organization's storage (a file
// row, counted against the plan) and becomes a job whose source is WEB_APP; completing the row is a
// compare-and-swap in the job's own transaction, so an upload becomes one file and one job however
// many requests race to finish it. Everything that can refuse the job is checked when the upload is
// created, before the first byte: size, storage (counting uploads still arriving), phone, credits.
// A scheduled sweep (pg-boss cron, one coordinator per run) finishes uploads whose finisher died,
// expires abandoned ones (their bytes removed, their storage hold released) and removes part
// objects no upload still counts.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { Coordinator } from '../context.js';
import { AppError, appErrorOf, badRequest, conflict } from '../errors.js';
import { isId, newId } from '../ids.js';
import { PLAN_LIMITS, toMB } from '../tenancy/plans.js';
import { getUser, requireOrganization, type Organization, type User } from '../tenancy/tenancy.js';
import { checkPreconditions, createJob } from '../jobs/jobs.js';
import { MINIMUM_JOB_COST } from '../jobs/pricing.js';
import { storeFile } from '../files/store-file.js';
import { deleteFile } from '../files/delete-file.js';
import { storeWatermarkImage, WATERMARK_MAX_BYTES } from '../brandings/watermark-import.js';
import { deletePrefix } from '../storage/object-store.js';
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

// Outside `orgs/`, so the storage orphan sweep (files no row names) never looks at them.
const partsPrefix = (uploadId: string) => `uploads/${uploadId}/`;
const partKey = (uploadId: string, offset: number, writer: string) =>
  `${partsPrefix(uploadId)}${String(offset).padStart(15, '0')}-${writer}`;

/**
 * Refuses, before any byte is sent, an upload the plan could not keep or the job could not start
 * from. Runs inside the transaction `q` that holds the organization's row lock (createUpload).
 */
async function checkUploadFits(
  app: Deps,
  q: Queryable,
  org: Organization,
  user: User | undefined,
  lengthBytes: number,
  purpose: UploadPurpose,
): Promise<void> {
  const limits = PLAN_LIMITS[org.plan];
  if (purpose === 'watermark' && lengthBytes > WATERMARK_MAX_BYTES) {
    throw new AppError(
      413,
      'Payload Too Large',
      `A watermark image is at most ${toMB(WATERMARK_MAX_BYTES)} MB; this one is ${toMB(lengthBytes)} MB`,
    );
  }
  if (lengthBytes > limits.maxDownloadBytes) {
    throw new AppError(
      413,
      'Payload Too Large',
      `The video is ${toMB(lengthBytes)} MB; the ${org.plan} plan takes videos up to ${toMB(limits.maxDownloadBytes)} MB`,
    ).withCode('over_plan_limit');
  }
  await expireStaleUploads(app, q, org.id);
  const inflight = Number(
    (
      await q.query<{ n: number }>(
        `SELECT COALESCE(sum(length_bytes), 0)::bigint AS n FROM uploads WHERE organization_id = $1 AND state = 'receiving'`,
        [org.id],
      )
    ).rows[0]!.n,
  );
  const committed = org.storageUsedBytes + inflight;
  if (committed + lengthBytes > limits.storageBytes) {
    const available = Math.max(0, limits.storageBytes - committed);
    throw new AppError(
      403,
      'fullStorage',
      `Not enough storage for this video: ${toMB(lengthBytes)} MB needed, ${toMB(available)} MB of ${toMB(limits.storageBytes)} MB free` +
        (inflight ? ` (${toMB(inflight)} MB are held by uploads still in progress)` : ''),
      { storageInfo: { usedSize: toMB(org.storageUsedBytes), totalSize: toMB(limits.storageBytes), availableSize: toMB(available) } },
    );
  }
  // Phone verification and credits, in the contract's order (storage passed above).
  if (purpose === 'job') checkPreconditions({ ...org, storageUsedBytes: 0 }, user, MINIMUM_JOB_COST * app.config.creditsPerDollar);
}

/** An upload silent this long is given up: its bytes go and it stops holding storage. */
export const UPLOAD_EXPIRY_HOURS = 24;

const STALE = `state = 'receiving' AND updated_at < now() - make_interval(hours => ${UPLOAD_EXPIRY_HOURS}) AND (writer_until IS NULL OR writer_until < now())`;

/** Gives up uploads silent for a day (one organization's, or everyone's): bytes removed, storage hold released. */
async function expireStaleUploads(app: Deps, q: Queryable, organizationId?: string): Promise<number> {
  const { rows: stale } = await q.query<{ id: string }>(
    `UPDATE uploads SET state = 'failed', error_message = 'expired: no data for ${UPLOAD_EXPIRY_HOURS} hours', writer_token = NULL, writer_until = NULL, updated_at = now()
     WHERE ${STALE} AND ($1::text IS NULL OR organization_id = $1)
     RETURNING id`,
    [organizationId ?? null],
  );
  for (const { id } of stale) await removeParts(app, q, id);
  if (stale.length) app.log.info('abandoned uploads expired', { uploads: stale.map((u) => u.id) });
  return stale.length;
}

/** An ended upload's bytes: its part objects and their rows. */
async function removeParts(app: Pick<Deps, 'store'>, q: Queryable, uploadId: string): Promise<void> {
  await deletePrefix(app.store, partsPrefix(uploadId));
  await q.query('DELETE FROM upload_parts WHERE upload_id = $1', [uploadId]);
}

export async function createUpload(
  app: Deps,
  input: {
    org: Organization;
    user?: User;
    purpose: UploadPurpose;
    lengthBytes: number;
    fileName: string;
    title: string | null;
    contentType: string | null;
  },
): Promise<UploadRow> {
  if (!Number.isSafeInteger(input.lengthBytes) || input.lengthBytes <= 0)
    throw badRequest('Upload-Length must be a positive whole number of bytes');
  if (!(UPLOAD_PURPOSES as readonly string[]).includes(input.purpose))
    throw badRequest(`purpose must be one of ${UPLOAD_PURPOSES.join(', ')}`);
  const id = newId();
  // Checked and recorded under the organization's row lock: two uploads created at once must not
  // both be promised the same free space.
  await app.db.tx(async (c) => {
    await c.query(`SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE`, [input.org.id]);
    const org = await requireOrganization(c, input.org.id);
    await checkUploadFits(app, c, org, input.user, input.lengthBytes, input.purpose);
    await c.query(
      `INSERT INTO uploads (id, purpose, organization_id, user_id, length_bytes, file_name, title, content_type) VALUES ($1, $8, $2, $3, $4, $5, $6, $7)`,
      [
        id,
        input.org.id,
        input.user?.id ?? null,
        input.lengthBytes,
        input.fileName.slice(0, 200),
        input.title?.slice(0, 300) ?? null,
        input.contentType,
        input.purpose,
      ],
    );
  });
  return (await findUpload(app, input.org.id, id))!;
}

export async function findUpload(app: Pick<Deps, 'db'>, organizationId: string, id: string): Promise<UploadRow | undefined> {
  if (!isId(id)) return undefined;
  return app.db.one<UploadRow>(`SELECT ${COLUMNS} FROM uploads WHERE id = $1 AND organization_id = $2`, [id, organizationId]);
}

/** Which organization an upload belongs to, so the route can check the caller against it. */
export async function uploadOrganization(app: Pick<Deps, 'db'>, id: string): Promise<string | undefined> {
  if (!isId(id)) return undefined;
  return (await app.db.one<{ org: string }>('SELECT organization_id AS org FROM uploads WHERE id = $1', [id]))?.org;
}

const leaseSecs = (app: Pick<Deps, 'config'>) => app.config.uploadWriterLeaseMs / 1000;

/** Why a write at `offset` cannot go on, from the row as it stands; undefined when it can. */
function writeRefusal(upload: UploadRow, offset: number): AppError | undefined {
  if (upload.state !== 'receiving')
    return conflict(upload.state === 'completed' ? 'This upload is already complete' : `This upload failed: ${upload.errorMessage}`);
  if (offset !== upload.offsetBytes) return conflict(`Upload-Offset ${offset} does not match the upload's offset ${upload.offsetBytes}`);
  return undefined;
}

const TAKEN_OVER = 'Another request took over this upload';
const takenOver = () => conflict(TAKEN_OVER);

/**
 * The right to write one upload, held in its row (not in a process) so every coordinator sees it.
 * Renewed while held; `lost` turns true when the row no longer names this writer (its renewal came
 * too late and another request took over, or the upload was cancelled).
 */
class WriterLease {
  lost = false;
  private readonly listeners: Array<() => void> = [];
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly app: Deps,
    readonly uploadId: string,
    readonly token: string,
  ) {
    this.timer = setInterval(() => void this.renew(), Math.max(250, app.config.uploadWriterLeaseMs / 3));
    this.timer.unref();
  }

  /** Takes the lease when the upload is receiving, stands at `offset` and no live writer holds it. */
  static async take(app: Deps, upload: UploadRow, offset: number): Promise<WriterLease> {
    const token = newId();
    const res = await app.db.pool.query(
      `UPDATE uploads SET writer_token = $2, writer_until = now() + make_interval(secs => $3), updated_at = now()
       WHERE id = $1 AND state = 'receiving' AND offset_bytes = $4 AND (writer_until IS NULL OR writer_until < now())`,
      [upload.id, token, leaseSecs(app), offset],
    );
    if (res.rowCount) return new WriterLease(app, upload.id, token);
    const now = await findUpload(app, upload.organizationId, upload.id);
    throw (now && writeRefusal(now, offset)) ?? conflict('Another request is writing to this upload');
  }

  onLost(fn: () => void): void {
    this.listeners.push(fn);
  }

  private async renew(): Promise<void> {
    if (this.lost) return;
    const res = await this.app.db.pool
      .query(
        `UPDATE uploads SET writer_until = now() + make_interval(secs => $3) WHERE id = $1 AND writer_token = $2 AND state = 'receiving'`,
        [this.uploadId, this.token, leaseSecs(this.app)],
      )
      .catch((err) => {
        // A database hiccup is not a loss: the next renewal (or the accepting update) decides.
        this.app.log.warn('upload lease renewal failed', { uploadId: this.uploadId, err: String(err) });
        return undefined;
      });
    if (res && !res.rowCount) {
      this.lost = true;
      for (const fn of this.listeners) fn();
    }
  }

  /** Lets go of the lease if this writer still holds it. */
  async release(): Promise<void> {
    clearInterval(this.timer);
    await this.app.db.pool
      .query(`UPDATE uploads SET writer_token = NULL, writer_until = NULL WHERE id = $1 AND writer_token = $2`, [this.uploadId, this.token])
      .catch((err) =>
        this.app.log.warn('upload lease release failed; it expires on its own', { uploadId: this.uploadId, err: String(err) }),
      );
  }
}

/**
 * Appends a PATCH body at `offset` (which must be where the upload stands), keeping whatever
 * arrived even when the connection drops, so the client can resume from the new offset through
 * any coordinator. A PATCH at the full length with no body finishes an upload whose finisher died.
 */
export async function appendChunk(
  app: Deps,
  upload: UploadRow,
  offset: number,
  body: Readable,
  declaredLength?: number,
): Promise<UploadRow> {
  const refusal = writeRefusal(upload, offset);
  if (refusal) throw refusal;
  if (declaredLength !== undefined && offset + declaredLength > upload.lengthBytes)
    throw badRequest('The chunk goes past the declared Upload-Length');
  const lease = await WriterLease.take(app, upload, offset);
  try {
    const size = await receivePart(app, upload, offset, body, lease);
    const updated = { ...upload, offsetBytes: offset + size };
    return updated.offsetBytes === upload.lengthBytes ? await finishUpload(app, updated, lease) : updated;
  } finally {
    await lease.release();
  }
}

/** Streams the body into a part object and records it; returns the bytes accepted. */
async function receivePart(app: Deps, upload: UploadRow, offset: number, body: Readable, lease: WriterLease): Promise<number> {
  const key = partKey(upload.id, offset, lease.token);
  const limit = upload.lengthBytes - offset;
  const part = new PassThrough();
  let seen = 0;
  let refused: AppError | undefined;
  const onData = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > limit) return refuse(badRequest('The chunk goes past the declared Upload-Length'));
    if (!part.write(chunk)) body.pause();
  };
  const refuse = (err: AppError) => {
    if (refused) return;
    refused = err;
    body.off('data', onData);
    body.resume(); // the rest of the body is read and dropped, so the refusal can still be answered
    part.destroy(err);
  };
  part.on('drain', () => body.resume());
  body.on('data', onData);
  body.once('end', () => part.end());
  // A dropped connection ends the part with what arrived: the client resumes from there.
  body.once('close', () => {
    if (!part.writableEnded && !refused) {
      app.log.info('upload chunk interrupted', { uploadId: upload.id, bytes: seen });
      part.end();
    }
  });
  body.on('error', () => undefined); // 'close' follows
  // The connection may have closed while the lease was being taken.
  if (body.destroyed || body.readableEnded) part.end();
  lease.onLost(() => refuse(takenOver()));

  let size: number;
  try {
    size = (await app.store.put(key, part, { contentType: 'application/octet-stream' })).size;
  } catch (err) {
    await app.store.delete(key).catch(() => undefined);
    throw refused ?? err;
  }
  if (refused || size === 0) {
    await app.store.delete(key).catch(() => undefined);
    if (refused) throw refused;
    return 0;
  }
  // Only the writer that holds the lease at this offset moves the upload on: the row and the part's
  // row change together, or neither does and the object is dropped.
  const accepted = await app.db.tx(async (c) => {
    const res = await c.query(
      `UPDATE uploads SET offset_bytes = offset_bytes + $3, updated_at = now(), writer_until = now() + make_interval(secs => $5)
       WHERE id = $1 AND writer_token = $2 AND offset_bytes = $4 AND state = 'receiving'`,
      [upload.id, lease.token, size, offset, leaseSecs(app)],
    );
    if (!res.rowCount) return false;
    await c.query(`INSERT INTO upload_parts (upload_id, offset_bytes, size_bytes, object_key) VALUES ($1, $2, $3, $4)`, [
      upload.id,
      offset,
      size,
      key,
    ]);
    return true;
  });
  if (!accepted) {
    await app.store.delete(key).catch(() => undefined);
    throw takenOver();
  }
  return size;
}

/** The accepted parts, in order, into one local file the media tools can read. */
async function joinParts(app: Deps, upload: UploadRow, file: string): Promise<void> {
  const parts = await app.db.query<{ offset: number; size: number; key: string }>(
    `SELECT offset_bytes AS offset, size_bytes AS size, object_key AS key FROM upload_parts WHERE upload_id = $1 ORDER BY offset_bytes`,
    [upload.id],
  );
  let at = 0;
  for (const p of parts) if (Number(p.offset) === at) at += Number(p.size);
  if (at !== upload.lengthBytes) throw new AppError(500, 'upload_lost', 'The bytes received so far are missing; start the upload again');
  const out = createWriteStream(file);
  for (const p of parts) {
    const { stream } = await app.store.get(p.key);
    await pipeline(stream, out, { end: false });
  }
  out.end();
  await finished(out);
  if ((await stat(file)).size !== upload.lengthBytes)
    throw new AppError(500, 'upload_lost', 'The bytes received so far are incomplete; start the upload again');
}

/** Marks the upload completed if `lease` still holds it; the compare-and-swap that makes finishing happen once. */
async function completeUpload(q: Queryable, upload: UploadRow, lease: WriterLease, fileId: string, jobId: string | null): Promise<void> {
  const res = await q.query(
    `UPDATE uploads SET state = 'completed', file_id = $3, job_id = $4, writer_token = NULL, writer_until = NULL, updated_at = now()
     WHERE id = $1 AND writer_token = $2 AND state = 'receiving'`,
    [upload.id, lease.token, fileId, jobId],
  );
  if (!res.rowCount) throw takenOver();
}

/** The last byte arrived: into the organization's storage, then a job. Any refusal fails the upload. */
async function finishUpload(app: Deps, upload: UploadRow, lease: WriterLease): Promise<UploadRow> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'upload-'));
  const file = path.join(work, 'upload');
  let fileId: string | null = null;
  let ended = false;
  try {
    await joinParts(app, upload, file);
    if (upload.purpose === 'watermark') {
      const image = await storeWatermarkImage(
        app,
        upload.organizationId,
        await readFile(file),
        upload.fileName,
        'Watermark uploaded in the studio',
      );
      fileId = image.id;
      await completeUpload(app.db.pool, upload, lease, image.id, null);
      ended = true;
      return { ...upload, state: 'completed', fileId: image.id };
    }
    const stored = await storeFile(app, {
      organizationId: upload.organizationId,
      name: upload.fileName,
      source: { path: file },
      type: 'video',
      contentType: upload.contentType?.startsWith('video/') ? upload.contentType : undefined,
      tags: ['upload'],
    });
    fileId = stored.id;
    if (!(Number(stored.lengthSec) > 0)) throw badRequest(`${upload.fileName} is not a video that can be read`);
    const organization = await requireOrganization(app.db.pool, upload.organizationId);
    const user = upload.userId ? await getUser(app.db.pool, upload.userId) : undefined;
    const jobId = await createJob(app.db, app.queue, {
      org: organization,
      user,
      job: {
        title: upload.title ?? upload.fileName,
        youtubeVideoId: null,
        fileUrl: null,
        webhook: null,
        options: {},
      },
      creditsPerDollar: app.config.creditsPerDollar,
      source: 'WEB_APP',
      stored: { objectKey: stored.objectKey, fileId: stored.id, consume: true },
      alsoInTransaction: (c, id) => completeUpload(c, upload, lease, stored.id, id),
    });
    ended = true;
    app.log.info('studio upload became a job', {
      uploadId: upload.id,
      jobId,
      organizationId: upload.organizationId,
      bytes: upload.lengthBytes,
    });
    return { ...upload, state: 'completed', fileId: stored.id, jobId };
  } catch (err) {
    if (fileId) await deleteFile(app, upload.organizationId, fileId).catch(() => undefined);
    // Another request finished or cancelled it: nothing of this attempt stays, and the upload's
    // state is theirs to tell.
    if (lease.lost || (err instanceof AppError && err.message === TAKEN_OVER)) throw takenOver();
    const refusal = appErrorOf(err);
    const message = refusal ? refusal.message : 'The upload could not be stored';
    if (!refusal) app.log.error('finishing an upload failed', { uploadId: upload.id, err });
    const res = await app.db.pool.query(
      `UPDATE uploads SET state = 'failed', error_message = $3, writer_token = NULL, writer_until = NULL, updated_at = now()
       WHERE id = $1 AND writer_token = $2 AND state = 'receiving'`,
      [upload.id, lease.token, message],
    );
    ended = !!res.rowCount;
    throw err;
  } finally {
    await rm(work, { recursive: true, force: true });
    if (ended)
      await removeParts(app, app.db.pool, upload.id).catch((err) =>
        app.log.warn("could not remove an upload's parts; the sweep will", { uploadId: upload.id, err }),
      );
  }
}

/** tus termination: the client gave up; its bytes go and its storage hold ends. */
export async function cancelUpload(app: Deps, upload: UploadRow): Promise<void> {
  // A writer still streaming loses its lease with this and drops its part.
  const res = await app.db.pool.query(
    `UPDATE uploads SET state = 'failed', error_message = 'cancelled', writer_token = NULL, writer_until = NULL, updated_at = now()
     WHERE id = $1 AND state = 'receiving'`,
    [upload.id],
  );
  if (!res.rowCount) throw conflict('Only an upload in progress can be cancelled');
  await removeParts(app, app.db.pool, upload.id);
}

/** Part objects younger than this may belong to a write whose row is about to be updated. */
const ORPHAN_PART_MIN_AGE_MS = 3600_000;

/**
 * One pass of the scheduled upload sweep: uploads whose bytes all arrived but whose finisher died
 * are finished; uploads silent for a day are given up (bytes removed, storage hold released); part
 * objects no receiving upload counts (a writer that lost its lease, a crash between storing a part
 * and recording it) are removed.
 */
export async function sweepUploads(app: Deps, now = new Date()): Promise<{ finished: number; expired: number; orphanParts: number }> {
  let finished = 0;
  const stuck = await app.db.query<UploadRow>(
    `SELECT ${COLUMNS} FROM uploads WHERE state = 'receiving' AND offset_bytes = length_bytes AND (writer_until IS NULL OR writer_until < now())`,
  );
  for (const upload of stuck) {
    const lease = await WriterLease.take(app, upload, upload.lengthBytes).catch(() => undefined);
    if (!lease) continue;
    try {
      await finishUpload(app, upload, lease);
      finished++;
    } catch (err) {
      app.log.warn('sweep: an upload could not be finished', { uploadId: upload.id, err: String(err) });
    } finally {
      await lease.release();
    }
  }
  const expired = await expireStaleUploads(app, app.db.pool);
  let orphanParts = 0;
  for await (const obj of app.store.list('uploads/')) {
    if (obj.lastModified.getTime() > now.getTime() - ORPHAN_PART_MIN_AGE_MS) continue;
    const counted = await app.db.one<{ n: number }>(
      `SELECT 1 AS n FROM upload_parts p JOIN uploads u ON u.id = p.upload_id WHERE p.object_key = $1 AND u.state = 'receiving'`,
      [obj.key],
    );
    if (counted) continue;
    await app.store.delete(obj.key);
    orphanParts++;
  }
  if (finished || expired || orphanParts) app.log.info('upload sweep', { finished, expired, orphanParts });
  return { finished, expired, orphanParts };
}

export const UPLOAD_SWEEP_QUEUE = 'upload-sweep';
const EVERY_TEN_MINUTES = '*/10 * * * *';

/** pg-boss cron: every coordinator registers it, one of them runs each sweep. */
export async function startUploadSweepSchedule(
  app: Pick<Coordinator, 'boss' | 'db' | 'store' | 'log' | 'queue' | 'config'>,
): Promise<void> {
  await app.boss.createQueue(UPLOAD_SWEEP_QUEUE);
  await app.boss.schedule(UPLOAD_SWEEP_QUEUE, EVERY_TEN_MINUTES, {}, { tz: 'UTC' });
  await app.boss.work(UPLOAD_SWEEP_QUEUE, { pollingIntervalSeconds: 5 }, async () => {
    await sweepUploads(app);
  });
}
