import type { Db, Queryable } from '../db/db.js';
import { newId } from '../ids.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import type { Organization } from '../tenancy/tenancy.js';
import type { Logger } from '@shorts/common/logger';
import type { Network } from './networks.js';
import { ProviderError, ProviderUnsupportedError, type ProviderPost, type SocialProvider, type SubmitResult } from './provider.js';
import { ensureProfile, findProfile } from './profiles.js';
import { isLocalProvider } from './local-provider.js';
import { assertPostingEnabled } from './access.js';
import { getSettings } from './settings.js';
import { nextFreeSlots } from './slots.js';
import { canonicalTimeZone, isoInZone } from './zoned-time.js';
import { planEdit } from './edit-plan.js';
import { validatePublish, type EditBody, type PublishBody, type PublishRequest } from './publish-input.js';
import {
  LIVE_STATUSES,
  applyOutcome,
  dueScheduled,
  findPost,
  insertPost,
  listPosts,
  queuedInstants,
  updatePost,
  type PostPatch,
  type PostStatus,
  type SocialPost,
} from './posts.js';

const SLOT_HORIZON_DAYS = 400;
/** Due posts asked about per list call; the rest on the next one. */
const REFRESH_BATCH = 20;

export interface SocialServiceDeps {
  db: Db;
  provider: SocialProvider;
  /** Refuses (400) media URLs that are not public and reachable; see media-check.ts. */
  checkMedia: (urls: string[]) => Promise<void>;
  now?: () => number;
  log?: Pick<Logger, 'warn'>;
}

/** Turns a provider failure into the API's answer: 502 for failures, 400 for what it cannot express. */
function providerFailure(err: unknown, what: string): never {
  if (err instanceof ProviderUnsupportedError) throw badRequest(err.message);
  if (err instanceof ProviderError) throw new AppError(502, 'Social provider error', `${what}: ${err.message}`);
  throw err;
}

async function viaProvider<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    providerFailure(err, what);
  }
}

