import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { requireOrg, suppliedOrgId } from './auth-context.js';
import { brandPresetSchema, deletedPresetSchema } from '@shorts/common/api/brandings';
import { createPreset, createPresetSchema, deletePreset, listPresets, updatePreset, updatePresetSchema } from '../brandings/brandings.js';

const orgQuery = z.object({ organizationId: z.string().optional() });
const EXAMPLE_PRESET = {
  id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  name: 'Channel look',
  description: 'Bold captions, logo top right',
  preset: 'DEFAULT',
  size: { width: 1080, height: 1920, name: '9:16' },
  options: {
    maxWordsInPage: 3,
    waterMark: { fileAppId: 'f3b0c1de-5a67-4c1a-9d2e-6f7a8b9c0d1e', left: '860px', top: '40px', width: '180px', opacity: 0.9 },
  },
  isActive: true,
  isDefault: true,
  createdAt: '2026-11-20T09:00:00.000Z',
  updatedAt: '2026-11-20T09:00:00.000Z',
};
const WATERMARK_NOTE =
  'When `options.waterMark` has only a `waterMarkUrl`, the image is imported (public http/https only, PNG/JPEG/WebP/SVG/GIF by content, at most 10 MB; SVG is sanitised and stored as PNG) and its new `fileAppId` saved. Each refusal is a 400 naming the rule.';

export function registerBrandingRoutes(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'get',
      path: '/api/organizations/brandings',
      tag: 'Brand presets',
      summary: "The organization's brand presets, oldest first",
      query: orgQuery,
      response: z.array(brandPresetSchema),
      example: [EXAMPLE_PRESET],
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId);
      return listPresets(app.db.pool, orgId);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/organizations/brandings',
      tag: 'Brand presets',
      summary: 'Create a brand preset; isDefault true makes it the only default',
      description: WATERMARK_NOTE,
      body: createPresetSchema,
      response: brandPresetSchema,
      example: EXAMPLE_PRESET,
      idempotent: (ctx) => requireOrg(app, ctx, suppliedOrgId(ctx)),
    },
    async (ctx, { body }) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
      return createPreset(app, orgId, body);
    },
  );

  api.route(
    {
      method: 'put',
      path: '/api/organizations/brandings/:id',
      tag: 'Brand presets',
      summary: 'Update a brand preset; only the fields sent change (null clears description, preset or size)',
      description: `\`options\`, when sent, replaces the stored options. isActive false deactivates the preset: a render naming it is refused. ${WATERMARK_NOTE}`,
      body: updatePresetSchema,
      bodyExample: { preset: 'HORMOZI', isDefault: true },
      response: brandPresetSchema,
      example: { ...EXAMPLE_PRESET, preset: 'HORMOZI', updatedAt: '2026-11-25T14:00:00.000Z' },
    },
    async (ctx, { body }) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
      return updatePreset(app, orgId, ctx.params.id!, body);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/organizations/brandings/:id',
      tag: 'Brand presets',
      summary: 'Delete a brand preset (deleting the default leaves none)',
      query: orgQuery,
      response: deletedPresetSchema,
      example: { success: true, message: 'Brand preset deleted' },
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId);
      await deletePreset(app.db.pool, orgId, ctx.params.id!);
      return { success: true, message: 'Brand preset deleted' };
    },
  );
}
