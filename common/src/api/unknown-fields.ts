// Strict input (issue 37): a JSON body field that its route's schema does not name is refused with
// a 400 naming it, at every depth, so a misspelt field (`predefinedshorts`) never passes silently.
// The schemas stay the one list of known fields: every route's body is checked against its own.
import { z } from 'zod';

/** Any zod schema, classic or core: what the walk below reads, by zod's own classes. */
type Schema = z.core.$ZodType;

// zod's classes answer `instanceof` by the traits a schema was built with (a subclass such as an
// exact optional or a discriminated union carries its base's), so each test below narrows to the
// class whose `_zod.def` the walk reads. A codec is a pipe that is not built as one: it is named too.
const $ = z.core;

/** Objects whose other fields are accepted as they are: the contract says it does not show them all. */
const OPEN = new WeakSet<object>();

/** Marks an object schema as open: fields it does not name are not refused (nor kept, unless it is loose). */
export function openFields<T extends Schema>(schema: T): T {
  OPEN.add(schema);
  return schema;
}

/**
 * Whether an object schema refuses fields it does not name (what unknownField checks): as JSON
 * Schema, `additionalProperties: false` on a request body.
 */
export function isClosedObject(schema: Schema): boolean {
  return knownNames(schema) !== undefined && schema instanceof $.$ZodObject;
}

/** The schema inside a wrapper whose values are its inner type's (optional, default, catch, …). */
function innerOf(schema: Schema): Schema | undefined {
  if (
    schema instanceof $.$ZodOptional ||
    schema instanceof $.$ZodNullable ||
    schema instanceof $.$ZodDefault ||
    schema instanceof $.$ZodPrefault ||
    schema instanceof $.$ZodNonOptional ||
    schema instanceof $.$ZodReadonly ||
    schema instanceof $.$ZodCatch
  ) {
    return schema._zod.def.innerType;
  }
  return undefined;
}

const isPipe = (schema: Schema): schema is z.core.$ZodPipe | z.core.$ZodCodec =>
  schema instanceof $.$ZodPipe || schema instanceof $.$ZodCodec;

/** The values a discriminator field takes: a literal's; none for any other schema. */
const literalValues = (schema: Schema | undefined): readonly unknown[] => (schema instanceof $.$ZodLiteral ? schema._zod.def.values : []);

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** `options.predefinedShorts[0].foo` */
function join(path: Array<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** The names an object schema takes (an intersection's from both sides); undefined when any is taken. */
function knownNames(schema: Schema, depth = 0): Set<string> | undefined {
  if (depth > 20 || OPEN.has(schema)) return undefined;
  if (schema instanceof $.$ZodObject) {
    // A loose object (catchall unknown) keeps any field; a strict one (catchall never) refuses them here.
    const { catchall, shape } = schema._zod.def;
    if (catchall && !(catchall instanceof $.$ZodNever)) return undefined;
    return new Set(Object.keys(shape));
  }
  if (schema instanceof $.$ZodIntersection) {
    const l = knownNames(schema._zod.def.left, depth + 1);
    const r = knownNames(schema._zod.def.right, depth + 1);
    return l && r ? new Set([...l, ...r]) : undefined;
  }
  return undefined;
}

/**
 * The first field of `value` that `schema` does not name, as a path (`options.foo`), or undefined.
 * Values of the wrong type are left to the schema's own validation.
 */
export function unknownField(schema: Schema, value: unknown, path: Array<string | number> = [], depth = 0): string | undefined {
  if (depth > 64 || OPEN.has(schema)) return undefined;
  const inner = innerOf(schema);
  if (inner) return unknownField(inner, value, path, depth + 1);
  if (schema instanceof $.$ZodLazy) return unknownField(schema._zod.def.getter(), value, path, depth + 1);
  if (isPipe(schema)) {
    // A transform's input is its `in`; a preprocess (transform first) checks what it feeds `out`.
    const { in: input, out } = schema._zod.def;
    return unknownField(input instanceof $.$ZodTransform ? out : input, value, path, depth + 1);
  }
  if (schema instanceof $.$ZodArray) {
    if (!Array.isArray(value)) return undefined;
    for (let i = 0; i < value.length; i++) {
      const found = unknownField(schema._zod.def.element, value[i], [...path, i], depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (schema instanceof $.$ZodRecord) {
    if (!isRecord(value)) return undefined;
    for (const [k, v] of Object.entries(value)) {
      const found = unknownField(schema._zod.def.valueType, v, [...path, k], depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  if (schema instanceof $.$ZodUnion) return unknownInUnion(schema, value, path, depth);
  if (schema instanceof $.$ZodObject || schema instanceof $.$ZodIntersection) return unknownInObject(schema, value, path, depth);
  return undefined;
}

/** A union: unknown only when every alternative refuses a field; the first such answer is reported. */
function unknownInUnion(schema: z.core.$ZodUnion, value: unknown, path: Array<string | number>, depth: number): string | undefined {
  let first: string | undefined;
  let options = schema._zod.def.options;
  // A discriminated union answers for the alternative its discriminator names.
  if (schema instanceof $.$ZodDiscriminatedUnion && isRecord(value)) {
    const disc = schema._zod.def.discriminator;
    const named = options.filter((o) => {
      const field = o instanceof $.$ZodObject ? o._zod.def.shape[disc] : undefined;
      return literalValues(field).includes(value[disc]);
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

/** An object or an intersection: its own unknown names first, then each known field's value. */
function unknownInObject(
  schema: z.core.$ZodObject | z.core.$ZodIntersection,
  value: unknown,
  path: Array<string | number>,
  depth: number,
): string | undefined {
  if (!isRecord(value)) return undefined;
  const names = knownNames(schema);
  if (names) {
    for (const k of Object.keys(value)) if (!names.has(k)) return join([...path, k]);
  }
  const parts = schema instanceof $.$ZodObject ? [schema] : [schema._zod.def.left, schema._zod.def.right];
  for (const part of parts) {
    const shape = part instanceof $.$ZodObject ? part._zod.def.shape : {};
    for (const [k, child] of Object.entries(shape)) {
      if (!(k in value)) continue;
      const found = unknownField(child, value[k], [...path, k], depth + 1);
      if (found) return found;
    }
    if (!(part instanceof $.$ZodObject)) {
      const found = unknownField(part, value, path, depth + 1);
      if (found) return found;
    }
  }
  return undefined;
}

/** The message of the 400 an unknown field gets. */
export const unknownFieldMessage = (path: string): string => `Unknown field "${path}"`;