export function createSocialService(deps: SocialServiceDeps) {
  const { db, provider } = deps;
  const now = deps.now ?? Date.now;

  async function requireProfileAccounts(organizationId: string) {
    const profile = await findProfile(db, organizationId, provider.name);
    const accounts = profile ? await viaProvider('Could not read the linked accounts', () => provider.accounts(profile)) : [];
    return { profile, accounts };
  }

  async function freeSlots(organizationId: string, timeZone: string, count: number, q: Queryable = db.pool): Promise<number[]> {
    const settings = await getSettings(q, organizationId);
    if (!settings.queueSlots.length) throw badRequest('No queue slots configured: set queueSlots in the social settings');
    const t = now();
    const taken = await queuedInstants(q, organizationId, new Date(t));
    return nextFreeSlots({
      slots: settings.queueSlots,
      maxPostsPerSlot: settings.maxPostsPerSlot,
      timeZone,
      now: t,
      taken,
      count,
      horizonDays: SLOT_HORIZON_DAYS,
    });
  }

  function toProviderPost(
    p: {
      postType: SocialPost['postType'];
      caption: string;
      platforms: Network[];
      media: SocialPost['media'];
      platformFields: Record<string, string>;
    },
    scheduledAt: Date | null,
    hold: boolean,
  ): ProviderPost {
    return {
      postType: p.postType,
      caption: p.caption,
      platforms: p.platforms,
      media: p.media,
      platformFields: p.platformFields,
      scheduledAt,
      hold,
    };
  }

  /** The post row after a provider accepted it. */
  function acceptedPatch(result: SubmitResult, heldAs: PostStatus): PostPatch {
    const status: PostStatus = result.state === 'held' ? heldAs : result.state;
    return {
      status,
      providerJobId: result.providerJobId,
      providerPostId: result.providerPostId,
      providerPlatforms: result.platforms,
      providerError: null,
      providerLastEvent: {
        held: heldAs === 'draft' ? 'post.draft' : 'post.awaiting_approval',
        scheduled: 'post.scheduled',
        published: 'post.published',
      }[result.state],
      isPublishedOnPlatform: result.state === 'published',
    };
  }

  return {
    async profile(organizationId: string) {
      const { profile, accounts } = await requireProfileAccounts(organizationId);
      if (!profile) return { connected: false, profileId: null, connectedAccounts: [], accountLinks: [] };
      return {
        connected: accounts.length > 0,
        profileId: profile.id,
        connectedAccounts: [...new Set(accounts.map((a) => a.platform))],
        accountLinks: accounts.map((a) => ({ accountId: a.accountId, platform: a.platform })),
      };
    },

    async connect(org: Organization, platform: Network, redirectUrl?: string) {
      const profile = await viaProvider('Could not create the social profile', () => ensureProfile(db, provider, org));
      const accessUrl = await viaProvider('Could not create the account link', () => provider.linkUrl(profile, platform, redirectUrl));
      return { access_url: accessUrl, platform, profileId: profile.id };
    },

    async disconnect(organizationId: string, accountId: string) {
      const { profile, accounts } = await requireProfileAccounts(organizationId);
      const account = accounts.find((a) => a.accountId === accountId);
      if (!profile || !account) throw notFound('Social account not found');
      await viaProvider('Could not unlink the account', () => provider.unlink(profile, account));
      return { ok: true as const };
    },

    async nextSlot(organizationId: string, timezone: string | undefined, count: number) {
      const settings = await getSettings(db.pool, organizationId);
      const timeZone = timezone ? canonicalTimeZone(timezone) : settings.defaultTimezone;
      if (!timeZone) throw badRequest(`timezone "${timezone}" is not an IANA time zone (for example Europe/Berlin)`);
      const slots = await freeSlots(organizationId, timeZone, count);
      if (!slots.length) throw badRequest(`Every queue slot in the next ${SLOT_HORIZON_DAYS} days is full`);
      return { timezone: timeZone, nextSlot: isoInZone(slots[0]!, timeZone), nextSlots: slots.map((s) => isoInZone(s, timeZone)) };
    },

    async list(organizationId: string, limit: number, offset: number) {
      await refreshDue(organizationId);
      return listPosts(db.pool, organizationId, limit, offset);
    },

    /** `ownVideoUrl`: the signed URL of the organization's own file named by `fileId`, reachable by construction. */
    async publish(org: Organization, body: PublishBody, viaApiKey: boolean, ownVideoUrl?: string) {
      const settings = await getSettings(db.pool, org.id);
      assertPostingEnabled(settings);
      const request = validatePublish(body, settings, now(), ownVideoUrl);
      let { profile, accounts } = await requireProfileAccounts(org.id);
      if (isLocalProvider(provider) && request.platforms.some((p) => !accounts.some((a) => a.platform === p))) {
        // The built-in provider simulates the networks: a post naming one that is not linked yet
        // links a simulated account for it, as clicking through its consent page would.
        profile = await ensureProfile(db, provider, org);
        for (const platform of request.platforms) await provider.linkSimulated(profile, platform);
        accounts = await provider.accounts(profile);
      }
      const linked = new Set(accounts.map((a) => a.platform));
      const missing = request.platforms.filter((p) => !linked.has(p));
      if (!profile || missing.length)
        throw badRequest(`Not connected: ${missing.join(', ')}. Link the account with POST /api/organizations/social-posts/connect first`);
      const hold = request.mode === 'draft' || (settings.approveApiPosts && viaApiKey);
      const heldAs: PostStatus = request.mode === 'draft' ? 'draft' : 'pending_approval';
      try {
        provider.validate?.(toProviderPost(request, null, hold));
      } catch (err) {
        providerFailure(err, 'The social provider cannot take this post');
      }
      await deps.checkMedia(mediaUrls(request).filter((u) => u !== ownVideoUrl));

      const post = await reserve(org.id, request, hold ? heldAs : request.mode === 'publish_now' ? 'published' : 'scheduled', viaApiKey);
      let result: SubmitResult;
      try {
        result = await provider.submit(profile, toProviderPost(request, post.scheduledFor, hold));
      } catch (err) {
        if (err instanceof ProviderError) {
          await updatePost(db.pool, org.id, post.id, { status: 'failed', providerError: err.message, providerLastEvent: 'post.failed' });
        }
        providerFailure(err, 'The social provider did not accept the post');
      }
      const saved = await updatePost(db.pool, org.id, post.id, acceptedPatch(result, heldAs));
      return { post: saved, providerPostId: result.providerPostId };
    },

    async edit(org: Organization, body: EditBody, ref: { postId?: string; jobId?: string }, viaApiKey: boolean) {
      const settings = await getSettings(db.pool, org.id);
      assertPostingEnabled(settings);
      const post = await findOne(org.id, ref);
      const live = LIVE_STATUSES.includes(post.status) && post.providerJobId !== null;
      const change = planEdit(post, body, live, settings.approveApiPosts && viaApiKey, now());
      if (!live && body.mode == null) {
        // Nothing pending at the provider: only the stored text can change.
        return updatePost(db.pool, org.id, post.id, { caption: change.caption, providerLastEvent: 'post.updated' });
      }
      const { target, scheduledAt, caption } = change;
      const hold = target !== 'scheduled';
      const wasHeld = post.status === 'draft' || post.status === 'pending_approval';
      const profile = await findProfile(db, org.id, provider.name);
      if (!profile) throw badRequest('No social profile: connect an account first');

      // Same text and no move back into a held state: the provider moves the job in place.
      if (live && caption === post.caption && scheduledAt && !(hold && !wasHeld)) {
        await viaProvider('The social provider did not accept the change', () =>
          provider.reschedule(profile, post.providerJobId!, { scheduledAt, release: wasHeld && !hold }),
        );
        return updatePost(db.pool, org.id, post.id, {
          status: target,
          scheduledFor: scheduledAt,
          providerError: null,
          providerLastEvent: wasHeld && !hold ? 'post.approved' : 'post.rescheduled',
        });
      }
      // Otherwise the job is replaced: providers cannot change a post's text or re-hold it in place.
      const next = toProviderPost({ ...post, caption }, scheduledAt, hold);
      try {
        provider.validate?.(next);
      } catch (err) {
        providerFailure(err, 'The social provider cannot take this post');
      }
      if (live)
        await viaProvider('The social provider did not cancel the previous version', () => provider.cancel(profile, post.providerJobId!));
      let result: SubmitResult;
      try {
        result = await provider.submit(profile, next);
      } catch (err) {
        if (err instanceof ProviderError) {
          await updatePost(db.pool, org.id, post.id, {
            status: 'failed',
            caption,
            scheduledFor: scheduledAt,
            providerError: err.message,
            providerLastEvent: 'post.failed',
          });
        }
        providerFailure(err, 'The social provider did not accept the post');
      }
      return updatePost(db.pool, org.id, post.id, { ...acceptedPatch(result, target), caption, scheduledFor: scheduledAt });
    },

    async remove(organizationId: string, ref: { postId?: string; jobId?: string }) {
      const post = await findOne(organizationId, ref);
      if (post.status === 'cancelled') return post;
      if (post.status === 'published') throw conflict('A published post cannot be cancelled');
      if (post.providerJobId && LIVE_STATUSES.includes(post.status)) {
        const profile = await findProfile(db, organizationId, provider.name);
        if (profile) await viaProvider('The social provider did not cancel the post', () => provider.cancel(profile, post.providerJobId!));
      }
      return updatePost(db.pool, organizationId, post.id, { status: 'cancelled', scheduledFor: null, providerLastEvent: 'post.cancelled' });
    },
  };

  /** Asks the provider about scheduled posts that are due. A provider that cannot answer now
   *  leaves them as they are: the list must not fail because of it. */
  async function refreshDue(organizationId: string): Promise<void> {
    const due = await dueScheduled(db.pool, organizationId, REFRESH_BATCH);
    if (!due.length) return;
    const profile = await findProfile(db, organizationId, provider.name);
    if (!profile) return;
    try {
      const outcomes = await provider.refresh(
        profile,
        due.map((p) => p.providerJobId!),
      );
      for (const o of outcomes) await applyOutcome(db.pool, organizationId, o);
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      deps.log?.warn('social post refresh failed', { organizationId, err: err.message });
    }
  }

  async function findOne(organizationId: string, ref: { postId?: string; jobId?: string }): Promise<SocialPost> {
    const post = await findPost(db.pool, organizationId, ref);
    if (!post) throw notFound('Social post not found');
    if (ref.postId && ref.jobId && post.providerJobId !== ref.jobId) throw badRequest('postId and jobId name different posts');
    return post;
  }

  /** Stores the post before the provider sees it. For next_slot the slot is chosen and taken under
   *  a per-organization lock, so concurrent publishes cannot overfill a slot. */
  async function reserve(organizationId: string, request: PublishRequest, status: PostStatus, viaApiKey: boolean): Promise<SocialPost> {
    const media = request.media;
    const previewUrl = media.videoUrl ?? media.photoUrls?.[0] ?? media.documentUrl ?? null;
    const thumbnailUrl =
      request.platformFields.instagramThumbnail ?? request.platformFields.tiktokVideoCoverImageUrl ?? media.photoUrls?.[0] ?? null;
    const base = {
      id: newId(),
      organizationId,
      status,
      request,
      provider: provider.name,
      previewUrl,
      thumbnailUrl,
      createdByApiKey: viaApiKey,
    };
    if (request.mode !== 'next_slot') {
      return insertPost(db.pool, { ...base, scheduledFor: request.scheduledAt === null ? null : new Date(request.scheduledAt) });
    }
    return db.tx(async (c) => {
      await c.query(`SELECT pg_advisory_xact_lock(hashtext('social-queue:' || $1))`, [organizationId]);
      const [slot] = await freeSlots(organizationId, request.timeZone, 1, c);
      if (slot === undefined) throw badRequest(`Every queue slot in the next ${SLOT_HORIZON_DAYS} days is full`);
      return insertPost(c, { ...base, scheduledFor: new Date(slot) });
    });
  }
}

/** Every URL the provider will fetch for this post. */
function mediaUrls(r: PublishRequest): string[] {
  const f = r.platformFields;
  return [r.media.videoUrl, ...(r.media.photoUrls ?? []), r.media.documentUrl, f.instagramThumbnail, f.tiktokVideoCoverImageUrl].filter(
    (u): u is string => typeof u === 'string' && u !== '',
  );
}
