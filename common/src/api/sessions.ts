// The studio-session routes' answers (coordinator/src/api/sessions.ts); the studio reads their types.
import { z } from 'zod';

export const sessionViewSchema = z.object({
  user: z.object({ id: z.string(), email: z.string(), name: z.string().nullable() }),
  organizations: z.array(z.object({ id: z.string(), name: z.string(), plan: z.string(), role: z.string(), retentionDays: z.number() })),
  csrfToken: z.string(),
});
export type SessionView = z.output<typeof sessionViewSchema>;
export type SessionOrganization = SessionView['organizations'][number];

/** DELETE /api/session. */
export const signedOutSchema = z.object({ ok: z.boolean() });
export type SignedOut = z.output<typeof signedOutSchema>;

/** DELETE /api/sessions. */
export const signedOutEverywhereSchema = z.object({ ok: z.boolean(), sessionsEnded: z.number().int() });
export type SignedOutEverywhere = z.output<typeof signedOutEverywhereSchema>;

/** GET and PUT /api/organizations/settings. */
export const organizationSettingsSchema = z.object({ id: z.string(), name: z.string(), plan: z.string(), retentionDays: z.number() });
export type OrganizationSettings = z.output<typeof organizationSettingsSchema>;
