import { z } from 'zod';
import { badRequest } from '../errors.js';
import {
  NETWORKS,
  NETWORK_MAX_PHOTOS,
  NETWORK_POST_TYPES,
  PLATFORM_FIELDS,
  POST_TYPES,
  fieldItems,
  type FieldKind,
  type Network,
  type PostType,
} from './networks.js';
import { canonicalTimeZone, parseDateTime } from './zoned-time.js';
import type { SocialSettings } from './settings.js';

export const PUBLISH_MODES = ['draft', 'publish_now', 'schedule', 'next_slot'] as const;
export type PublishMode = (typeof PUBLISH_MODES)[number];

const MAX_CAPTION = 20_000;
const MAX_FIELD = 5_000;
/** Clock skew tolerated when a schedule time is "now". */
export const PAST_TOLERANCE_MS = 60_000;

const optionalString = (name: string) => z.string({ error: `${name} must be a string` }).nullish();

/** Shapes only; the rules between fields are in validatePublish, after authentication. */
export const publishSchema = z
  .object({
    organizationId: z.string().nullish(),
    postType: z.enum(POST_TYPES, {
      error: (i) =>
        i.input === undefined
          ? `postType is required: one of ${POST_TYPES.join(', ')}`
          : `postType must be one of ${POST_TYPES.join(', ')}`,
    }),
    caption: z.string({ error: 'caption is required (a string)' }).max(MAX_CAPTION, `caption is at most ${MAX_CAPTION} characters`),
    platforms: z
      .array(z.string({ error: 'platforms must be an array of network keys' }), { error: 'platforms must be an array of network keys' })
      .nullish(),
    publishMode: z.enum(PUBLISH_MODES, { error: `publishMode must be one of ${PUBLISH_MODES.join(', ')}` }).nullish(),
    scheduledAt: optionalString('scheduledAt'),
    timezone: optionalString('timezone'),
    videoUrl: optionalString('videoUrl'),
    /** Beyond the contract: a video in the organization's storage (a render), posted by its own signed URL. */
    fileId: optionalString('fileId'),
    photoUrls: z
      .array(z.string({ error: 'photoUrls must be an array of URL strings' }), { error: 'photoUrls must be an array of URL strings' })
      .nullish(),
    documentUrl: optionalString('documentUrl'),
    platformFields: z
      .record(z.string(), z.string({ error: 'platformFields values must be strings (booleans as "true" or "false")' }), {
        error: 'platformFields must be an object of string values',
      })
      .nullish(),
  })
  .meta({
    example: {
      postType: 'video',
      caption: 'Three tips in 30 seconds #shorts',
      platforms: ['youtube', 'tiktok'],
      publishMode: 'schedule',
      scheduledAt: '2026-12-01T17:00:00',
      timezone: 'Europe/Berlin',
      fileId: 'a7e2d4c0-9b1f-4e3a-8c5d-2f6e7a8b9c0d',
    },
  });
export type PublishBody = z.infer<typeof publishSchema>;

export interface PublishRequest {
  postType: PostType;
  caption: string;
  title: string | null;
  platforms: Network[];
  mode: PublishMode;
  /** Set for draft and schedule. */
  scheduledAt: number | null;
  timeZone: string;
  media: { videoUrl?: string; photoUrls?: string[]; documentUrl?: string };
  platformFields: Record<string, string>;
}

