// The brand-preset routes' answers (coordinator/src/api/brandings.ts); the studio reads their types.
import { z } from 'zod';

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
export type BrandPreset = z.output<typeof brandPresetSchema>;

/** DELETE /api/organizations/brandings/:id. */
export const deletedPresetSchema = z.object({ success: z.boolean(), message: z.string() });
export type DeletedPreset = z.output<typeof deletedPresetSchema>;
