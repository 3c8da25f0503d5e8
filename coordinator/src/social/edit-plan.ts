import { badRequest, conflict } from '../errors.js';
import { PAST_TOLERANCE_MS, type EditBody } from './publish-input.js';
import type { PostStatus, SocialPost } from './posts.js';
import { parseDateTime } from './zoned-time.js';

/**
 * What an edit asks for (contract 3.5): mode schedule makes the post scheduled at scheduledAt,
 * mode draft holds it, no mode keeps its state. `needsApproval` (approveApiPosts and an API key)
 * keeps a post that is not yet scheduled waiting as pending_approval: an API key cannot approve
 * its own post by scheduling it.
 */
export function planEdit(
  post: SocialPost,
  body: EditBody,
  live: boolean,
  needsApproval: boolean,
  now: number,
): { target: PostStatus; scheduledAt: Date | null; caption: string } {
  if (body.mode == null && body.scheduledAt == null && body.caption == null)
    throw badRequest('Nothing to change: give mode, scheduledAt or caption');
  if (body.mode === 'schedule' && !body.scheduledAt?.trim()) throw badRequest('scheduledAt is required when mode is schedule');
  const caption = body.caption ?? post.caption;
  if (post.postType === 'text' && caption.trim() === '') throw badRequest('caption must not be empty for a text post');
  let at = post.scheduledFor?.getTime() ?? null;
  if (body.scheduledAt?.trim()) {
    const parsed = parseDateTime(body.scheduledAt, post.timezone);
    if (parsed === undefined) throw badRequest('scheduledAt must be an ISO 8601 date-time such as 2026-07-08T12:30:00Z');
    at = parsed;
  }
  if (!live && body.mode == null) {
    if (body.scheduledAt) throw badRequest(`This post is ${post.status}; give mode schedule (or draft) to queue it again`);
    if (post.status === 'published') throw conflict('A published post cannot be edited');
    return { target: post.status, scheduledAt: post.scheduledFor, caption };
  }
  const target: PostStatus =
    body.mode === 'draft'
      ? 'draft'
      : body.mode === 'schedule'
        ? needsApproval && post.status !== 'scheduled'
          ? 'pending_approval'
          : 'scheduled'
        : post.status;
  if (target === 'draft' && at === null) throw badRequest('scheduledAt is required to keep a draft of a post without a scheduled time');
  if (target !== 'draft' && at !== null && at < now - PAST_TOLERANCE_MS && (body.mode === 'schedule' || body.scheduledAt)) {
    throw badRequest('scheduledAt must be in the future');
  }
  return { target, scheduledAt: at === null ? null : new Date(at), caption };
}
