import type { Api, ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { principalOf, requireOrg, suppliedOrgId } from './auth-context.js';
import { requireOrganization, type Organization } from '../tenancy/tenancy.js';
import { SOCIAL_ORG_MESSAGES, assertSocialPlan } from '../social/access.js';
import { createAyrshareProvider } from '../social/ayrshare-provider.js';
import { createLocalProvider, isLocalProvider } from '../social/local-provider.js';
import { createMediaCheck } from '../social/media-check.js';
import { createSocialService } from '../social/service.js';
import type { SocialProvider } from '../social/provider.js';
import { BASE, type SocialRoutes } from './social-common.js';
import { registerSocialSettingsRoutes } from './social-settings.js';
import { registerSocialAccountRoutes } from './social-accounts.js';
import { registerSocialNextSlotRoute } from './social-next-slot.js';
import { registerSocialPostListRoute } from './social-post-list.js';
import { registerSocialPublishRoute } from './social-publish.js';
import { registerSocialPostChangeRoutes } from './social-post-changes.js';
import { registerLocalAuthorizeRoute } from './social-local-authorize.js';

export function createSocialProvider(app: Coordinator): SocialProvider {
  const config = app.config.social;
  return config.provider === 'ayrshare'
    ? createAyrshareProvider(config)
    : createLocalProvider(app.db, { baseUrl: app.httpUrl, autoLink: config.autoLink });
}

/** The social posting API; each group of routes lives in its own social-*.ts file. */
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

  const routes: SocialRoutes = { api, app, provider, service, socialOrg, viaApiKey };
  registerSocialSettingsRoutes(routes);
  registerSocialAccountRoutes(routes);
  registerSocialNextSlotRoute(routes);
  registerSocialPostListRoute(routes);
  registerSocialPublishRoute(routes);
  registerSocialPostChangeRoutes(routes);
  if (isLocalProvider(provider)) registerLocalAuthorizeRoute(api, provider);
}
