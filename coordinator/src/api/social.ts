import { z } from 'zod';
import type { Api, ApiContext } from './http.js';
import { MAX_LIST_OFFSET, queryInt } from './http.js';
import type { Coordinator } from '../context.js';
import { badRequest, notFound } from '../errors.js';
import { findFile } from '../files/files.js';
import { principalOf, requireOrg, suppliedOrgId } from './auth-context.js';
import { requireOrganization, type Organization } from '../tenancy/tenancy.js';
import { PLAN_RULE_TEXT, SOCIAL_ORG_MESSAGES, assertSocialPlan } from '../social/access.js';
import { createAyrshareProvider } from '../social/ayrshare-provider.js';
import { LOCAL_AUTHORIZE_PATH, createLocalProvider, isLocalProvider } from '../social/local-provider.js';
import { createMediaCheck } from '../social/media-check.js';
import { createSocialService } from '../social/service.js';
import { networkSchema, settingsPatchSchema, getSettings, updateSettings } from '../social/settings.js';
import {
  nextSlotSchema,
  publishedPostSchema,
  socialConnectSchema,
  socialDisconnectSchema,
  socialPostChangeSchema,
  socialPostListSchema,
  socialProfileSchema,
  socialSettingsSchema,
} from '@shorts/common/api/social';
import { editSchema, postRef, publishSchema, removeSchema } from '../social/publish-input.js';
import { postView, shortView } from '../social/posts.js';
import type { SocialProvider } from '../social/provider.js';

const BASE = '/api/organizations/social-posts';
const TAG = 'Social posting';
const orgQuery = z.object({ organizationId: z.string().optional() });

