import type { ApiRequestContext } from './http.js';
import type { Coordinator } from '../context.js';
import type { Principal } from '../tenancy/auth.js';
import { tooManyRequests, type RateGroup } from '../tenancy/rate-limits.js';
import type { Plan } from '../tenancy/plans.js';

// A handler that resolves its organization twice still pays for one request.
const charged = new WeakSet<ApiRequestContext>();

/** Routes that start paid work: each one queues analysis, and its outcome queues a webhook event. */
const JOB_CREATION_ROUTES = new Set(['/api/jobs', '/api/jobs/:jobId/retry']);

/** Which limited group a route belongs to, by its path (contract section 8) and method. */
export function rateGroupOf(path: string, method: string): RateGroup | undefined {
  if (method === 'POST' && JOB_CREATION_ROUTES.has(path)) return 'jobs';
  if (path.startsWith('/api/uploads')) return 'files';
  if (path.startsWith('/api/organizations/social-posts')) return 'social';
  return undefined;
}

/**
 * Charges one request of its group to the caller's bucket once its organization is known; sets the
 * RateLimit-* headers (IETF draft names) and refuses with 429 and Retry-After when it is empty.
 */
export async function enforceRateLimit(
  app: Coordinator,
  ctx: ApiRequestContext,
  principal: Principal,
  organizationId: string,
): Promise<void> {
  // The matched route's own pattern, not the request path as written, names the group.
  const group = rateGroupOf(ctx._matchedRoute === undefined ? ctx.path : String(ctx._matchedRoute), ctx.method);
  if (!group || charged.has(ctx)) return;
  charged.add(ctx);
  const viaApiKey = principal.kind === 'apiKey';
  const plan = await organizationPlan(app, organizationId);
  const limit = app.rateLimiter.limitFor(group, plan, viaApiKey);
  if (limit <= 0) return;
  // Job creation is limited per organization, not per caller: a tenant could otherwise multiply its
  // allowance with API keys, and what it protects (the agents, the webhook queue) is shared.
  const caller = group === 'jobs' ? 'organization' : viaApiKey ? `key:${principal.keyId}` : `user:${principal.userId}`;
  const decision = await app.rateLimiter.take(`${group}:${organizationId}:${caller}`, limit);
  ctx.set('RateLimit-Limit', String(decision.limit));
  ctx.set('RateLimit-Remaining', String(decision.remaining));
  ctx.set('RateLimit-Reset', String(decision.resetSec));
  if (decision.retryAfterSec > 0) {
    ctx.set('Retry-After', String(decision.retryAfterSec));
    throw tooManyRequests(decision);
  }
}

async function organizationPlan(app: Coordinator, organizationId: string): Promise<Plan> {
  const row = await app.db.one<{ plan: Plan }>('SELECT plan FROM organizations WHERE id = $1', [organizationId]);
  return row?.plan ?? 'free';
}
