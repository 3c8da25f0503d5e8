// Serves the web studio's production build (Vite, built into dist/studio by `npm start`, `npm test`
// or `npm run build:studio`). Any path under /studio/ that is not a file is the app's own route.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type Koa from 'koa';
import { AppError } from '../errors.js';
import type { Logger } from '@shorts/common/logger';
import { repoRoot } from '@shorts/common/paths';

export const STUDIO_PATH = '/studio';
export const studioBuildDir = () => path.join(repoRoot(), 'dist', 'studio');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

export function studioRoutes(log: Logger): Koa.Middleware {
  const root = studioBuildDir();
  let warned = false;
  return async (ctx, next) => {
    if (ctx.path === '/' && ctx.method === 'GET') return ctx.redirect(`${STUDIO_PATH}/`);
    if (ctx.path !== STUDIO_PATH && !ctx.path.startsWith(STUDIO_PATH + '/')) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === STUDIO_PATH) return ctx.redirect(`${STUDIO_PATH}/`);
    let relative: string;
    try {
      relative = decodeURIComponent(ctx.path.slice(STUDIO_PATH.length + 1));
    } catch {
      throw new AppError(400, 'Bad Request', 'The path holds a malformed %-escape');
    }
    let file = path.join(root, relative);
    if (!file.startsWith(root + path.sep) && file !== root) return next();
    let info = await stat(file).catch(() => undefined);
    if (!info?.isFile()) {
      file = path.join(root, 'index.html');
      info = await stat(file).catch(() => undefined);
      if (!info) {
        if (!warned) log.warn('the studio is not built: run npm run build:studio', { dir: root });
        warned = true;
        ctx.status = 503;
        ctx.body = { error: 'Service Unavailable', message: 'The web studio is not built on this server (npm run build:studio)' };
        return;
      }
    }
    ctx.type = TYPES[path.extname(file)] ?? 'application/octet-stream';
    ctx.length = info.size;
    // Vite fingerprints assets; the page itself must be fetched fresh to pick up a new build.
    ctx.set('Cache-Control', relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; img-src * blob: data:; media-src * blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
    );
    ctx.body = ctx.method === 'HEAD' ? null : createReadStream(file);
  };
}
