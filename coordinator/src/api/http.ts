import Router, { type RouterContext } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { AppError, badRequest } from '../errors.js';
import type { Principal } from '../tenancy/auth.js';

export interface ApiState {
  principal?: Principal;
  body?: unknown;
  /** A body that could not be read as JSON: answered by the route, after its credentials are checked. */
  bodyError?: AppError;
  /** The body came with a JSON content type (what a cross-site HTML form can never send). */
  bodyTypedJson?: boolean;
}
export type ApiContext = RouterContext<ApiState>;

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined> {
  method: Method;
  /** Koa path, `:param` style. */
  path: string;
  summary: string;
  tag: string;
  /** false for public routes (health, docs). */
  auth?: boolean;
  body?: B;
  query?: Q;
  /** Success status and its body schema (for the OpenAPI document). */
  status?: number;
  response?: z.ZodType;
  /** What a success answers, as the explorer shows it (every route has one: openapi-explorer.test.ts). */
  example?: unknown;
  /** The success body's media type when it is not JSON (a page). */
  responseType?: string;
  /** A request body the explorer prefills, where the body schema's own `.meta({ example })` has none. */
  bodyExample?: unknown;
  description?: string;
}

type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;

export function zodMessage(error: z.ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}

/** Routes declare their schemas once: the same schema validates the request and documents it. */
export class Api {
  // Case-sensitive: a route is one path, so nothing keyed on the path (the rate-limit group) can be
  // dodged by writing /API/UPLOADS.
  readonly router = new Router<ApiState>({ sensitive: true });
  private readonly paths: Record<string, Record<string, unknown>> = {};

  /**
   * @param authenticate runs before a protected route validates its body and query, so a caller
   *   without valid credentials gets 401 whatever else is wrong with the request.
   */
  constructor(private readonly authenticate?: (ctx: ApiContext) => Promise<unknown>) {}

  route<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined>(
    spec: RouteSpec<B, Q>,
    handler: (ctx: ApiContext, input: { body: Infer<B>; query: Infer<Q> }) => Promise<unknown>,
  ): void {
    this.document(spec);
    this.router[spec.method](spec.path, async (ctx: ApiContext) => {
      if (spec.auth !== false && this.authenticate) await this.authenticate(ctx);
      if (ctx.state.bodyError) throw ctx.state.bodyError;
      const body = spec.body ? parseWith(spec.body, ctx.state.body ?? {}, 'body') : undefined;
      const query = spec.query ? parseWith(spec.query, ctx.query, 'query') : undefined;
      const result = await handler(ctx, { body: body as Infer<B>, query: query as Infer<Q> });
      if (result !== undefined) {
        ctx.status = spec.status ?? 200;
        ctx.body = result;
      }
    });
  }

  private document(spec: RouteSpec<z.ZodType | undefined, z.ZodType | undefined>): void {
    const oaPath = spec.path.replace(/:(\w+)/g, '{$1}');
    const params: Array<{ name: string | undefined; in: string; required: boolean; schema: unknown }> = [
      ...spec.path.matchAll(/:(\w+)/g),
    ].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (spec.query) {
      const js = z.toJSONSchema(spec.query, { io: 'input', unrepresentable: 'any' }) as {
        properties?: Record<string, unknown>;
        required?: string[];
      };
      for (const [name, schema] of Object.entries(js.properties ?? {})) {
        params.push({ name, in: 'query', required: (js.required ?? []).includes(name), schema });
      }
    }
    if (spec.response && spec.example !== undefined && !spec.response.safeParse(spec.example).success) {
      throw new Error(`The response example of ${spec.method} ${spec.path} does not fit its schema`);
    }
    const success: Record<string, unknown> = spec.response
      ? mediaType(z.toJSONSchema(spec.response, { io: 'output', unrepresentable: 'any' }))
      : {};
    if (spec.example !== undefined) success.example = spec.example;
    const op: Record<string, unknown> = {
      summary: spec.summary,
      tags: [spec.tag],
      parameters: params,
      responses: {
        [String(spec.status ?? 200)]: {
          description: 'Success',
          ...(Object.keys(success).length ? { content: { [spec.responseType ?? 'application/json']: success } } : {}),
        },
        default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
    };
    if (spec.description) op.description = spec.description;
    if (spec.auth !== false) op.security = [{ bearer: [] }, { apiKey: [] }];
    if (spec.body) {
      if (spec.bodyExample !== undefined && !spec.body.safeParse(spec.bodyExample).success) {
        throw new Error(`The request example of ${spec.method} ${spec.path} does not fit its schema`);
      }
      const request = mediaType(z.toJSONSchema(spec.body, { io: 'input', unrepresentable: 'any' }));
      if (spec.bodyExample !== undefined) request.example = spec.bodyExample;
      op.requestBody = { required: true, content: { 'application/json': request } };
    }
    (this.paths[oaPath] ??= {})[spec.method] = op;
  }

  openApiDocument(info: { title: string; version: string; description?: string }): Record<string, unknown> {
    return {
      openapi: '3.1.0',
      info,
      paths: this.paths,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key (vsk_…) or a JWT access token' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
        schemas: {
          Error: { type: 'object', properties: { error: { type: 'string' }, message: { type: 'string' } }, required: ['error', 'message'] },
        },
      },
    };
  }
}

