import { newId } from '../ids.js';
import { badRequest } from '../errors.js';
import type { Organization } from '../tenancy/tenancy.js';
import { ProviderError, type SubmitResult } from './provider.js';
import { ensureProfile } from './profiles.js';
import { isLocalProvider } from './local-provider.js';
import { assertPostingEnabled } from './access.js';
import { getSettings } from './settings.js';
import { validatePublish, type PublishBody, type PublishRequest } from './publish-input.js';
import { insertPost, updatePost, type PostStatus, type SocialPost } from './posts.js';
import {
  SLOT_HORIZON_DAYS,
  acceptedPatch,
  freeSlots,
  providerFailure,
  requireProfileAccounts,
  toProviderPost,
  type SocialCore,
} from './service-core.js';

/** `ownVideoUrl`: the signed URL of the organization's own file named by `fileId`, reachable by construction. */
export async function publish(core: SocialCore, org: Organization, body: PublishBody, viaApiKey: boolean, ownVideoUrl?: string) {
  const { db, provider } = core;
  const settings = await getSettings(db.pool, org.id);
  assertPostingEnabled(settings);
  const request = validatePublish(body, settings, core.now(), ownVideoUrl);
  let { profile, accounts } = await requireProfileAccounts(core, org.id);
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
  await core.checkMedia(mediaUrls(request).filter((u) => u !== ownVideoUrl));

  const post = await reserve(core, org.id, request, hold ? heldAs : request.mode === 'publish_now' ? 'published' : 'scheduled', viaApiKey);
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
}

/** Stores the post before the provider sees it. For next_slot the slot is chosen and taken under
 *  a per-organization lock, so concurrent publishes cannot overfill a slot. */
async function reserve(
  core: SocialCore,
  organizationId: string,
  request: PublishRequest,
  status: PostStatus,
  viaApiKey: boolean,
): Promise<SocialPost> {
  const { db, provider } = core;
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
    const [slot] = await freeSlots(core, organizationId, request.timeZone, 1, c);
    if (slot === undefined) throw badRequest(`Every queue slot in the next ${SLOT_HORIZON_DAYS} days is full`);
    return insertPost(c, { ...base, scheduledFor: new Date(slot) });
  });
}

/** Every URL the provider will fetch for this post. */
function mediaUrls(r: PublishRequest): string[] {
  const f = r.platformFields;
  return [r.media.videoUrl, ...(r.media.photoUrls ?? []), r.media.documentUrl, f.instagramThumbnail, f.tiktokVideoCoverImageUrl].filter(
    (u): u is string => typeof u === 'string' && u !== '',
  );
}
