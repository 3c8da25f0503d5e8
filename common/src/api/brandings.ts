// The brand-preset routes' answers (coordinator/src/api/brandings.ts); the studio reads their types.
import { z } from 'zod';
import type { RenderOptions } from '../render/options.js';

export const brandPresetSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  preset: z.string().nullable(),
  size: z.object({ width: z.number(), height: z.number(), name: z.string().optional() }).nullable(),
  options: z.record(z.string(), z.unknown()),
  isActive: z.boolean(),
  isDefault: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
/** `options` are stored normalised (normalizeRenderOptions), so they read as RenderOptions; the
 *  document shows them as an object (renderOptionsDocs on the request side). */
export type BrandPreset = Omit<z.output<typeof brandPresetSchema>, 'options'> & { options: RenderOptions };

/** DELETE /api/organizations/brandings/:id. */
export const deletedPresetSchema = z.object({ success: z.boolean(), message: z.string() });
export type DeletedPreset = z.output<typeof deletedPresetSchema>;