/**
 * A schema's `.meta({ example })` also becomes its media type's example, which is what explorers
 * (Swagger UI's "Example Value", try-it-out's prefilled body) show first.
 */
function mediaType(schema: Record<string, unknown>): Record<string, unknown> {
  return 'example' in schema ? { schema, example: schema.example } : { schema };
}

function parseWith<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw badRequest(`Invalid ${where}: ${zodMessage(parsed.error)}`);
  return parsed.data;
}

/**
 * Reads a JSON body up to `limit` bytes; a larger one is a clean 413 at once. Bad JSON or another
 * content type is a 400 that the matched route raises once it has checked the credentials.
 * The contract asks clients for `Content-Type: application/json`; a body that plainly is JSON is
 * still read without it (clients forget the header, and API keys and bearer tokens cannot be sent
 * by a cross-site form anyway). Routes a browser's cookies reach check `bodyTypedJson` themselves.
 */
export function jsonBody(limit: number): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    if (!['POST', 'PUT', 'PATCH'].includes(ctx.method) || ctx.path.startsWith('/objects/')) return next();
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > limit) throw new AppError(413, 'Payload Too Large', `Request body exceeds ${limit} bytes`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (size > limit) throw new AppError(413, 'Payload Too Large', `Request body exceeds ${limit} bytes`);
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() !== '') {
      ctx.state.bodyTypedJson = typeof ctx.is('application/json', '+json') === 'string';
      if (!ctx.state.bodyTypedJson && !/^\s*[{[]/.test(text)) {
        ctx.state.bodyError = badRequest('Send Content-Type: application/json with a JSON body');
      } else {
        try {
          ctx.state.body = JSON.parse(text);
        } catch {
          ctx.state.bodyError = badRequest('Request body is not valid JSON');
        }
        if (ctx.state.body !== undefined && !wellFormed(ctx.state.body)) {
          ctx.state.body = undefined;
          ctx.state.bodyError = badRequest(
            'Request body holds a lone surrogate escape (\\ud800-\\udfff): text must be well-formed Unicode',
          );
        }
      }
    }
    return next();
  };
}

// JSON may escape half of a surrogate pair; Postgres refuses such text inside jsonb, so it is
// refused here, where the client can be told, rather than deep in a query as a 500.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
function wellFormed(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return false;
    } else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (LONE_SURROGATE.test(k)) return false;
        stack.push(child);
      }
    }
  }
  return true;
}

/** A raw `limit` or `offset` query value; a repeated one arrives as an array (and is refused by pageParams). */
export const pageQueryParam = z.union([z.string(), z.array(z.string())]).optional();

/**
 * The largest list offset: far past any organization's rows, and inside both a JavaScript number's
 * exact integers and Postgres's bigint (an offset of 9223372036854775807 reached the query and
 * answered 500).
 */
export const MAX_LIST_OFFSET = 1_000_000_000;

/** A list's `limit` (1-100) and `offset` (0 to MAX_LIST_OFFSET); anything unusable, a repeated one
 *  included, gets the contract's exact message (section 7, the file list; the job list answers the same). */
export function pageParams(
  query: { limit?: string | string[]; offset?: string | string[] },
  defaultLimit: number,
): { limit: number; offset: number } {
  const offset = pageParam(query.offset, 0, (n) => n >= 0, 'Offset must be a non-negative number');
  if (offset > MAX_LIST_OFFSET) throw badRequest(`Offset must be at most ${MAX_LIST_OFFSET}`);
  return {
    limit: pageParam(query.limit, defaultLimit, (n) => n >= 1 && n <= 100, 'Limit must be between 1 and 100'),
    offset,
  };
}

function pageParam(raw: string | string[] | undefined, def: number, ok: (n: number) => boolean, message: string): number {
  if (raw === undefined || (typeof raw === 'string' && raw.trim() === '')) return def;
  const n = typeof raw === 'string' ? Number(raw) : NaN;
  if (!Number.isInteger(n) || !ok(n)) throw badRequest(message);
  return n;
}

/** An integer query parameter (they arrive as strings), bounded: a number past what the route can
 *  use is the caller's mistake (400 with `message`), never a value handed on to SQL. */
export const queryInt = (def: number, bounds: { min: number; max: number; message: string }) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .meta({ minimum: bounds.min, maximum: bounds.max })
    .transform((v, ctx) => {
      if (v === undefined || v === '') return def;
      const n = Number(v);
      if (!Number.isInteger(n)) {
        ctx.addIssue({ code: 'custom', message: 'must be an integer' });
        return z.NEVER;
      }
      if (n < bounds.min || n > bounds.max) {
        ctx.addIssue({ code: 'custom', message: bounds.message });
        return z.NEVER;
      }
      return n;
    });
