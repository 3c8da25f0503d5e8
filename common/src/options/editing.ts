// `options.editing`, jump cuts (issue 24): which silences and filler words a render leaves out. Its
// one schema, and its one reading. A brand preset keeps `editing` as given (the API shows it so, and
// an explicit `{}` or `false` in a request still wins over a preset's); a render's spec holds it
// normalised once its request is accepted (`normalisedEditing`). Every reader resolves it here:
// `resolveEditing` and what follows from it, never the fields themselves.
// `npm run lint:option-rules` keeps these rules here.
import { z } from 'zod';

export const DEFAULT_MIN_SILENCE_SEC = 0.6;
export const DEFAULT_KEEP_SILENCE_SEC = 0.15;
export const DEFAULT_FILLER_WORDS = ['um', 'uh', 'er', 'erm', 'ah', 'hmm'] as const;

const BOOLEAN_OR_OBJECT = 'must be true, false or an object';
const removeSilences = z.union(
  [
    z.boolean(),
    z
      .strictObject({
        minSilenceSec: z
          .number()
          .min(0.1, 'must be from 0.1 to 10 seconds')
          .max(10, 'must be from 0.1 to 10 seconds')
          .optional()
          .describe('Pauses at least this long are shortened (default 0.6)'),
        keepSec: z
          .number()
          .min(0, 'must be from 0 to 2 seconds')
          .max(2, 'must be from 0 to 2 seconds')
          .optional()
          .describe('What is left of each shortened pause (default 0.15)'),
      })
      .refine((o) => (o.keepSec ?? DEFAULT_KEEP_SILENCE_SEC) < (o.minSilenceSec ?? DEFAULT_MIN_SILENCE_SEC), {
        message: 'keepSec must be shorter than minSilenceSec',
      }),
  ],
  { error: BOOLEAN_OR_OBJECT },
);
const removeFillers = z.union(
  [
    z.boolean(),
    z.strictObject({
      words: z
        .array(
          z
            .string()
            .trim()
            .min(1, 'must not be empty')
            .max(40)
            .regex(/^[\p{L}\p{M}'’-]+$/u, 'must be single words (letters only)'),
        )
        .min(1)
        .max(50)
        .optional()
        .describe('Filler words matched as whole words (default um, uh, er, erm, ah, hmm and their spellings)'),
    }),
  ],
  { error: BOOLEAN_OR_OBJECT },
);

export const editingSchema = z
  .strictObject({
    removeSilences: removeSilences.optional(),
    removeFillers: removeFillers.optional(),
  })
  .describe('Jump cuts: removeSilences (true or {minSilenceSec, keepSec}) and removeFillers (true or {words})');

/** Jump cuts: removeSilences (true or {minSilenceSec, keepSec}) and removeFillers (true or {words}). */
export type EditingOptions = z.infer<typeof editingSchema>;
/** What a render does with `editing`, its defaults filled in: each null when not cut. */
export interface EditingRules {
  silence: { minSilenceSec: number; keepSec: number } | null;
  /** Filler words by their fillerKey. */
  fillers: Set<string> | null;
}

/** The options with their defaults filled in; null when nothing is to be cut. The one reading of
 *  `editing`: `false`, `{}` and an absent field cut nothing, `true` or an object cuts. */
export function resolveEditing(editing: EditingOptions | null | undefined): EditingRules | null {
  const s = editing?.removeSilences;
  const f = editing?.removeFillers;
  const silence =
    s === true
      ? { minSilenceSec: DEFAULT_MIN_SILENCE_SEC, keepSec: DEFAULT_KEEP_SILENCE_SEC }
      : s && typeof s === 'object'
        ? { minSilenceSec: s.minSilenceSec ?? DEFAULT_MIN_SILENCE_SEC, keepSec: s.keepSec ?? DEFAULT_KEEP_SILENCE_SEC }
        : null;
  const fillers =
    f === true
      ? new Set(DEFAULT_FILLER_WORDS.map(fillerKey))
      : f && typeof f === 'object'
        ? new Set((f.words ?? DEFAULT_FILLER_WORDS).map(fillerKey))
        : null;
  return silence || fillers ? { silence, fillers } : null;
}

/**
 * How a transcript spells a filler does not matter: "Umm," "uhh" and "hmmm" are "um", "uh" and
 * "hm". Letters only, lower case, each run of one letter as one. A whole word is compared, so
 * "umbrella" is never "um".
 */
export function fillerKey(word: string): string {
  return word
    .toLocaleLowerCase()
    .replace(/[^\p{L}]/gu, '')
    .replace(/(\p{L})\1+/gu, '$1');
}

/**
 * The options as a render stores them once its request is accepted: absent when nothing is cut,
 * else each rule with its defaults filled in, so what the agent, the captions and the render list
 * read is what was decided here. Renders stored before hold `editing` as asked; the resolver reads
 * both alike, as it reads this form back to the same rules.
 */
export function normalisedEditing(editing: EditingOptions | null | undefined): EditingOptions | undefined {
  const rules = resolveEditing(editing);
  if (!rules) return undefined;
  // The words as given (the render's payload is checked by the request's schema again), not keyed.
  const f = editing?.removeFillers;
  const words = f && typeof f === 'object' && f.words ? f.words : [...DEFAULT_FILLER_WORDS];
  return {
    ...(rules.silence ? { removeSilences: { ...rules.silence } } : {}),
    ...(rules.fillers ? { removeFillers: { words } } : {}),
  };
}

/** Whether a render with these options cuts anything. */
export const cutsAnything = (editing: EditingOptions | null | undefined): boolean => resolveEditing(editing) !== null;

/** Whether a render with these options cuts silences (and so reads the voice activity heard). */
export const cutsSilences = (editing: EditingOptions | null | undefined): boolean => !!resolveEditing(editing)?.silence;

/** The switches a render list shows for its options. */
export const jumpCutFlagsSchema = z
  .object({ removeSilences: z.boolean(), removeFillers: z.boolean() })
  .describe('Whether it was asked to cut silences and filler words');
export type JumpCutFlags = z.output<typeof jumpCutFlagsSchema>;

export function jumpCutFlags(editing: EditingOptions | null | undefined): JumpCutFlags {
  const rules = resolveEditing(editing);
  return { removeSilences: !!rules?.silence, removeFillers: !!rules?.fillers };
}

/** The caption routes' query switches (`true`/`false`; absent: the preset's editing). */
const flag = z
  .enum(['true', 'false'])
  .optional()
  .transform((v) => (v === undefined ? undefined : v === 'true'));
export const editingQueryFields = {
  removeSilences: flag.describe('Re-time for jump cuts that remove silences (true/false; default: the preset’s editing)'),
  removeFillers: flag.describe('Drop filler words and re-time for their cuts (true/false; default: the preset’s editing)'),
};

/** The query switches as render options: either one given asks for both (the other off). */
export function editingFromQuery(query: { removeSilences?: boolean; removeFillers?: boolean }): EditingOptions | undefined {
  if (query.removeSilences === undefined && query.removeFillers === undefined) return undefined;
  return { removeSilences: query.removeSilences ?? false, removeFillers: query.removeFillers ?? false };
}

/** The studio's two switches over a brand preset's editing: a preset's own settings are kept when on. */
export function editingFromSwitches(preset: EditingOptions, on: { silences: boolean; fillers: boolean }): EditingOptions {
  return {
    removeSilences: on.silences ? (typeof preset.removeSilences === 'object' ? preset.removeSilences : true) : false,
    removeFillers: on.fillers ? (typeof preset.removeFillers === 'object' ? preset.removeFillers : true) : false,
  };
}
