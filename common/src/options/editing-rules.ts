// `options.editing`, jump cuts (issue 24): its type and its one reading, without the schema. The
// studio reads the rules too (which switches a render shows, what it cuts), and the schema would
// bring zod into the browser, where its `new Function` probe breaks the studio's CSP: so the rules
// live here, free of zod, and editing.ts holds the schema, pinned to these types, and re-exports
// them. Every reader resolves `editing` here: `resolveEditing` and what follows from it, never the
// fields themselves. `npm run lint:option-rules` keeps these rules in the two modules.

export const DEFAULT_MIN_SILENCE_SEC = 0.6;
export const DEFAULT_KEEP_SILENCE_SEC = 0.15;
export const DEFAULT_FILLER_WORDS = ['um', 'uh', 'er', 'erm', 'ah', 'hmm'] as const;

// Type aliases, as z.output gave them: the studio passes them where a record of fields is asked for,
// which an interface (no index signature) is not.
/** Jump cuts: removeSilences (true or {minSilenceSec, keepSec}) and removeFillers (true or {words}).
 *  The output of editing.ts's `editingSchema` (pinned there). */
export type EditingOptions = {
  removeSilences?: boolean | { minSilenceSec?: number; keepSec?: number };
  removeFillers?: boolean | { words?: string[] };
};
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

/** The switches a render list shows for its options: whether it was asked to cut silences and
 *  filler words (editing.ts's `jumpCutFlagsSchema`, pinned there). */
export type JumpCutFlags = {
  removeSilences: boolean;
  removeFillers: boolean;
};

export function jumpCutFlags(editing: EditingOptions | null | undefined): JumpCutFlags {
  const rules = resolveEditing(editing);
  return { removeSilences: !!rules?.silence, removeFillers: !!rules?.fillers };
}

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
