import { z } from 'zod';
import { socialPostListSchema } from '@shorts/common/api/social';
import { MAX_LIST_OFFSET, queryInt } from './http.js';
import { PLAN_RULE_TEXT } from '../social/access.js';
import { postView } from '../social/posts.js';
import { BASE, EXAMPLE_POST_ID, STATUSES_TEXT, TAG, type SocialRoutes } from './social-common.js';

/** GET /posts. */
export function registerSocialPostListRoute({ api, service, socialOrg }: SocialRoutes): void {
  api.route(
    {
      method: 'get',
      path: `${BASE}/posts`,
      tag: TAG,
      summary: 'Social posts, most recent first',
      description: `${PLAN_RULE_TEXT} ${STATUSES_TEXT} limit 1-100 (default 100), offset from 0.`,
      query: z.object({
        organizationId: z.string().optional(),
        limit: queryInt(100, { min: 1, max: 100, message: 'Limit must be between 1 and 100' }),
        offset: queryInt(0, { min: 0, max: MAX_LIST_OFFSET, message: `Offset must be between 0 and ${MAX_LIST_OFFSET}` }),
      }),
      response: socialPostListSchema,
      example: {
        posts: [
          {
            id: EXAMPLE_POST_ID,
            status: 'published',
            title: 'The punchline',
            caption: 'And that is why it worked #shorts',
            platforms: ['youtube'],
            createdAt: '2026-11-25T12:10:00.000Z',
            scheduledFor: null,
            providerJobId: 'job_8f2e',
            previewUrl: null,
            thumbnailUrl: null,
            providerError: null,
            providerPlatforms: [
              { platform: 'youtube', status: 'success', id: 'dQw4w9WgXcQ', url: 'https://youtube.com/shorts/dQw4w9WgXcQ', error: null },
            ],
            providerLastEvent: 'published',
            isPublishedOnPlatform: true,
          },
        ],
      },
    },
    async (ctx, { query }) => {
      const org = await socialOrg(ctx);
      const posts = await service.list(org.id, query.limit, query.offset);
      return { posts: posts.map(postView) };
    },
  );
}