/** Contract 4.5 publish rules; each failure is a 400 naming the field and the fix. */
export function validatePublish(body: PublishBody, settings: SocialSettings, now: number, ownVideoUrl?: string): PublishRequest {
  const postType = body.postType;
  const caption = body.caption;
  if (postType === 'text' && caption.trim() === '') throw badRequest('caption must not be empty for a text post');

  const timeZone = body.timezone ? canonicalTimeZone(body.timezone) : settings.defaultTimezone;
  if (!timeZone) throw badRequest(`timezone "${body.timezone}" is not an IANA time zone (for example America/New_York)`);

  const platforms = resolvePlatforms(body.platforms, settings.defaultPlatforms);
  const media = ownVideoUrl !== undefined ? ownMedia(body, postType, ownVideoUrl) : checkMedia(body, postType);
  for (const network of platforms) {
    if (!NETWORK_POST_TYPES[network].includes(postType)) {
      throw badRequest(`${network} does not accept ${postType} posts (it takes ${NETWORK_POST_TYPES[network].join(', ')})`);
    }
    const maxPhotos = NETWORK_MAX_PHOTOS[network];
    if (media.photoUrls && maxPhotos && media.photoUrls.length > maxPhotos) {
      throw badRequest(`${network} takes at most ${maxPhotos} photos per post; ${media.photoUrls.length} given`);
    }
  }
  const platformFields = checkPlatformFields(body.platformFields ?? {}, platforms, postType, media);

  const mode: PublishMode = body.publishMode ?? (body.scheduledAt ? 'schedule' : 'publish_now');
  let scheduledAt: number | null = null;
  if (mode === 'draft' || mode === 'schedule') {
    if (!body.scheduledAt || body.scheduledAt.trim() === '') throw badRequest(`scheduledAt is required for publishMode ${mode}`);
    scheduledAt = parseDateTime(body.scheduledAt, timeZone) ?? null;
    if (scheduledAt === null)
      throw badRequest('scheduledAt must be an ISO 8601 date-time such as 2026-07-08T12:30:00Z (without an offset it is read in timezone)');
    if (mode === 'schedule' && scheduledAt < now - PAST_TOLERANCE_MS)
      throw badRequest('scheduledAt must be in the future for publishMode schedule');
  } else if (body.scheduledAt) {
    throw badRequest(`scheduledAt applies only to publishMode draft or schedule, not ${mode}`);
  }

  const title = platformFields.youtubeTitle ?? platformFields.facebookTitle ?? platformFields.linkedinDocumentTitle ?? null;
  return { postType, caption, title, platforms, mode, scheduledAt, timeZone, media, platformFields };
}

function resolvePlatforms(given: string[] | null | undefined, defaults: Network[]): Network[] {
  if (given === null || given === undefined) {
    if (!defaults.length) throw badRequest('platforms is required: the organization has no defaultPlatforms in its social settings');
    return [...defaults];
  }
  if (!given.length) throw badRequest('platforms must name at least one network');
  for (const p of given) {
    if (!(NETWORKS as readonly string[]).includes(p)) throw badRequest(`"${p}" is not a network; use ${NETWORKS.join(', ')}`);
  }
  return [...new Set(given)] as Network[];
}

function checkUrl(name: string, value: string, httpsOnly: boolean): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`${name} must be an absolute URL`);
  }
  const allowed = httpsOnly ? ['https:'] : ['https:', 'http:'];
  if (!allowed.includes(url.protocol)) throw badRequest(`${name} must be an ${httpsOnly ? 'HTTPS' : 'http or https'} URL`);
  if (url.username || url.password) throw badRequest(`${name} must not carry credentials`);
  return url.toString();
}

/** A stored file stands in for videoUrl: its URL is the coordinator's own, so no scheme or host rule applies. */
function ownMedia(body: PublishBody, postType: PostType, url: string): PublishRequest['media'] {
  if (postType !== 'video') throw badRequest(`fileId applies to a video post, not a ${postType} post`);
  if (body.videoUrl || body.photoUrls || body.documentUrl) throw badRequest('Send fileId or videoUrl, not both');
  return { videoUrl: url };
}

/** Exactly the media field the post type names, and none of the others. */
function checkMedia(body: PublishBody, postType: PostType): PublishRequest['media'] {
  const present = {
    videoUrl: body.videoUrl != null && body.videoUrl !== '',
    photoUrls: body.photoUrls != null,
    documentUrl: body.documentUrl != null && body.documentUrl !== '',
  };
  const wanted = { video: 'videoUrl', photo: 'photoUrls', document: 'documentUrl', text: undefined }[postType];
  for (const [field, given] of Object.entries(present)) {
    if (given && field !== wanted) throw badRequest(`${field} does not apply to a ${postType} post`);
  }
  switch (postType) {
    case 'video':
      if (!present.videoUrl) throw badRequest('videoUrl is required for a video post');
      return { videoUrl: checkUrl('videoUrl', body.videoUrl!, true) };
    case 'photo': {
      const urls = body.photoUrls ?? [];
      if (urls.length < 1 || urls.length > 20) throw badRequest('photoUrls must hold 1 to 20 URLs for a photo post');
      return { photoUrls: urls.map((u, i) => checkUrl(`photoUrls[${i}]`, u, false)) };
    }
    case 'document':
      if (!present.documentUrl) throw badRequest('documentUrl is required for a document post');
      return { documentUrl: checkUrl('documentUrl', body.documentUrl!, false) };
    case 'text':
      return {};
  }
}

