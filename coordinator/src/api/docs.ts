// /docs: Swagger UI's own distribution (swagger-ui-dist from npm), served by the coordinator so the
// explorer works with no network beyond this server, pointed at /openapi.json. Try-it-out sends the
// key given under Authorize (the document's bearer scheme) to this same server.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type Router from '@koa/router';
import type { ApiState } from './http.js';

const require = createRequire(import.meta.url);
const distDir = () => path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The only files the page needs; nothing else under node_modules is reachable. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
};

// Swagger UI sets style attributes and draws data: images; it needs no inline script (the start-up
// code is a file of its own) and no other origin.
const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Video Shorts API</title><link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><noscript>The explorer needs JavaScript; the document itself is <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</noscript><div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/assets/init.js"></script></body></html>`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: false,
  tryItOutEnabled: false, displayRequestDuration: true, docExpansion: 'list', defaultModelsExpandDepth: 0,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout',
  validatorUrl: null,
});`;

/** A film frame with a play mark: the studio's and the docs' icon (SVG, which every current browser takes). */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">
<rect x="14" y="4" width="36" height="56" rx="7" fill="#1f4fd8"/><path d="M27 22v20l16-10z" fill="#fff"/></svg>`;

export function registerDocsRoutes(router: Router<ApiState>): void {
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.type = 'html';
    ctx.body = PAGE;
  });
  router.get('/docs/assets/init.js', (ctx) => {
    ctx.set('Content-Security-Policy', DOCS_CSP);
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = INIT;
  });
  router.get('/docs/assets/:file', async (ctx) => {
    const file = ctx.params.file!;
    const type = ASSETS[file];
    if (!type) {
      ctx.status = 404;
      ctx.body = { error: 'Not Found', message: 'No such docs asset' };
      return;
    }
    ctx.type = type;
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = await readFile(path.join(distDir(), file));
  });
  router.get('/favicon.ico', (ctx) => {
    ctx.type = 'image/svg+xml';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = FAVICON_SVG;
  });
}
