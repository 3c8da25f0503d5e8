import { socialPostChangeSchema } from '@shorts/common/api/social';
import { PLAN_RULE_TEXT } from '../social/access.js';
import { shortView } from '../social/posts.js';
import { editSchema, postRef, removeSchema } from '../social/publish-input.js';
import { BASE, EXAMPLE_POST_ID, EXAMPLE_SHORT_POST, TAG, type SocialRoutes } from './social-common.js';

/** Changes to a post already made: POST /edit and POST /remove. */
export function registerSocialPostChangeRoutes({ api, service, socialOrg, viaApiKey }: SocialRoutes): void {
  api.route(
    {
      method: 'post',
      path: `${BASE}/edit`,
      errors: [502],
      tag: TAG,
      body: editSchema,
      summary: 'Reschedule, turn into a draft, or change the caption of a post (by postId or provider jobId)',
      description: `${PLAN_RULE_TEXT} mode schedule needs scheduledAt (ISO 8601) and makes the post scheduled; mode draft keeps it held. A caption change replaces the provider job. With approveApiPosts, an API key cannot release its own held post.`,
      bodyExample: { postId: EXAMPLE_POST_ID, mode: 'schedule', scheduledAt: '2026-12-01T09:00:00+01:00' },
      response: socialPostChangeSchema,
      example: { post: EXAMPLE_SHORT_POST },
    },
    async (ctx, { body }) => {
      const org = await socialOrg(ctx);
      const post = await service.edit(org, body, postRef(body), await viaApiKey(ctx));
      return { post: shortView(post) };
    },
  );

  api.route(
    {
      method: 'post',
      path: `${BASE}/remove`,
      errors: [502],
      tag: TAG,
      body: removeSchema,
      summary: 'Cancel a post (by postId or provider jobId): status cancelled, scheduledFor null, provider job cancelled',
      description: `${PLAN_RULE_TEXT} Cancelling a cancelled post answers it again; a published post cannot be cancelled (409).`,
      bodyExample: { postId: EXAMPLE_POST_ID },
      response: socialPostChangeSchema,
      example: { post: { id: EXAMPLE_POST_ID, status: 'cancelled', scheduledFor: null } },
    },
    async (ctx, { body }) => {
      const org = await socialOrg(ctx);
      const post = await service.remove(org.id, postRef(body));
      return { post: shortView(post) };
    },
  );
}
