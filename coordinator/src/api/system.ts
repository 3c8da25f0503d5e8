import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { registerDocsRoutes } from './docs.js';
import { serviceOpenApiDocument } from './openapi-document.js';

export function registerSystemRoutes(api: Api, app: Coordinator): void {
  api.router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  api.router.get('/readyz', async (ctx) => {
    try {
      await app.db.query('SELECT 1');
      ctx.body = { status: 'ready', agentsConnected: app.registry.connectedCount() };
    } catch {
      ctx.status = 503;
      ctx.body = { error: 'Service Unavailable', message: 'database unreachable' };
    }
  });
  api.router.get('/metrics', async (ctx) => {
    ctx.type = app.metrics.registry.contentType;
    ctx.body = await app.metrics.registry.metrics();
  });
  api.router.get('/openapi.json', (ctx) => {
    ctx.body = serviceOpenApiDocument(api, app.config.publicUrl ?? app.httpUrl);
  });
  registerDocsRoutes(api.router);
}
