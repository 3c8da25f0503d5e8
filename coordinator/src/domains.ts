import type { Api } from './api/http.js';
import type { Coordinator } from './context.js';
import { registerProbeRoutes } from './api/probes.js';
import { probeMediaOutcomeHandler } from './probes/probe-media-outcome.js';
import { registerJobRoutes } from './api/jobs.js';
import { createAnalyzeVideoOutcomeHandler } from './jobs/analyze-video-outcome.js';
import { createAnalyzeRangeOutcomeHandler } from './jobs/analyze-range-outcome.js';
import { createReframeShortOutcomeHandler } from './jobs/reframe-short-outcome.js';
import { startWebhookWorker } from './webhooks/webhooks.js';
import { registerRenderRoutes } from './api/renders.js';
import { registerRenderCaptionPositionRoute } from './api/render-caption-position.js';
import { registerCaptionRoutes } from './api/captions.js';
import { registerTimelineRoutes } from './api/timelines.js';
import { createRenderShortOutcomeHandler } from './renders/render-short-outcome.js';
import { createRenderChunkOutcomeHandler } from './renders/render-chunk-outcome.js';
import { registerSocialRoutes } from './api/social.js';
import { registerUploadRoutes } from './api/uploads.js';
import { registerSessionRoutes } from './api/sessions.js';
import { registerOrganizationSettingsRoutes } from './api/organization-settings.js';
import { registerBrandingRoutes } from './api/brandings.js';
import { registerApiKeyRoutes } from './api/api-keys.js';
import { registerWebhookRoutes } from './api/webhooks.js';
import { startArchiveSchedule } from './archive/archive.js';
import { startOrphanSweepSchedule } from './files/orphan-sweep.js';
import { startUploadSweepSchedule } from './uploads/uploads.js';
import { withContract } from './tasks/typed-outcome.js';

/** Every route of the API (what /openapi.json documents); no work starts here. */
export function registerApiRoutes(api: Api, app: Coordinator): void {
  registerProbeRoutes(api, app);
  registerJobRoutes(api, app);
  registerRenderCaptionPositionRoute(api, app);
  registerRenderRoutes(api, app);
  registerCaptionRoutes(api, app);
  registerTimelineRoutes(api, app);
  registerSocialRoutes(api, app);
  registerUploadRoutes(api, app);
  registerSessionRoutes(api, app);
  registerOrganizationSettingsRoutes(api, app);
  registerApiKeyRoutes(api, app);
  registerBrandingRoutes(api, app);
  registerWebhookRoutes(api, app);
}

/** Every domain's routes and task handlers, registered in one place. */
export async function registerDomains(api: Api, app: Coordinator): Promise<void> {
  app.queue.registerHandler('probe-media', withContract('probe-media', probeMediaOutcomeHandler));

  app.queue.registerHandler('analyze-video', withContract('analyze-video', createAnalyzeVideoOutcomeHandler(app)));
  app.queue.registerHandler('analyze-range', withContract('analyze-range', createAnalyzeRangeOutcomeHandler(app)));
  app.queue.registerHandler('reframe-short', withContract('reframe-short', createReframeShortOutcomeHandler(app)));
  app.queue.registerHandler('render-short', withContract('render-short', createRenderShortOutcomeHandler(app)));
  app.queue.registerHandler('render-chunk', withContract('render-chunk', createRenderChunkOutcomeHandler(app)));
  registerApiRoutes(api, app);
  await startArchiveSchedule(app);
  await startOrphanSweepSchedule(app);
  await startUploadSweepSchedule(app);

  const stopWebhooks = await startWebhookWorker({
    boss: app.boss,
    db: app.db,
    log: app.log,
    metrics: app.metrics,
    fetchAllowlist: app.config.fetchAllowlist,
    retryDelaySec: app.config.webhookRetryDelaySec,
    timeoutMs: app.config.webhookTimeoutMs,
    concurrency: app.config.webhookConcurrency,
    perOrganization: app.config.webhookConcurrencyPerOrganization,
  });
  app.onClose(stopWebhooks);
}
