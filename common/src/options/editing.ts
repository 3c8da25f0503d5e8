// `options.editing`, jump cuts (issue 24): which silences and filler words a render leaves out. Its
// one schema, pinned to the type in editing-rules.ts, where its one reading is (zod-free, for the
// studio) and which this module re-exports. A brand preset keeps `editing` as given (the API shows
// it so, and an explicit `{}` or `false` in a request still wins over a preset's); a render's spec
// holds it normalised once its request is accepted (`normalisedEditing`). Every reader resolves it
// there: `resolveEditing` and what follows from it, never the fields themselves.
// `npm run lint:option-rules` keeps these rules in the two modules.
import { z } from 'zod';
import { DEFAULT_KEEP_SILENCE_SEC, DEFAULT_MIN_SILENCE_SEC, type EditingOptions, type JumpCutFlags } from './editing-rules.js';

export * from './editing-rules.js';

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

/** The switches a render list shows for its options. */
export const jumpCutFlagsSchema = z
  .object({ removeSilences: z.boolean(), removeFillers: z.boolean() })
  .describe('Whether it was asked to cut silences and filler words');

/** The caption routes' query switches (`true`/`false`; absent: the preset's editing). */
const flag = z
  .enum(['true', 'false'])
  .optional()
  .transform((v) => (v === undefined ? undefined : v === 'true'));
export const editingQueryFields = {
  removeSilences: flag.describe('Re-time for jump cuts that remove silences (true/false; default: the preset’s editing)'),
  removeFillers: flag.describe('Drop filler words and re-time for their cuts (true/false; default: the preset’s editing)'),
};

// Compile-time pins: each schema's output is exactly its type in editing-rules.ts, or this fails to
// compile. Identical, not only assignable both ways (tasks/contract.ts's Same): an optional field
// added to one side alone is still assignable both ways, and every field here is optional.
type Identical<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const schemasMatchTypes: [
  Identical<z.output<typeof editingSchema>, EditingOptions>,
  Identical<z.output<typeof jumpCutFlagsSchema>, JumpCutFlags>,
] = [true, true];
void schemasMatchTypes;
