import { publishedPostSchema } from '@shorts/common/api/social';
import { notFound } from '../errors.js';
import { findFile } from '../files/files.js';
import { PLAN_RULE_TEXT } from '../social/access.js';
import { shortView } from '../social/posts.js';
import { publishSchema } from '../social/publish-input.js';
import { BASE, EXAMPLE_SHORT_POST, STATUSES_TEXT, TAG, type SocialRoutes } from './social-common.js';

/** POST /publish. */
export function registerSocialPublishRoute({ api, app, provider, service, socialOrg, viaApiKey }: SocialRoutes): void {
  api.route(
    {
      method: 'post',
      path: `${BASE}/publish`,
      errors: [502],
      tag: TAG,
      status: 201,
      body: publishSchema,
      summary: 'Publish, schedule, queue (next_slot) or save as draft a social post',
      description: `${PLAN_RULE_TEXT} 403 also while the organization's isEnabled setting is false. video needs an https videoUrl (or \`fileId\`, a video of the organization's storage such as a render, posted by its own signed URL), photo 1-20 photoUrls, document a documentUrl, text a non-empty caption; only the field of the post type may be given. draft and schedule need scheduledAt (ISO 8601; without an offset it is read in timezone). platforms default to the settings' defaultPlatforms and must be linked accounts. platformFields take only the contract's keys for the chosen platforms, booleans as "true"/"false". Media URLs must be publicly reachable. With approveApiPosts, API-key posts are held as pending_approval. 502 when the provider fails (the post is kept with status failed). ${STATUSES_TEXT}`,
      response: publishedPostSchema,
      example: { socialPost: { ...EXAMPLE_SHORT_POST, providerJobId: 'job_8f2e' }, providerPostId: 'post_3a9d' },
      idempotent: async (ctx) => (await socialOrg(ctx)).id,
    },
    async (ctx, { body }) => {
      const org = await socialOrg(ctx);
      let ownVideoUrl: string | undefined;
      if (body.fileId) {
        const file = await findFile(app.db.pool, org.id, body.fileId);
        if (!file || file.type !== 'video') throw notFound('File not found');
        // The provider fetches it when the post goes out, which may be days from now.
        ownVideoUrl = (await app.urls.sign(file.objectKey, 'GET', 30 * 24 * 3600)).url;
      }
      const { post, providerPostId } = await service.publish(org, body, await viaApiKey(ctx), ownVideoUrl);
      app.log.info('social post published', { organizationId: org.id, postId: post.id, status: post.status, provider: provider.name });
      return { socialPost: { ...shortView(post), providerJobId: post.providerJobId }, providerPostId };
    },
  );
}