const EXAMPLE_POST_ID = '6c4b2a19-8d7e-4f60-9a1b-3c5d7e9f0a2b';
const EXAMPLE_SETTINGS = {
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
const EXAMPLE_SHORT_POST = { id: EXAMPLE_POST_ID, status: 'scheduled', scheduledFor: '2026-12-01T08:00:00.000Z' };

const STATUSES_TEXT =
  'Post statuses: draft, pending_approval (approveApiPosts held an API-key post), scheduled, published, failed, cancelled.';

export function createSocialProvider(app: Coordinator): SocialProvider {
  const config = app.config.social;
  return config.provider === 'ayrshare'
    ? createAyrshareProvider(config)
    : createLocalProvider(app.db, { baseUrl: app.httpUrl, autoLink: config.autoLink });
}

export function registerSocialRoutes(api: Api, app: Coordinator, provider: SocialProvider = createSocialProvider(app)): void {
  const service = createSocialService({
    db: app.db,
    provider,
    log: app.log,
    checkMedia: createMediaCheck({
      fetchAllowlist: app.config.fetchAllowlist,
      // The built-in provider never downloads the media, so it is not fetched to prove it reachable.
      reachability: !isLocalProvider(provider),
    }),
  });

  /** Section 5 with the social wording, then the plan rule (403); once per request. */
  const resolved = new WeakMap<ApiContext, Promise<Organization>>();
  function socialOrg(ctx: ApiContext): Promise<Organization> {
    let org = resolved.get(ctx);
    if (!org) {
      org = (async () => {
        const found = await requireOrganization(app.db.pool, await requireOrg(app, ctx, suppliedOrgId(ctx), SOCIAL_ORG_MESSAGES));
        assertSocialPlan(found);
        return found;
      })();
      resolved.set(ctx, org);
    }
    return org;
  }
  // Runs before each route's own body and query validation, so a caller learns about credentials,
  // organizationId and plan (401, 400, 403) before the shape of the request.
  const GUARDED = ['settings', 'profile', 'connect', 'disconnect-account', 'next-slot', 'posts', 'publish', 'edit', 'remove'];
  api.router.use(
    GUARDED.map((p) => `${BASE}/${p}`),
    async (ctx, next) => {
      await socialOrg(ctx as ApiContext);
      return next();
    },
  );
  const viaApiKey = async (ctx: ApiContext) => (await principalOf(app, ctx)).kind === 'apiKey';

  api.route(
    {
      method: 'get',
      path: `${BASE}/settings`,
      tag: TAG,
      query: orgQuery,
      response: socialSettingsSchema,
      summary: 'Social posting settings (a default-shaped object when none were saved)',
      example: EXAMPLE_SETTINGS,
      description: PLAN_RULE_TEXT,
    },
    async (ctx) => {
      const org = await socialOrg(ctx);
      return getSettings(app.db.pool, org.id);
    },
  );

  api.route(
    {
      method: 'put',
      path: `${BASE}/settings`,
      tag: TAG,
      body: settingsPatchSchema,
      response: socialSettingsSchema,
      summary: 'Update any subset of the social settings; answers the full settings',
      bodyExample: {
        defaultTimezone: 'Europe/Berlin',
        queueSlots: [
          { dayOfWeek: 1, time: '09:00' },
          { dayOfWeek: 3, time: '18:30' },
        ],
      },
      example: EXAMPLE_SETTINGS,
      description: `${PLAN_RULE_TEXT} defaultTimezone is an IANA zone, queueSlots items are {dayOfWeek 0-6 (0 = Sunday), time HH:mm}, maxPostsPerSlot 1-100, the other numbers non-negative. Unknown fields are refused.`,
    },
    async (ctx, { body }) => {
      const org = await socialOrg(ctx);
      const { organizationId: _ignored, ...patch } = body;
      return updateSettings(app.db, org.id, patch);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${BASE}/profile`,
      tag: TAG,
      query: orgQuery,
      summary: "The organization's social profile and linked accounts",
      description: `${PLAN_RULE_TEXT} connected is true when at least one account is linked; profileId is null until the first connect.`,
      response: socialProfileSchema,
      example: {
        connected: true,
        profileId: 'prof_2b7c9e',
        connectedAccounts: ['youtube'],
        accountLinks: [{ accountId: 'acc_51f0a3', platform: 'youtube' }],
      },
    },
    async (ctx) => {
      const org = await socialOrg(ctx);
      return service.profile(org.id);
    },
  );

  api.route(
    {
      method: 'post',
      path: `${BASE}/connect`,
      tag: TAG,
      summary: 'Start linking a social account: open access_url in a browser to complete the OAuth link',
      description: `${PLAN_RULE_TEXT} Creates the organization's provider profile on first use. redirectUrl is where the provider sends the browser afterwards.`,
      body: z.object({
        organizationId: z.string().nullish(),
        platform: networkSchema,
        redirectUrl: z.string().nullish(),
      }),
      bodyExample: { platform: 'youtube', redirectUrl: 'https://studio.example.com/#/social' },
      response: socialConnectSchema,
      example: {
        access_url: 'https://shorts.example.com/api/organizations/social-posts/local/authorize?token=…',
        platform: 'youtube',
        profileId: 'prof_2b7c9e',
      },
    },
    async (ctx, { body }) => {
      const org = await socialOrg(ctx);
      if (body.redirectUrl && !/^https?:\/\/[^\s/]+/i.test(body.redirectUrl)) throw badRequest('redirectUrl must be an http or https URL');
      return service.connect(org, body.platform, body.redirectUrl ?? undefined);
    },
  );

  api.route(
    {
      method: 'post',
      path: `${BASE}/disconnect-account`,
      tag: TAG,
      summary: "Unlink one social account (accountId from the profile's accountLinks)",
      description: PLAN_RULE_TEXT,
      body: z.object({
        organizationId: z.string().nullish(),
        accountId: z.string({ error: 'accountId is required' }).min(1, 'accountId is required'),
      }),
      bodyExample: { accountId: 'acc_51f0a3' },
      response: socialDisconnectSchema,
      example: { ok: true },
    },
    async (ctx, { body }) => {
      const org = await socialOrg(ctx);
      return service.disconnect(org.id, body.accountId);
    },
  );

  api.route(
    {
      method: 'get',
      path: `${BASE}/next-slot`,
      tag: TAG,
      summary: 'The next free posting-queue slots',
      description: `${PLAN_RULE_TEXT} Computed from queueSlots (weekly wall-clock times in the zone), maxPostsPerSlot and the posts already queued at each slot. A slot inside a daylight-saving gap moves forward by the gap (02:30 becomes 03:30); in a repeated hour the first occurrence counts. Times are ISO 8601 with the zone's offset. count (1-50, default 10) sets how many nextSlots to list.`,
      query: z.object({
        organizationId: z.string().optional(),
        timezone: z.string().optional(),
        count: queryInt(10, { min: 1, max: 50, message: 'count must be between 1 and 50' }),
      }),
      response: nextSlotSchema,
      example: {
        timezone: 'Europe/Berlin',
        nextSlot: '2026-11-30T09:00:00+01:00',
        nextSlots: ['2026-11-30T09:00:00+01:00', '2026-12-02T18:30:00+01:00'],
      },
    },
    async (ctx, { query }) => {
      const org = await socialOrg(ctx);
      return service.nextSlot(org.id, query.timezone || undefined, query.count);
    },
  );

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

  api.route(
    {
      method: 'post',
      path: `${BASE}/publish`,
      tag: TAG,
      status: 201,
      body: publishSchema,
      summary: 'Publish, schedule, queue (next_slot) or save as draft a social post',
      description: `${PLAN_RULE_TEXT} 403 also while the organization's isEnabled setting is false. video needs an https videoUrl (or \`fileId\`, a video of the organization's storage such as a render, posted by its own signed URL), photo 1-20 photoUrls, document a documentUrl, text a non-empty caption; only the field of the post type may be given. draft and schedule need scheduledAt (ISO 8601; without an offset it is read in timezone). platforms default to the settings' defaultPlatforms and must be linked accounts. platformFields take only the contract's keys for the chosen platforms, booleans as "true"/"false". Media URLs must be publicly reachable. With approveApiPosts, API-key posts are held as pending_approval. 502 when the provider fails (the post is kept with status failed). ${STATUSES_TEXT}`,
      response: publishedPostSchema,
      example: { socialPost: { ...EXAMPLE_SHORT_POST, providerJobId: 'job_8f2e' }, providerPostId: 'post_3a9d' },
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

  api.route(
    {
      method: 'post',
      path: `${BASE}/edit`,
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

  if (isLocalProvider(provider)) {
    const local = provider;
    api.route(
      {
        method: 'get',
        path: LOCAL_AUTHORIZE_PATH,
        tag: TAG,
        auth: false,
        summary: 'Local provider only: the consent page behind access_url; opening it links the account',
        query: z.object({ token: z.string({ error: 'token is required' }).min(1, 'token is required') }),
        // Without a redirectUrl; with one the browser is sent there instead (302).
        example: {
          ok: true,
          platform: 'youtube',
          accountId: 'acc_51f0a3',
          message: 'Your youtube account is linked; you can close this window.',
        },
      },
      async (ctx, { query }) => {
        const linked = await local.completeLink(query.token);
        if (linked.redirectUrl) {
          ctx.redirect(linked.redirectUrl);
          return undefined;
        }
        return {
          ok: true,
          platform: linked.platform,
          accountId: linked.accountId,
          message: `Your ${linked.platform} account is linked; you can close this window.`,
        };
      },
    );
  }
}
