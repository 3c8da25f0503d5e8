import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { requireOrg, suppliedOrgId } from './auth-context.js';
import { renderBodySchema } from '../renders/render-request.js';
import { renderCaptionPlacement } from '../renders/renders.js';
import { renderCaptionPlacementSchema } from '@shorts/common/api/renders';

/** The studio's preview asks here where a render would put its captions (beyond the contract). */
export function registerRenderCaptionPositionRoute(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'post',
      path: '/api/render/caption-position',
      tag: 'Render',
      summary: 'Where a render asked with this body would put its captions, and with which style items; nothing is rendered',
      description:
        'Beyond the contract. Takes the body of POST /api/render and answers what that render would decide about its captions: ' +
        "the band (chosen clear of the faces it frames when no style item places them), why, and the style items it would burn them with, for the request's preset and size. " +
        "The web studio's preview shows this, so that its captions sit where the render's will. Nothing is queued or charged; errors are those of POST /api/render.",
      body: renderBodySchema,
      response: renderCaptionPlacementSchema,
      example: {
        position: 'top',
        chosenBy: 'automatic',
        movedFromFace: true,
        faceOverlap: 0,
        captionPreset: 'DEFAULT',
        size: { width: 1080, height: 1920 },
        style: [{ property: 'position', value: 'top' }],
      },
    },
    async (ctx, { body }) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
      return renderCaptionPlacement(app, orgId, body);
    },
  );
}
