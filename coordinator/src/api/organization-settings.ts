import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { forbidden } from '../errors.js';
import { principalOf, requireOrg, suppliedOrgId } from './auth-context.js';
import { requireOrganization, updateOrganization } from '../tenancy/tenancy.js';
import { userOrganizations } from '../tenancy/sessions.js';
import { organizationSettingsSchema } from '@shorts/common/api/sessions';

export const EXAMPLE_ORG = { id: '5d1c2b7e-3a44-4f0e-8f53-1f7a9e2c6b10', name: 'Acme Media', plan: 'pro' };

const settingsView = (o: { id: string; name: string; plan: string; retentionDays: number }) => ({
  id: o.id,
  name: o.name,
  plan: o.plan,
  retentionDays: o.retentionDays,
});

/** The organization's settings the web studio shows and (auto-archive days) changes. */
export function registerOrganizationSettingsRoutes(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'get',
      path: '/api/organizations/settings',
      tag: 'Studio sessions',
      summary: "The organization's name, plan and auto-archive days",
      query: z.object({ organizationId: z.string().optional() }),
      response: organizationSettingsSchema,
      example: { ...EXAMPLE_ORG, retentionDays: 30 },
    },
    async (ctx, { query }) => settingsView(await requireOrganization(app.db.pool, await requireOrg(app, ctx, query.organizationId))),
  );

  api.route(
    {
      method: 'put',
      path: '/api/organizations/settings',
      tag: 'Studio sessions',
      summary: 'Set the auto-archive days (1-180) from the web studio',
      description:
        'The contract keeps auto-archive days in the web application, not the API: only a studio session of an owner or admin may change them.',
      body: z.object({
        organizationId: z.string().optional(),
        retentionDays: z
          .number()
          .int('retentionDays must be a whole number of days')
          .min(1, 'retentionDays must be from 1 to 180')
          .max(180, 'retentionDays must be from 1 to 180'),
      }),
      bodyExample: { organizationId: EXAMPLE_ORG.id, retentionDays: 30 },
      response: organizationSettingsSchema,
      example: { ...EXAMPLE_ORG, retentionDays: 30 },
    },
    async (ctx, { body }) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
      const principal = await principalOf(app, ctx);
      if (principal.kind !== 'user' || principal.via !== 'session')
        throw forbidden('Auto-archive days are set in the web studio, not through the API');
      const role = (await userOrganizations(app.db, principal.userId)).find((o) => o.id === orgId)?.role;
      if (role !== 'owner' && role !== 'admin')
        throw forbidden('Only an owner or admin of the organization may change auto-archive days', 'Not allowed');
      return settingsView(await updateOrganization(app.db, orgId, { retentionDays: body.retentionDays }));
    },
  );
}
