import { z } from 'zod';
import { nextSlotSchema } from '@shorts/common/api/social';
import { queryInt } from './http.js';
import { PLAN_RULE_TEXT } from '../social/access.js';
import { BASE, TAG, type SocialRoutes } from './social-common.js';

/** GET /next-slot. */
export function registerSocialNextSlotRoute({ api, service, socialOrg }: SocialRoutes): void {
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
}
