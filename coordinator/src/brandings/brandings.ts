// Brand presets (contract 2.9, 3.4, 4.4): saved render configurations of an organization, at most
// one of them its default. The database's partial unique index is the guarantee; the advisory lock
// below only makes concurrent writers queue instead of failing on it.
import { z } from 'zod';
import type { Coordinator } from '../context.js';
import type { Queryable } from '../db/db.js';
import { appErrorOf, badRequest, conflict, notFound } from '../errors.js';
import { isId, newId } from '../ids.js';
import { normalizeRenderOptions, renderOptionsDocs, type RenderOptions } from '@shorts/common/render/options';
import { CAPTION_PRESETS, isCaptionPreset } from '@shorts/common/render/presets';
import { deleteFile } from '../files/delete-file.js';
import { resolveWatermark } from './watermark.js';

export interface BrandPreset {
  id: string;
  name: string;
  description: string | null;
  preset: string | null;
  size: { width: number; height: number; name?: string } | null;
  options: RenderOptions;
  isActive: boolean;
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
}

const COLUMNS = `id, name, description, preset, size, options, is_active AS "isActive", is_default AS "isDefault",
  created_at AS "createdAt", updated_at AS "updatedAt"`;

/** A brand_presets row as COLUMNS reads it: the timestamps are still Dates. */
interface PresetRow extends Omit<BrandPreset, 'createdAt' | 'updatedAt'> {
  createdAt: Date;
  updatedAt: Date;
}

const view = (row: PresetRow): BrandPreset => ({
  ...row,
  createdAt: new Date(row.createdAt).toISOString(),
  updatedAt: new Date(row.updatedAt).toISOString(),
});

// ---- input ---------------------------------------------------------------------------------------

const sizeSchema = z
  .object({
    width: z.number().int().min(1).max(10_000),
    height: z.number().int().min(1).max(10_000),
    name: z.string().max(50).optional(),
  })
  .describe('Kept on every plan; a render honours it only on pro and business');

const presetName = z
  .string()
  .max(50)
  .refine(isCaptionPreset, `must be one of ${CAPTION_PRESETS.join(', ')}`)
  .transform((s) => s.toUpperCase())
  .meta({ enum: [...CAPTION_PRESETS], description: 'Caption style (any case)' });

const fields = {
  organizationId: z.string().optional(),
  name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200),
  description: z.string().max(2000).nullable().optional(),
  preset: presetName.nullable().optional(),
  size: sizeSchema.nullable().optional(),
  options: z.record(z.string(), z.unknown()).nullable().optional().meta(renderOptionsDocs()),
  isDefault: z.boolean().optional(),
  // Contract 2.9 names isActive among the preset's fields ("Set false to deactivate"); a preset may be made inactive.
  isActive: z.boolean().optional(),
};
// Contract 2.9's read-only fields, which a client sending back the preset it read carries: taken and ignored.
const readOnly = {
  id: z.string().optional().describe('Read-only: ignored'),
  createdAt: z.string().optional().describe('Read-only: ignored'),
  updatedAt: z.string().optional().describe('Read-only: ignored'),
};

export const createPresetSchema = z.object(fields).meta({
  example: {
    name: 'Channel look',
    description: 'Bold captions, logo top right',
    preset: 'DEFAULT',
    size: { width: 1080, height: 1920, name: '9:16' },
    options: {
      maxWordsInPage: 3,
      waterMark: { fileAppId: 'f3b0c1de-5a67-4c1a-9d2e-6f7a8b9c0d1e', left: '860px', top: '40px', width: '180px', opacity: 0.9 },
    },
    isDefault: true,
  },
});
export const updatePresetSchema = z.object({ ...fields, ...readOnly, name: fields.name.optional() });
export type CreatePresetInput = z.infer<typeof createPresetSchema>;
export type UpdatePresetInput = z.infer<typeof updatePresetSchema>;

/** A bad waterMarkUrl is a watermark import refusal, worded like the others. */
function normalizeOptions(raw: unknown): RenderOptions {
  try {
    return normalizeRenderOptions(raw);
  } catch (err) {
    const refusal = appErrorOf(err);
    if (refusal?.message.startsWith('options.waterMark.waterMarkUrl')) {
      throw badRequest(`Watermark import refused (invalid URL): waterMarkUrl must be a public http or https URL (${refusal.message})`);
    }
    throw err;
  }
}

// ---- storage -------------------------------------------------------------------------------------

/** Only one writer per organization changes defaults at a time; the next one then sees, and
 *  clears, the default the first just set. */
async function clearDefault(c: Queryable, organizationId: string, keepId: string): Promise<void> {
  await c.query(`SELECT pg_advisory_xact_lock(hashtext('brand-preset-default'), hashtext($1))`, [organizationId]);
  await c.query(`UPDATE brand_presets SET is_default = false, updated_at = now() WHERE organization_id = $1 AND is_default AND id <> $2`, [
    organizationId,
    keepId,
  ]);
}

