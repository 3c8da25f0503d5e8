import { z } from 'zod';
import type { Api, ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { forbidden } from '../errors.js';
import { principalOf, requireOrg, suppliedOrgId } from './auth-context.js';
import { issueApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo } from '../tenancy/tenancy.js';
import { userOrganizations } from '../tenancy/sessions.js';
import { apiKeyListSchema, apiKeyViewSchema, issuedApiKeySchema } from '@shorts/common/api/api-keys';

const KEY_ID_EXAMPLE = '5d0f3a52-1c7e-4f5b-8a0e-3b9b1f0c2d44';
const keyExample = {
  id: KEY_ID_EXAMPLE,
  name: 'CI uploader',
  prefix: 'vsk_',
  last4: 'x9Qa',
  createdAt: '2026-11-25T10:00:00.000Z',
  revokedAt: null,
};
const view = (k: ApiKeyInfo) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  last4: k.last4,
  createdAt: new Date(k.createdAt).toISOString(),
  revokedAt: k.revokedAt ? new Date(k.revokedAt).toISOString() : null,
});

/**
 * An organization's API keys, managed by its signed-in owners and admins (the studio's Settings →
 * API keys). A key itself cannot list, mint or revoke keys: one leaked key must not yield others.
 */
export function registerApiKeyRoutes(api: Api, app: Coordinator): void {
  async function requireManager(ctx: ApiContext, supplied: unknown): Promise<string> {
    const orgId = await requireOrg(app, ctx, supplied);
    const principal = await principalOf(app, ctx);
    if (principal.kind !== 'user')
      throw forbidden('API keys are managed by a signed-in owner or admin, not with an API key', 'Not allowed');
    const role = (await userOrganizations(app.db, principal.userId)).find((o) => o.id === orgId)?.role;
    if (role !== 'owner' && role !== 'admin')
      throw forbidden('Only an owner or admin of the organization may manage its API keys', 'Not allowed');
    return orgId;
  }

  api.route(
    {
      method: 'get',
      path: '/api/organizations/api-keys',
      tag: 'API keys',
      summary: "The organization's API keys, revoked ones included (never the keys themselves)",
      query: z.object({ organizationId: z.string().optional().describe('Required with a session or bearer token') }),
      response: apiKeyListSchema.meta({ example: { keys: [keyExample] } }),
    },
    async (ctx, { query }) => ({ keys: (await listApiKeys(app.db, await requireManager(ctx, query.organizationId))).map(view) }),
  );

  api.route(
    {
      method: 'post',
      path: '/api/organizations/api-keys',
      tag: 'API keys',
      status: 201,
      summary: 'Create an API key: the key is in this answer only, and is never shown again',
      body: z
        .object({
          organizationId: z.string().optional(),
          name: z
            .string({ error: 'name is required' })
            .trim()
            .min(1, 'name is required')
            .max(100, 'name must be at most 100 characters')
            .describe('What the key is for, to recognise it in the list'),
        })
        .meta({ example: { organizationId: 'org_8c1d…', name: 'CI uploader' } }),
      response: issuedApiKeySchema.meta({ example: { ...keyExample, key: 'vsk_2hG4…x9Qa' } }),
    },
    async (ctx, { body }) => {
      const orgId = await requireManager(ctx, suppliedOrgId(ctx));
      const issued = await issueApiKey(app.db, orgId, body.name);
      app.log.info('api key created', { organizationId: orgId, keyId: issued.id });
      return { ...view(issued), key: issued.key };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/organizations/api-keys/:keyId',
      tag: 'API keys',
      summary: 'Revoke an API key: requests with it are refused from now on',
      query: z.object({ organizationId: z.string().optional() }),
      response: apiKeyViewSchema.meta({ example: { ...keyExample, revokedAt: '2026-11-25T12:00:00.000Z' } }),
    },
    async (ctx, { query }) => {
      const orgId = await requireManager(ctx, query.organizationId);
      const revoked = await revokeApiKey(app.db, ctx.params.keyId!, orgId);
      app.log.info('api key revoked', { organizationId: orgId, keyId: revoked.id });
      return view(revoked);
    },
  );
}
