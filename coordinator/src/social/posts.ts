import type { Queryable } from '../db/db.js';
import { isId } from '../ids.js';
import type { Network, PostType } from './networks.js';
import type { JobOutcome, PlatformResult } from './provider.js';
import type { PublishMode, PublishRequest } from './publish-input.js';

/** pending_approval: held because approveApiPosts is set and an API key created or re-queued it. */
export const POST_STATUSES = ['draft', 'pending_approval', 'scheduled', 'published', 'failed', 'cancelled'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

/** Statuses whose provider job is still pending and can be moved or cancelled. */
export const LIVE_STATUSES: readonly PostStatus[] = ['draft', 'pending_approval', 'scheduled'];
/** Statuses that hold a place in the posting queue (next-slot). */
export const QUEUED_STATUSES: readonly PostStatus[] = ['scheduled', 'pending_approval'];

export interface SocialPost {
  id: string;
  organizationId: string;
  status: PostStatus;
  postType: PostType;
  publishMode: PublishMode;
  title: string | null;
  caption: string;
  platforms: Network[];
  media: PublishRequest['media'];
  platformFields: Record<string, string>;
  timezone: string;
  scheduledFor: Date | null;
  provider: string;
  providerJobId: string | null;
  providerPostId: string | null;
  previewUrl: string | null;
  thumbnailUrl: string | null;
  providerError: string | null;
  providerPlatforms: PlatformResult[];
  providerLastEvent: string | null;
  isPublishedOnPlatform: boolean;
  createdAt: Date;
}

const COLUMNS = `id, organization_id AS "organizationId", status, post_type AS "postType", publish_mode AS "publishMode", title, caption,
  platforms, media, platform_fields AS "platformFields", timezone, scheduled_for AS "scheduledFor", provider,
  provider_job_id AS "providerJobId", provider_post_id AS "providerPostId", preview_url AS "previewUrl", thumbnail_url AS "thumbnailUrl",
  provider_error AS "providerError", provider_platforms AS "providerPlatforms", provider_last_event AS "providerLastEvent",
  is_published_on_platform AS "isPublishedOnPlatform", created_at AS "createdAt"`;

export async function insertPost(
  db: Queryable,
  p: {
    id: string;
    organizationId: string;
    status: PostStatus;
    request: PublishRequest;
    scheduledFor: Date | null;
    provider: string;
    previewUrl: string | null;
    thumbnailUrl: string | null;
    createdByApiKey: boolean;
  },
): Promise<SocialPost> {
  const r = p.request;
  const res = await db.query<SocialPost>(
    `INSERT INTO social_posts (id, organization_id, status, post_type, publish_mode, title, caption, platforms, media, platform_fields,
       timezone, scheduled_for, provider, preview_url, thumbnail_url, created_by_api_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING ${COLUMNS}`,
    [
      p.id,
      p.organizationId,
      p.status,
      r.postType,
      r.mode,
      r.title,
      r.caption,
      r.platforms,
      JSON.stringify(r.media),
      JSON.stringify(r.platformFields),
      r.timeZone,
      p.scheduledFor,
      p.provider,
      p.previewUrl,
      p.thumbnailUrl,
      p.createdByApiKey,
    ],
  );
  return res.rows[0];
}

export interface PostPatch {
  status?: PostStatus;
  scheduledFor?: Date | null;
  caption?: string;
  providerJobId?: string | null;
  providerPostId?: string | null;
  providerError?: string | null;
  providerPlatforms?: PlatformResult[];
  providerLastEvent?: string | null;
  isPublishedOnPlatform?: boolean;
}

const PATCH_COLUMNS: Record<keyof PostPatch, string> = {
  status: 'status',
  scheduledFor: 'scheduled_for',
  caption: 'caption',
  providerJobId: 'provider_job_id',
  providerPostId: 'provider_post_id',
  providerError: 'provider_error',
  providerPlatforms: 'provider_platforms',
  providerLastEvent: 'provider_last_event',
  isPublishedOnPlatform: 'is_published_on_platform',
};

export async function updatePost(db: Queryable, organizationId: string, id: string, patch: PostPatch): Promise<SocialPost> {
  const sets: string[] = [];
  const values: unknown[] = [organizationId, id];
  for (const [key, column] of Object.entries(PATCH_COLUMNS) as Array<[keyof PostPatch, string]>) {
    if (patch[key] === undefined) continue;
    values.push(key === 'providerPlatforms' ? JSON.stringify(patch[key]) : patch[key]);
    sets.push(`${column} = $${values.length}`);
  }
  const res = await db.query<SocialPost>(
    `UPDATE social_posts SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE organization_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    values,
  );
  return res.rows[0];
}

/** By our id or the provider's job id, only within the organization. */
export async function findPost(
  db: Queryable,
  organizationId: string,
  ref: { postId?: string; jobId?: string },
): Promise<SocialPost | undefined> {
  // Ids that cannot have been stored (not an id we issue, or text Postgres refuses) name no post: 404.
  if (ref.postId ? !isId(ref.postId) : ref.jobId?.includes('\u0000')) return undefined;
  const res = ref.postId
    ? await db.query<SocialPost>(`SELECT ${COLUMNS} FROM social_posts WHERE organization_id = $1 AND id = $2`, [organizationId, ref.postId])
    : await db.query<SocialPost>(
        `SELECT ${COLUMNS} FROM social_posts WHERE organization_id = $1 AND provider_job_id = $2 ORDER BY created_at DESC LIMIT 1`,
        [organizationId, ref.jobId],
      );
  return res.rows[0];
}

export async function listPosts(db: Queryable, organizationId: string, limit: number, offset: number): Promise<SocialPost[]> {
  const res = await db.query<SocialPost>(
    `SELECT ${COLUMNS} FROM social_posts WHERE organization_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    [organizationId, limit, offset],
  );
  return res.rows;
}

/** Instants of queued posts from `from` on: what fills next-slot's slots. */
export async function queuedInstants(db: Queryable, organizationId: string, from: Date): Promise<number[]> {
  const res = await db.query<{ at: Date }>(
    `SELECT scheduled_for AS at FROM social_posts
      WHERE organization_id = $1 AND status = ANY($2) AND scheduled_for >= $3`,
    [organizationId, QUEUED_STATUSES, from],
  );
  return res.rows.map((r) => r.at.getTime());
}

/** Scheduled posts whose time has passed: the provider may have published them since. */
export async function dueScheduled(db: Queryable, organizationId: string, limit: number): Promise<SocialPost[]> {
  const res = await db.query<SocialPost>(
    `SELECT ${COLUMNS} FROM social_posts
      WHERE organization_id = $1 AND status = 'scheduled' AND provider_job_id IS NOT NULL AND scheduled_for <= now()
      ORDER BY scheduled_for LIMIT $2`,
    [organizationId, limit],
  );
  return res.rows;
}

/** A provider's news about a job, written only while the post still waits for it. */
export async function applyOutcome(db: Queryable, organizationId: string, o: JobOutcome): Promise<void> {
  const published = o.state === 'published';
  await db.query(
    `UPDATE social_posts SET status = $3, is_published_on_platform = $4, provider_last_event = $5, provider_error = $6,
       provider_platforms = COALESCE($7::jsonb, provider_platforms), updated_at = now()
     WHERE organization_id = $1 AND provider_job_id = $2 AND status = 'scheduled'`,
    [
      organizationId,
      o.providerJobId,
      o.state,
      published,
      published ? 'post.published' : 'post.failed',
      o.error,
      o.platforms ? JSON.stringify(o.platforms) : null,
    ],
  );
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Contract 2.12. */
export function postView(p: SocialPost) {
  return {
    id: p.id,
    status: p.status,
    title: p.title,
    caption: p.caption,
    platforms: p.platforms,
    createdAt: iso(p.createdAt),
    scheduledFor: iso(p.scheduledFor),
    providerJobId: p.providerJobId,
    previewUrl: p.previewUrl,
    thumbnailUrl: p.thumbnailUrl,
    providerError: p.providerError,
    providerPlatforms: p.providerPlatforms,
    providerLastEvent: p.providerLastEvent,
    isPublishedOnPlatform: p.isPublishedOnPlatform,
  };
}

export const shortView = (p: SocialPost) => ({ id: p.id, status: p.status, scheduledFor: iso(p.scheduledFor) });
