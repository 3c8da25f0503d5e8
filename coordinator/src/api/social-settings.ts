import { socialSettingsSchema } from '@shorts/common/api/social';
import { PLAN_RULE_TEXT } from '../social/access.js';
import { settingsPatchSchema, getSettings, updateSettings } from '../social/settings.js';
import { BASE, EXAMPLE_SETTINGS, TAG, orgQuery, type SocialRoutes } from './social-common.js';

/** GET and PUT /settings. */
export function registerSocialSettingsRoutes({ api, app, socialOrg }: SocialRoutes): void {
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
}
