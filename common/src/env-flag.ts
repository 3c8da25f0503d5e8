import { z } from 'zod';

// On/off environment variables read one way in every process. Anything but these words is a
// start-up error: `GRPC_INSECURE=no` must not turn insecure mode on, and a typo must not pass.
const TRUE = new Set(['yes', 'true', '1', 'on']);
const FALSE = new Set(['no', 'false', '0', 'off']);

export const FLAG_WORDS = 'yes/true/1/on or no/false/0/off';

/** true or false for a flag's text; undefined when it is neither. */
export function parseEnvFlag(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  return TRUE.has(word) ? true : FALSE.has(word) ? false : undefined;
}

/** A config field that is a flag: a boolean (set in code) or one of the flag words (from the environment). */
export function envFlag(defaultValue: boolean) {
  return z
    .union([z.boolean(), z.string()])
    .transform((given, ctx) => {
      const value = typeof given === 'boolean' ? given : parseEnvFlag(given);
      if (value === undefined) {
        ctx.addIssue({ code: 'custom', message: `expected ${FLAG_WORDS}, got ${JSON.stringify(given)}` });
        return z.NEVER;
      }
      return value;
    })
    .default(defaultValue);
}
