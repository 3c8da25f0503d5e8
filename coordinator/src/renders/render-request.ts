import { z } from 'zod';
import { AppError, badRequest, forbidden, notFound } from '../errors.js';
import { normalizeRenderOptions, renderOptionsDocs, type RenderOptions } from '@shorts/common/render/options';
import { normalisedEditing } from '@shorts/common/options/editing';
import { CAPTION_PRESETS, isCaptionPreset } from '@shorts/common/render/presets';
import { PLAN_LIMITS, type Plan } from '../tenancy/plans.js';

/** Missing and mistyped are told apart, so the message says which fix is needed. */
const requiredAs = (missing: string, mistyped: string) => ({
  error: (i: { input: unknown }) => (i.input === undefined ? missing : mistyped),
});

// Optional fields take null as "not given", as the job create body does.
export const renderBodySchema = z
  .object({
    id: z
      .string(requiredAs('id (a completed VideoShorts job id) is required', 'id must be a string (a completed VideoShorts job id)'))
      .min(1, 'id (a completed VideoShorts job id) is required'),
    target: z.union(
      [z.string(), z.number()],
      requiredAs('target (the short id or index) is required', 'target must be the short id or index, as a number or a numeric string'),
    ),
    type: z
      .string()
      .nullish()
      .meta({ enum: ['shortVideo'], description: '"shortVideo" or omitted' }),
    brandPresetId: z.string().nullish(),
    preset: z
      .string()
      .nullish()
      .meta({ enum: [...CAPTION_PRESETS], description: "Caption style; a brand preset's own preset when omitted" }),
    size: z.object({ width: z.number(), height: z.number(), name: z.string().optional() }).nullish(),
    options: z.record(z.string(), z.unknown()).nullish().meta(renderOptionsDocs()),
    organizationId: z.string().nullish(),
  })
  .meta({
    example: {
      id: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11',
      target: 0,
      preset: 'DEFAULT',
      size: { width: 720, height: 1280, name: '9:16' },
      options: { maxWordsInPage: 3 },
    },
  });
export type RenderBody = z.infer<typeof renderBodySchema>;

export const DEFAULT_SIZE = { width: 720, height: 1280, name: '9:16' } as const;
export const PLATFORM_DEFAULT_OPTIONS: Required<Pick<RenderOptions, 'maxWordsInPage'>> = { maxWordsInPage: 4 };
export const PLATFORM_DEFAULT_PRESET = 'DEFAULT';

export interface BrandPresetRow {
  id: string;
  preset: string | null;
  size: { width: number; height: number; name?: string } | null;
  options: RenderOptions;
  isActive: boolean;
}

export interface ResolvedRender {
  captionPreset: string;
  size: { width: number; height: number; name?: string };
  options: RenderOptions;
  brandPresetId: string | null;
}

/** `target` may be the short's id or its index from 0 (DECISIONS: the same thing), as 1 or "1". */
export function parseTarget(target: string | number, shortsCount: number): number {
  const n = typeof target === 'number' ? target : /^\s*\d+\s*$/.test(target) ? Number(target) : NaN;
  if (!Number.isInteger(n) || n < 0) throw badRequest('target must be a short id or index (an integer from 0)');
  if (n >= shortsCount) throw notFound(`Short ${n} not found in this job (it has ${shortsCount})`);
  return n;
}

function checkSize(size: { width: number; height: number }, plan: Plan): void {
  const max = PLAN_LIMITS[plan].renderSides;
  // The default format is every plan's, whatever the plan's own limits.
  if (size.width === DEFAULT_SIZE.width && size.height === DEFAULT_SIZE.height) return;
  if (max === null)
    throw forbidden('Free plans only get the default 720x1280 portrait format; upgrade to Pro for other sizes').withCode('over_plan_limit');
  for (const side of ['width', 'height'] as const) {
    const v = size[side];
    if (!Number.isInteger(v) || v < 64 || v % 2 !== 0) throw badRequest(`size.${side} must be an even integer of at least 64 pixels`);
  }
  // A well-formed size beyond the plan is the contract's "size not allowed on the plan": 403.
  // Portrait, landscape or square alike: the short side and the long side each have a ceiling.
  if (Math.min(size.width, size.height) > max.short || Math.max(size.width, size.height) > max.long) {
    throw forbidden(
      `The ${plan} plan renders sizes up to ${max.short}x${max.long} or ${max.long}x${max.short} pixels (short side ≤ ${max.short}, long side ≤ ${max.long}); ${size.width}x${size.height} needs a higher plan`,
    ).withCode('over_plan_limit');
  }
}

/**
 * Section 4.3, field by field: brandPresetId, else `preset`, else the organization's active default,
 * else platform defaults; explicit `options` (and `size`) win over whatever the preset supplied.
 */
export function resolveRender(input: {
  body: RenderBody;
  plan: Plan;
  explicitPreset: BrandPresetRow | undefined;
  defaultPreset: BrandPresetRow | undefined;
}): ResolvedRender {
  const { body, plan } = input;
  if (body.type != null && body.type !== 'shortVideo') throw badRequest('type must be "shortVideo" (or omitted) for short renders');
  if (body.brandPresetId) {
    if (!input.explicitPreset) throw new AppError(404, 'Not Found', 'Brand preset not found for this organization');
    if (!input.explicitPreset.isActive) throw badRequest('Selected brand preset is inactive');
  }
  if (!body.brandPresetId && body.preset != null && !isCaptionPreset(body.preset)) {
    throw badRequest(`preset "${body.preset}" is not a built-in style preset`);
  }
  const explicitOptions = body.options ? normalizeRenderOptions(body.options) : {};
  const base = body.brandPresetId ? input.explicitPreset : body.preset ? undefined : input.defaultPreset;

  const captionPreset = base?.preset ?? (body.brandPresetId ? undefined : body.preset) ?? PLATFORM_DEFAULT_PRESET;
  const presetOptions: RenderOptions = base?.options ?? {};
  const options: RenderOptions = { ...PLATFORM_DEFAULT_OPTIONS };
  for (const field of ['maxWordsInPage', 'waterMark', 'style', 'director', 'editing'] as const) {
    const value = explicitOptions[field] ?? presetOptions[field];
    if (value !== undefined) (options as Record<string, unknown>)[field] = value;
  }
  // Decided here once: the render, its captions and its listing read what was resolved.
  const editing = normalisedEditing(options.editing);
  if (editing) options.editing = editing;
  else delete options.editing;

  let size: ResolvedRender['size'] = { ...DEFAULT_SIZE };
  if (body.size) {
    checkSize(body.size, plan);
    size = body.size;
  } else if (base?.size && PLAN_LIMITS[plan].renderSides !== null) {
    // A preset's size is honoured only on plans that may change it.
    checkSize(base.size, plan);
    size = base.size;
  }
  return { captionPreset, size, options, brandPresetId: base?.id ?? null };
}
