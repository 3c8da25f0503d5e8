// Render options (contract 2.9 "Options structure"), shared by POST /api/render and brand presets.
import { z } from 'zod';
import { invalidInput } from '../invalid-input.js';
import { parseLength } from './position.js';
import { resolveCaptionStyle, type StyleItem } from './presets.js';
import { openFields, unknownField, unknownFieldMessage } from '../api/unknown-fields.js';
import { editingSchema } from '../options/editing.js';

/** The W3C Compositing and Blending Level 1 modes, in the contract's order. */
export const BLEND_MODES = [
  'normal',
  'multiply',
  'screen',
  'overlay',
  'darken',
  'lighten',
  'color-dodge',
  'color-burn',
  'hard-light',
  'soft-light',
  'difference',
  'exclusion',
  'hue',
  'saturation',
  'color',
  'luminosity',
] as const;
export type BlendMode = (typeof BLEND_MODES)[number];

// Clients write `Multiply`, `color_dodge` or `colorDodge` as often as `color-dodge`.
const blendMode = z.preprocess(
  (v) =>
    typeof v === 'string'
      ? v
          .trim()
          .replace(/([a-z])([A-Z])/g, '$1-$2')
          .replace(/_/g, '-')
          .toLowerCase()
      : v,
  z.enum(BLEND_MODES, { error: `must be one of ${BLEND_MODES.join(', ')}` }),
);

const OPACITY = 'must be a number from 0.0 to 1.0';
const opacity = z.union(
  [
    z.number().min(0, OPACITY).max(1, OPACITY),
    z
      .string()
      .trim()
      .regex(/^(\d+(\.\d*)?|\.\d+)$/, OPACITY)
      .refine((s) => Number(s) <= 1, OPACITY),
  ],
  { error: OPACITY },
);

const length = (name: string) =>
  z.string().superRefine((v, ctx) => {
    try {
      parseLength(name, v);
    } catch (e) {
      ctx.addIssue({ code: 'custom', message: (e as Error).message.replace(`${name} `, '') });
    }
  });

const waterMarkSchema = z.object({
  fileAppId: z.string().min(1).max(200).optional(),
  waterMarkUrl: z
    .string()
    .url()
    .max(2048)
    .refine((u) => /^https?:\/\//i.test(u), 'must be an http or https URL')
    .optional(),
  left: length('left').optional(),
  top: length('top').optional(),
  bottom: length('bottom').optional(),
  width: length('width').optional(),
  opacity: opacity.optional(),
  blendMode: blendMode.default('normal'),
});

const STRING = { error: 'must be a string' };
const styleState = z.object({
  value: z.union([z.string(), z.number().transform(String)], STRING),
  duration: z.number().min(0).max(10).optional(),
});

// Contract 2.9: "Element fields of the style array and of the director object beyond those listed:
// not shown". A style item's other fields are therefore taken (and dropped), not refused; the
// director is a loose object for the same reason. Everything else in the options is strict.
const styleItem = openFields(
  z.object({
    property: z.string().min(1).max(100),
    value: z.union([z.string().max(500), z.number().transform(String)], STRING),
    active: styleState.optional(),
    past: styleState.optional(),
  }),
);

const director = z.looseObject({
  camera: z.looseObject({ facePaddingFactor: z.number().min(0).max(10).optional() }).optional(),
  intelligence: z.looseObject({ maxSpeakersToFocus: z.number().int().min(1).max(10).optional() }).optional(),
});

export const renderOptionsSchema = z.object({
  maxWordsInPage: z.number().int().min(1).max(20).optional(),
  waterMark: waterMarkSchema.optional(),
  style: z.array(styleItem).max(100).optional(),
  director: director.optional(),
  editing: editingSchema.optional(),
});

/** The options as the OpenAPI document shows them: the request schemas take any object and
 *  normalizeRenderOptions validates it (legacy keys first), but clients need to see the fields. */
export const renderOptionsDocs = () => ({
  description:
    'Render options (maxWordsInPage, waterMark, style, director, editing); legacy WaterMark, watermarkUrl and styles are accepted and stored normalised',
  properties: {
    editing: withoutDialect(z.toJSONSchema(editingSchema, { io: 'input' })),
    style: {
      type: 'array',
      description:
        'Caption style items {property, value, active?, past?} applied over the caption preset, CSS-like (color, font-size, -webkit-text-stroke, text-shadow, ...). ' +
        'The caption band: `position` "top", "center" (or "middle") or "bottom" (default: the lower third, 360 design px above the bottom edge, in px of a 1080-px short side); ' +
        '`top` or `bottom` with a px value sets the distance from that edge',
      items: { type: 'object', required: ['property', 'value'], properties: { property: { type: 'string' }, value: { type: 'string' } } },
      example: [{ property: 'position', value: 'top' }],
    },
  },
});
const withoutDialect = ({ $schema: _, ...schema }: Record<string, unknown>) => schema;

export type RenderOptions = z.infer<typeof renderOptionsSchema>;
export type WaterMarkOptions = z.infer<typeof waterMarkSchema>;

/**
 * Validates render options (or a brand preset's `options`) after mapping the legacy keys
 * `WaterMark`, `watermarkUrl` and `styles`; a failure is a 400 whose message names the field.
 */
export function normalizeRenderOptions(raw: unknown): RenderOptions {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw invalidInput('options must be an object');
  const src = { ...(raw as Record<string, unknown>) };
  renameKey(src, 'WaterMark', 'waterMark');
  renameKey(src, 'watermark', 'waterMark');
  renameKey(src, 'styles', 'style');
  if (src.waterMark && typeof src.waterMark === 'object' && !Array.isArray(src.waterMark)) {
    const wm = { ...(src.waterMark as Record<string, unknown>) };
    renameKey(wm, 'watermarkUrl', 'waterMarkUrl');
    src.waterMark = wm;
  }
  const unknown = unknownField(renderOptionsSchema, src, ['options']);
  if (unknown) throw invalidInput(unknownFieldMessage(unknown));
  const parsed = renderOptionsSchema.safeParse(src);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = ['options', ...issue.path.map(String)].join('.').replace(/\.(\d+)(?=\.|$)/g, '[$1]');
    throw invalidInput(`${where}: ${issue.message}`);
  }
  // The style items are only known to be well formed here; their values are checked by the one
  // parser the renderer uses, so a request never passes validation and then fails at render time.
  if (parsed.data.style) {
    try {
      resolveCaptionStyle(undefined, parsed.data.style as StyleItem[]);
    } catch (e) {
      throw invalidInput(`options.${(e as Error).message}`);
    }
  }
  return parsed.data;
}

/** The watermark opacity as a number (the contract sends it as a string). */
export function watermarkOpacity(wm: Pick<WaterMarkOptions, 'opacity'>): number {
  return wm.opacity === undefined ? 1 : Number(wm.opacity);
}

// The canonical key wins when a client sends both spellings.
function renameKey(obj: Record<string, unknown>, from: string, to: string): void {
  if (!(from in obj)) return;
  if (!(to in obj)) obj[to] = obj[from];
  delete obj[from];
}
