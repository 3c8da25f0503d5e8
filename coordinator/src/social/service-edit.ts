import { badRequest, conflict } from '../errors.js';
import type { Organization } from '../tenancy/tenancy.js';
import { ProviderError, type SubmitResult } from './provider.js';
import { findProfile } from './profiles.js';
import { assertPostingEnabled } from './access.js';
import { getSettings } from './settings.js';
import { planEdit } from './edit-plan.js';
import type { EditBody } from './publish-input.js';
import { LIVE_STATUSES, updatePost } from './posts.js';
import { acceptedPatch, findOne, providerFailure, toProviderPost, viaProvider, type SocialCore } from './service-core.js';

export async function edit(
  core: SocialCore,
  org: Organization,
  body: EditBody,
  ref: { postId?: string; jobId?: string },
  viaApiKey: boolean,
) {
  const { db, provider } = core;
  const settings = await getSettings(db.pool, org.id);
  assertPostingEnabled(settings);
  const post = await findOne(core, org.id, ref);
  const live = LIVE_STATUSES.includes(post.status) && post.providerJobId !== null;
  const change = planEdit(post, body, live, settings.approveApiPosts && viaApiKey, core.now());
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
}

export async function remove(core: SocialCore, organizationId: string, ref: { postId?: string; jobId?: string }) {
  const { db, provider } = core;
  const post = await findOne(core, organizationId, ref);
  if (post.status === 'cancelled') return post;
  if (post.status === 'published') throw conflict('A published post cannot be cancelled');
  if (post.providerJobId && LIVE_STATUSES.includes(post.status)) {
    const profile = await findProfile(db, organizationId, provider.name);
    if (profile) await viaProvider('The social provider did not cancel the post', () => provider.cancel(profile, post.providerJobId!));
  }
  return updatePost(db.pool, organizationId, post.id, { status: 'cancelled', scheduledFor: null, providerLastEvent: 'post.cancelled' });
}
