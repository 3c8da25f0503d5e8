import type { ApiRequestContext } from './http.js';
import type { Coordinator } from '../context.js';
import { enforceRateLimit, rateGroupOf } from './rate-limit.js';
import { isMember } from '../tenancy/tenancy.js';
import { sessionPolicy } from '../tenancy/sessions.js';
import { authenticate, resolveOrganization, DEFAULT_ORG_MESSAGES, type OrganizationMessages, type Principal } from '../tenancy/auth.js';

export async function principalOf(app: Coordinator, ctx: ApiRequestContext): Promise<Principal> {
  if (!ctx.state.principal)
    ctx.state.principal = await authenticate(app.db, app.signer, sessionPolicy(app.config), ctx.headers, ctx.method);
  return ctx.state.principal;
}

/**
 * What every protected route runs before it looks at its input: authentication and the rate limit,
 * so a request refused for a bad body or query still counts against the caller's allowance. An API
 * key's organization is known already; a user's is the one the request names, when they belong to
 * it (a repeated organizationId, which validation refuses later, is charged as its first value).
 */
export async function authenticateAndCharge(app: Coordinator, ctx: ApiRequestContext): Promise<Principal> {
  const principal = await principalOf(app, ctx);
  if (principal.kind === 'apiKey') {
    await enforceRateLimit(app, ctx, principal, principal.organizationId);
  } else if (rateGroupOf(ctx._matchedRoute === undefined ? ctx.path : String(ctx._matchedRoute), ctx.method)) {
    const supplied = suppliedOrgId(ctx);
    const named = Array.isArray(supplied) ? supplied[0] : supplied;
    if (typeof named === 'string' && named !== '' && (await isMember(app.db.pool, principal.userId, named))) {
      await enforceRateLimit(app, ctx, principal, named);
    }
  }
  return principal;
}

/** Authenticates and returns the organization the call acts for (contract section 5). */
export async function requireOrg(
  app: Coordinator,
  ctx: ApiRequestContext,
  suppliedOrgId: unknown,
  messages: OrganizationMessages = DEFAULT_ORG_MESSAGES,
): Promise<string> {
  const principal = await principalOf(app, ctx);
  const organizationId = await resolveOrganization(app.db, principal, suppliedOrgId, messages);
  await enforceRateLimit(app, ctx, principal, organizationId);
  return organizationId;
}

/** organizationId comes from the query on GET/DELETE and from the body on POST/PUT. */
export function suppliedOrgId(ctx: ApiRequestContext): unknown {
  const body = ctx.state.body as Record<string, unknown> | undefined;
  return ctx.method === 'GET' || ctx.method === 'DELETE' ? ctx.query.organizationId : (body?.organizationId ?? ctx.query.organizationId);
}
