import { z } from 'zod';
import { socialConnectSchema, socialDisconnectSchema, socialProfileSchema } from '@shorts/common/api/social';
import { badRequest } from '../errors.js';
import { PLAN_RULE_TEXT } from '../social/access.js';
import { networkSchema } from '../social/settings.js';
import { BASE, TAG, orgQuery, type SocialRoutes } from './social-common.js';

/** The profile and its linked accounts: GET /profile, POST /connect, POST /disconnect-account. */
export function registerSocialAccountRoutes({ api, service, socialOrg }: SocialRoutes): void {
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
      errors: [502],
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
      errors: [502],
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
}
