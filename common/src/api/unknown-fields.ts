// Strict input (issue 37): a JSON body field that its route's schema does not name is refused with
// a 400 naming it, at every depth, so a misspelt field (`predefinedshorts`) never passes silently.
// The schemas stay the one list of known fields: every route's body is checked against its own.
import type { z } from 'zod';

/** Objects whose other fields are accepted as they are: the contract says it does not show them all. */
const OPEN = new WeakSet<object>();

/** Marks an object schema as open: fields it does not name are not refused (nor kept, unless it is loose). */
export function openFields<T extends z.ZodType>(schema: T): T {
  OPEN.add(schema);
  return schema;
}

/**
 * Whether an object schema refuses fields it does not name (what unknownField checks): as JSON
 * Schema, `additionalProperties: false` on a request body.
 */
export function isClosedObject(schema: z.ZodType): boolean {
  return knownNames(schema) !== undefined && defOf(schema).type === 'object';
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
  discriminator?: string;
  values?: unknown[];
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** `options.predefinedShorts[0].foo` */
function join(path: Array<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The names an object schema takes (an intersection's from both sides); undefined when any is taken. */
function knownNames(schema: z.ZodType, depth = 0): Set<string> | undefined {
  if (depth > 20 || OPEN.has(schema)) return undefined;
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      // A loose object (catchall unknown) keeps any field; a strict one (catchall never) refuses them here.
      if (def.catchall && defOf(def.catchall).type !== 'never') return undefined;
      return new Set(Object.keys(def.shape ?? {}));
    case 'intersection': {
      const l = knownNames(def.left!, depth + 1);
      const r = knownNames(def.right!, depth + 1);
      return l && r ? new Set([...l, ...r]) : undefined;
    }
    default:
      return undefined;
  }
}

/**
 * The first field of `value` that `schema` does not name, as a path (`options.foo`), or undefined.
 * Values of the wrong type are left to the schema's own validation.
 */
export function unknownField(schema: z.ZodType, value: unknown, path: Array<string | number> = [], depth = 0): string | undefined {
  if (depth > 64 || OPEN.has(schema)) return undefined;
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'nonoptional':
    case 'readonly':
    case 'catch':
      return unknownField(def.innerType!, value, path, depth + 1);
    case 'lazy':
      return unknownField(def.getter!(), value, path, depth + 1);
    case 'pipe': {
      // A transform's input is its `in`; a preprocess (transform first) checks what it feeds `out`.
      const first = defOf(def.in!).type === 'transform' ? def.out! : def.in!;
      return unknownField(first, value, path, depth + 1);
    }
    case 'array':
      if (!Array.isArray(value)) return undefined;
      for (let i = 0; i < value.length; i++) {
        const found = unknownField(def.element!, value[i], [...path, i], depth + 1);
        if (found) return found;
      }
      return undefined;
    case 'record':
      if (!isRecord(value)) return undefined;
      for (const [k, v] of Object.entries(value)) {
        const found = unknownField(def.valueType!, v, [...path, k], depth + 1);
        if (found) return found;
      }
      return undefined;
    case 'union': {
      // Unknown only when every alternative refuses a field: the first such answer is reported.
      let first: string | undefined;
      let options = def.options ?? [];
      // A discriminated union answers for the alternative its discriminator names.
      if (def.discriminator && isRecord(value)) {
        const disc = def.discriminator;
        const named = options.filter((o) => {
          const field = defOf(o).shape?.[disc];
          return field && (defOf(field).values ?? []).includes(value[disc]);
        });
        if (named.length) options = named;
      }
      for (const option of options) {
        const found = unknownField(option, value, path, depth + 1);
        if (found === undefined) return undefined;
        first ??= found;
      }
      return first;
    }
    case 'object':
    case 'intersection': {
      if (!isRecord(value)) return undefined;
      const names = knownNames(schema);
      if (names) {
        for (const k of Object.keys(value)) if (!names.has(k)) return join([...path, k]);
      }
      const parts = def.type === 'object' ? [schema] : [def.left!, def.right!];
      for (const part of parts) {
        const shape = defOf(part).type === 'object' ? (defOf(part).shape ?? {}) : {};
        for (const [k, child] of Object.entries(shape)) {
          if (!(k in value)) continue;
          const found = unknownField(child, value[k], [...path, k], depth + 1);
          if (found) return found;
        }
        if (defOf(part).type !== 'object') {
          const found = unknownField(part, value, path, depth + 1);
          if (found) return found;
        }
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** The message of the 400 an unknown field gets. */
export const unknownFieldMessage = (path: string): string => `Unknown field "${path}"`;
