import { z } from 'zod';
import type { Api, ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import type { Organization } from '../tenancy/tenancy.js';
import type { SocialProvider } from '../social/provider.js';
import type { SocialService } from '../social/service.js';

/** What every social route file registers against (built once by registerSocialRoutes). */
export interface SocialRoutes {
  api: Api;
  app: Coordinator;
  provider: SocialProvider;
  service: SocialService;
  /** Section 5 with the social wording, then the plan rule (403); once per request. */
  socialOrg(ctx: ApiContext): Promise<Organization>;
  viaApiKey(ctx: ApiContext): Promise<boolean>;
}

export const BASE = '/api/organizations/social-posts';
export const TAG = 'Social posting';
export const orgQuery = z.object({ organizationId: z.string().optional() });

export const EXAMPLE_POST_ID = '6c4b2a19-8d7e-4f60-9a1b-3c5d7e9f0a2b';
export const EXAMPLE_SETTINGS = {
  isEnabled: true,
  approveApiPosts: false,
  defaultTimezone: 'Europe/Berlin',
  defaultPlatforms: ['youtube', 'tiktok'] as ('youtube' | 'tiktok')[],
  queueSlots: [
    { dayOfWeek: 1, time: '09:00' },
    { dayOfWeek: 3, time: '18:30' },
  ],
  maxPostsPerSlot: 1,
  maxShortsOfSameVideo: 3,
  maxShortsPerWeek: 10,
  minimumVideoDurationSeconds: 0,
  processOnlyPlaylistId: null,
};
export const EXAMPLE_SHORT_POST = { id: EXAMPLE_POST_ID, status: 'scheduled', scheduledFor: '2026-12-01T08:00:00.000Z' };

export const STATUSES_TEXT =
  'Post statuses: draft, pending_approval (approveApiPosts held an API-key post), scheduled, published, failed, cancelled.';
