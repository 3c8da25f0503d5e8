import type { Db, Queryable } from '../db/db.js';
import { AppError, badRequest, notFound } from '../errors.js';
import type { Logger } from '@shorts/common/logger';
import type { Network } from './networks.js';
import { ProviderError, ProviderUnsupportedError, type ProviderPost, type SocialProvider, type SubmitResult } from './provider.js';
import { findProfile } from './profiles.js';
import { getSettings } from './settings.js';
import { nextFreeSlots } from './slots.js';
import { findPost, queuedInstants, type PostPatch, type PostStatus, type SocialPost } from './posts.js';

export const SLOT_HORIZON_DAYS = 400;

export interface SocialServiceDeps {
  db: Db;
  provider: SocialProvider;
  /** Refuses (400) media URLs that are not public and reachable; see media-check.ts. */
  checkMedia: (urls: string[]) => Promise<void>;
  now?: () => number;
  log?: Pick<Logger, 'warn'>;
}

/** What each of the service's operations (service-*.ts) works with: its deps with the clock settled. */
export type SocialCore = SocialServiceDeps & { now: () => number };

/** Turns a provider failure into the API's answer: 502 for failures, 400 for what it cannot express. */
export function providerFailure(err: unknown, what: string): never {
  if (err instanceof ProviderUnsupportedError) throw badRequest(err.message);
  if (err instanceof ProviderError) throw new AppError(502, 'Social provider error', `${what}: ${err.message}`);
  throw err;
}

export async function viaProvider<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    providerFailure(err, what);
  }
}

export async function requireProfileAccounts({ db, provider }: SocialCore, organizationId: string) {
  const profile = await findProfile(db, organizationId, provider.name);
  const accounts = profile ? await viaProvider('Could not read the linked accounts', () => provider.accounts(profile)) : [];
  return { profile, accounts };
}

export async function freeSlots(
  core: SocialCore,
  organizationId: string,
  timeZone: string,
  count: number,
  q: Queryable = core.db.pool,
): Promise<number[]> {
  const settings = await getSettings(q, organizationId);
  if (!settings.queueSlots.length) throw badRequest('No queue slots configured: set queueSlots in the social settings');
  const t = core.now();
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

export function toProviderPost(
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
export function acceptedPatch(result: SubmitResult, heldAs: PostStatus): PostPatch {
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

export async function findOne({ db }: SocialCore, organizationId: string, ref: { postId?: string; jobId?: string }): Promise<SocialPost> {
  const post = await findPost(db.pool, organizationId, ref);
  if (!post) throw notFound('Social post not found');
  if (ref.postId && ref.jobId && post.providerJobId !== ref.jobId) throw badRequest('postId and jobId name different posts');
  return post;
}
