// The tus 1.0 wire for studio uploads (core protocol + creation + termination): small enough to
// serve directly, and it reads raw bodies, so it runs before the JSON body reader.
import type Koa from 'koa';
import type { Coordinator } from '../context.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { answerReplay, type ApiRequestContext, type ApiState, type IdempotencyGate } from './http.js';
import { authenticateAndCharge, principalOf, requireOrg } from './auth-context.js';
import { FILES_ORG_MESSAGES } from './uploads.js';
import { principalUser } from '../tenancy/auth.js';
import { requireOrganization } from '../tenancy/tenancy.js';
import { PLAN_LIMITS } from '../tenancy/plans.js';
import {
  appendChunk,
  cancelUpload,
  createUpload,
  findUpload,
  uploadOrganization,
  type UploadPurpose,
  type UploadRow,
} from '../uploads/uploads.js';

export const TUS_PATH = '/api/uploads/tus';
const TUS_VERSION = '1.0.0';
const MAX_SIZE = Math.max(...Object.values(PLAN_LIMITS).map((l) => l.maxDownloadBytes));

/** `Upload-Metadata: key base64,key2 base64` */
export function parseMetadata(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (header ?? '').split(',')) {
    const [key, value] = pair.trim().split(' ');
    if (key) out[key] = value ? Buffer.from(value, 'base64').toString('utf8') : '';
  }
  return out;
}

function uploadView(u: UploadRow) {
  return {
    id: u.id,
    purpose: u.purpose,
    state: u.state,
    offset: u.offsetBytes,
    length: u.lengthBytes,
    fileName: u.fileName,
    jobId: u.jobId,
    fileId: u.fileId,
    message: u.errorMessage,
  };
}

function nonNegativeInt(raw: string | undefined, name: string): number {
  const n = raw === undefined || raw.trim() === '' ? NaN : Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw badRequest(`${name} must be a non-negative whole number`);
  return n;
}

/** `idempotency`: where an Idempotency-Key on a creation (POST) is claimed and replayed. */
export function tusRoutes(app: Coordinator, idempotency?: IdempotencyGate): Koa.Middleware<ApiState> {
  // The caller must be able to act for the upload's organization; anyone else finds nothing.
  async function ownUpload(ctx: ApiRequestContext, id: string): Promise<UploadRow> {
    const orgId = await uploadOrganization(app, id);
    if (!orgId) throw notFound('Upload not found');
    const principal = await principalOf(app, ctx);
    const allowed = await requireOrg(app, ctx, orgId, FILES_ORG_MESSAGES).then(
      () => true,
      (err) => {
        if (err instanceof AppError && err.status === 403) return false;
        throw err;
      },
    );
    if (!allowed || (principal.kind === 'apiKey' && principal.organizationId !== orgId)) throw notFound('Upload not found');
    return (await findUpload(app, orgId, id))!;
  }

  return async (ctx, next) => {
    if (ctx.path !== TUS_PATH && !ctx.path.startsWith(TUS_PATH + '/')) return next();
    ctx.set('Tus-Resumable', TUS_VERSION);
    ctx.set('Cache-Control', 'no-store');
    const id = ctx.path.slice(TUS_PATH.length + 1);
    if (id.includes('/')) throw notFound('Upload not found');

    if (ctx.method === 'OPTIONS') {
      ctx.set('Tus-Version', TUS_VERSION);
      ctx.set('Tus-Extension', 'creation,termination');
      ctx.set('Tus-Max-Size', String(MAX_SIZE));
      ctx.status = 204;
      return;
    }
    // Credentials and the rate limit come before any tus header is checked: a request refused for
    // its headers still counts against the caller's allowance.
    await authenticateAndCharge(app, ctx);
    const meta = parseMetadata(ctx.get('Upload-Metadata'));
    const creating = !id && ctx.method === 'POST';
    const orgId = creating ? await requireOrg(app, ctx, meta.organizationId ?? ctx.query.organizationId, FILES_ORG_MESSAGES) : undefined;
    const upload = id ? await ownUpload(ctx, id) : undefined;
    if (ctx.method !== 'GET' && ctx.get('Tus-Resumable') !== TUS_VERSION) {
      ctx.set('Tus-Version', TUS_VERSION);
      throw new AppError(412, 'Precondition Failed', `Tus-Resumable ${TUS_VERSION} is required`);
    }

    if (creating) {
      if (ctx.get('Upload-Defer-Length')) throw badRequest('Upload-Defer-Length is not supported; send Upload-Length');
      const length = nonNegativeInt(ctx.get('Upload-Length') || undefined, 'Upload-Length');
      // A creation is the same request when its length and metadata are (the body is empty).
      const once = await idempotency?.begin(ctx, () => Promise.resolve(orgId!), {
        uploadLength: length,
        uploadMetadata: ctx.get('Upload-Metadata'),
      });
      if (once?.replay) {
        answerReplay(ctx, once.replay);
        return;
      }
      let location: string;
      try {
        const org = await requireOrganization(app.db.pool, orgId!);
        const user = await principalUser(app.db, await principalOf(app, ctx));
        const upload = await createUpload(app, {
          org,
          user,
          lengthBytes: length,
          purpose: (meta.purpose || 'job') as UploadPurpose,
          fileName: meta.filename || meta.name || 'video',
          title: meta.title || null,
          contentType: meta.filetype || null,
        });
        location = `${TUS_PATH}/${upload.id}`;
        ctx.status = 201;
        ctx.set('Location', location);
        ctx.body = uploadView(upload);
      } catch (err) {
        await once?.fail(err);
        throw err;
      }
      await once?.settle(201, ctx.body, { Location: location });
      return;
    }
    if (!upload) throw new AppError(405, 'Method Not Allowed', `${ctx.method} is not supported on ${TUS_PATH}`);

    switch (ctx.method) {
      case 'HEAD':
        ctx.set('Upload-Offset', String(upload.offsetBytes));
        ctx.set('Upload-Length', String(upload.lengthBytes));
        ctx.status = upload.state === 'failed' ? 410 : 200;
        return;
      case 'GET':
        ctx.body = uploadView(upload);
        return;
      case 'PATCH': {
        if (!ctx.is('application/offset+octet-stream'))
          throw new AppError(415, 'Unsupported Media Type', 'PATCH needs Content-Type: application/offset+octet-stream');
        const offset = nonNegativeInt(ctx.get('Upload-Offset') || undefined, 'Upload-Offset');
        const declared = ctx.get('Content-Length') ? nonNegativeInt(ctx.get('Content-Length'), 'Content-Length') : undefined;
        const updated = await appendChunk(app, upload, offset, ctx.req, declared);
        ctx.set('Upload-Offset', String(updated.offsetBytes));
        if (updated.jobId) ctx.set('Upload-Job-Id', updated.jobId);
        if (updated.state === 'completed' && updated.fileId) ctx.set('Upload-File-Id', updated.fileId);
        ctx.status = 204;
        return;
      }
      case 'DELETE':
        await cancelUpload(app, upload);
        ctx.status = 204;
        return;
      default:
        throw new AppError(405, 'Method Not Allowed', `${ctx.method} is not supported on an upload`);
    }
  };
}