const ONE_DEFAULT_INDEX = 'brand_presets_one_default';

/** The index can still refuse a writer that bypassed the lock: a 409, never a 500. */
function uniqueDefaultConflict(err: unknown): never {
  if (
    (err as { code?: string; constraint?: string }).code === '23505' &&
    (err as { constraint?: string }).constraint === ONE_DEFAULT_INDEX
  ) {
    throw conflict('Another default brand preset was set at the same time; try again');
  }
  throw err;
}

type Deps = Pick<Coordinator, 'db' | 'store' | 'log' | 'config'>;

/** Runs `write`; a watermark imported for it is deleted again when the write does not happen. */
async function withImport<T>(app: Deps, organizationId: string, importedFileId: string | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (importedFileId) await deleteFile(app, organizationId, importedFileId).catch(() => undefined);
    throw err;
  }
}

export async function listPresets(c: Queryable, organizationId: string): Promise<BrandPreset[]> {
  const rows = (
    await c.query<PresetRow>(`SELECT ${COLUMNS} FROM brand_presets WHERE organization_id = $1 ORDER BY created_at, id`, [organizationId])
  ).rows;
  return rows.map(view);
}

async function findPreset(c: Queryable, organizationId: string, id: string): Promise<BrandPreset | undefined> {
  if (!isId(id)) return undefined;
  const row = (
    await c.query<PresetRow>(`SELECT ${COLUMNS} FROM brand_presets WHERE organization_id = $1 AND id = $2`, [organizationId, id])
  ).rows[0];
  return row && view(row);
}

const NOT_FOUND = 'Brand preset not found for this organization';

export async function createPreset(app: Deps, organizationId: string, input: CreatePresetInput): Promise<BrandPreset> {
  const { options, importedFileId } = await resolveWatermark(app, organizationId, normalizeOptions(input.options));
  const id = newId();
  return withImport(app, organizationId, importedFileId, () =>
    app.db.tx(async (c) => {
      if (input.isDefault) await clearDefault(c, organizationId, id);
      const row = (
        await c
          .query<PresetRow>(
            `INSERT INTO brand_presets (id, organization_id, name, description, preset, size, options, is_active, is_default)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $9, $8) RETURNING ${COLUMNS}`,
            [
              id,
              organizationId,
              input.name,
              input.description ?? null,
              input.preset ?? null,
              input.size ?? null,
              options,
              input.isDefault ?? false,
              input.isActive ?? true,
            ],
          )
          .catch(uniqueDefaultConflict)
      ).rows[0];
      return view(row);
    }),
  );
}

export async function updatePreset(app: Deps, organizationId: string, id: string, input: UpdatePresetInput): Promise<BrandPreset> {
  const current = await findPreset(app.db.pool, organizationId, id);
  if (!current) throw notFound(NOT_FOUND);
  let options: RenderOptions | undefined;
  let importedFileId: string | undefined;
  if (input.options !== undefined) {
    ({ options, importedFileId } = await resolveWatermark(app, organizationId, normalizeOptions(input.options), current.options));
  }

  // Only what the client sent changes; `null` clears an optional field.
  const sets: string[] = [];
  const params: unknown[] = [organizationId, id];
  const set = (column: string, value: unknown) => {
    params.push(value);
    sets.push(`${column} = $${params.length}`);
  };
  if (input.name !== undefined) set('name', input.name);
  if (input.description !== undefined) set('description', input.description);
  if (input.preset !== undefined) set('preset', input.preset);
  if (input.size !== undefined) set('size', input.size);
  if (options !== undefined) set('options', options);
  if (input.isActive !== undefined) set('is_active', input.isActive);
  if (input.isDefault !== undefined) set('is_default', input.isDefault);

  return withImport(app, organizationId, importedFileId, () =>
    app.db.tx(async (c) => {
      if (input.isDefault) await clearDefault(c, organizationId, id);
      const row = (
        await c
          .query<PresetRow>(
            `UPDATE brand_presets SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE organization_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
            params,
          )
          .catch(uniqueDefaultConflict)
      ).rows[0];
      if (!row) throw notFound(NOT_FOUND);
      return view(row);
    }),
  );
}

/** Deleting the default leaves the organization without one (DECISIONS.md); an imported
 *  watermark stays in the library, where the client may still use or delete it. */
export async function deletePreset(c: Queryable, organizationId: string, id: string): Promise<void> {
  if (!isId(id)) throw notFound(NOT_FOUND);
  const res = await c.query(`DELETE FROM brand_presets WHERE organization_id = $1 AND id = $2`, [organizationId, id]);
  if (!res.rowCount) throw notFound(NOT_FOUND);
}
