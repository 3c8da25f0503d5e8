// The caption fonts the renderer draws with, served to the studio (/studio/fonts/<file>.ttf): its
// preview measures and draws captions from these very files (common/src/render/caption-layout.ts).
// Only the faces of common/src/render/caption-fonts.ts are served; any other name falls through.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type Koa from 'koa';
import { CAPTION_FONT_ROUTE, captionFaceByFileName } from '@shorts/common/render/caption-fonts';
import { captionFontFile } from '@shorts/common/render/caption-font-files';

export function captionFontRoutes(): Koa.Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(CAPTION_FONT_ROUTE + '/') || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const face = captionFaceByFileName(ctx.path.slice(CAPTION_FONT_ROUTE.length + 1));
    if (!face) return next();
    const file = captionFontFile(face);
    const info = await stat(file);
    ctx.type = 'font/ttf';
    ctx.length = info.size;
    // The files change only with the font packages' versions, which a new deploy brings.
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.body = ctx.method === 'HEAD' ? null : createReadStream(file);
  };
}