function checkValue(key: string, value: string, kind: FieldKind): string {
  if (value.length > MAX_FIELD) throw badRequest(`platformFields.${key} is at most ${MAX_FIELD} characters`);
  if (kind === 'boolean') {
    if (value !== 'true' && value !== 'false') throw badRequest(`platformFields.${key} must be "true" or "false"`);
  } else if (kind === 'integer') {
    if (!/^\d+$/.test(value)) throw badRequest(`platformFields.${key} must be a non-negative integer written as a string`);
  } else if (kind === 'list' || kind === 'lines') {
    if (value.trim().startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        parsed = undefined;
      }
      if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === 'string')) {
        throw badRequest(
          `platformFields.${key} must be a JSON array of strings or a ${kind === 'list' ? 'comma-separated list' : 'list of lines'}`,
        );
      }
    }
    if (!fieldItems(value, kind).length) throw badRequest(`platformFields.${key} must not be empty`);
  } else if (typeof kind === 'object') {
    const match = kind.oneOf.find((o) => o.toLowerCase() === value.toLowerCase());
    if (!match) throw badRequest(`platformFields.${key} must be one of ${kind.oneOf.join(', ')}`);
    return match;
  }
  return value;
}

function checkPlatformFields(
  fields: Record<string, string>,
  platforms: Network[],
  postType: PostType,
  media: PublishRequest['media'],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, raw] of Object.entries(fields)) {
    const spec = PLATFORM_FIELDS[key];
    if (!spec) throw badRequest(`platformFields.${key} is not an accepted key`);
    if (!platforms.includes(spec.network))
      throw badRequest(`platformFields.${key} is for ${spec.network}, which is not among the platforms`);
    out[key] = checkValue(key, raw, spec.kind);
  }
  const only = (key: string, type: PostType) => {
    if (out[key] !== undefined && postType !== type) throw badRequest(`platformFields.${key} applies only to ${type} posts`);
  };
  only('xPollOptions', 'text');
  only('tiktokPhotoCoverIndex', 'photo');
  only('tiktokVideoCoverTimestampMs', 'video');
  only('instagramThumbOffset', 'video');
  only('linkedinDocumentTitle', 'document');
  if (out.youtubeTitle !== undefined && out.youtubeTitle.length > 100)
    throw badRequest('platformFields.youtubeTitle is at most 100 characters');
  if (out.xPollOptions !== undefined) {
    const options = fieldItems(out.xPollOptions);
    if (options.length < 2 || options.length > 4) throw badRequest('platformFields.xPollOptions must hold 2 to 4 options');
    if (options.some((o) => o.length > 25)) throw badRequest('platformFields.xPollOptions options are at most 25 characters each');
  }
  if (out.xPollDurationMinutes !== undefined) {
    if (out.xPollOptions === undefined) throw badRequest('platformFields.xPollDurationMinutes needs xPollOptions');
    const minutes = Number(out.xPollDurationMinutes);
    if (minutes < 5 || minutes > 10_080) throw badRequest('platformFields.xPollDurationMinutes must be from 5 to 10080 (7 days)');
  }
  if (out.tiktokPhotoCoverIndex !== undefined && Number(out.tiktokPhotoCoverIndex) >= (media.photoUrls?.length ?? 0)) {
    throw badRequest('platformFields.tiktokPhotoCoverIndex must point at one of the photoUrls (counted from 0)');
  }
  return out;
}

export const editSchema = z.object({
  organizationId: z.string().nullish(),
  postId: optionalString('postId'),
  jobId: optionalString('jobId'),
  mode: z.enum(['draft', 'schedule'], { error: 'mode must be draft or schedule' }).nullish(),
  scheduledAt: optionalString('scheduledAt'),
  caption: z.string({ error: 'caption must be a string' }).max(MAX_CAPTION, `caption is at most ${MAX_CAPTION} characters`).nullish(),
});
export type EditBody = z.infer<typeof editSchema>;

export const removeSchema = z.object({
  organizationId: z.string().nullish(),
  postId: optionalString('postId'),
  jobId: optionalString('jobId'),
});

/** postId or jobId names the post; one is required. */
export function postRef(body: { postId?: string | null; jobId?: string | null }): { postId?: string; jobId?: string } {
  const postId = body.postId?.trim() || undefined;
  const jobId = body.jobId?.trim() || undefined;
  if (!postId && !jobId) throw badRequest('postId or jobId is required');
  return { postId, jobId };
}
