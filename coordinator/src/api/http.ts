import Router, { type RouterContext } from '@koa/router';
import type Koa from 'koa';
import { z } from 'zod';
import { AppError, badRequest, ERROR_CODES } from '../errors.js';
import { isClosedObject, unknownField, unknownFieldMessage } from '@shorts/common/api/unknown-fields';
// Names the resource schemas (components.schemas) before any route is documented.
import '@shorts/common/api/components';
import type { Principal } from '../tenancy/auth.js';

export interface ApiState {
  principal?: Principal;
  body?: unknown;
  /** A body that could not be read as JSON: answered by the route, after its credentials are checked. */
  bodyError?: AppError;
  /** The body came with a JSON content type (what a cross-site HTML form can never send). */
  bodyTypedJson?: boolean;
  /** The caller's X-Request-Id or a new one (api/request-id.ts). */
  requestId?: string;
}
export type ApiContext = RouterContext<ApiState>;
/**
 * What a middleware ahead of the router gets (the tus wire): the app's state on a plain koa context,
 * where no route has matched (`_matchedRoute` unset). What every request runs (credentials, the rate
 * limit, idempotency) takes this, so a route's context and tus's both fit.
 */
export type ApiRequestContext = Koa.ParameterizedContext<ApiState> & Partial<Pick<ApiContext, '_matchedRoute'>>;

/** Where an Idempotency-Key is claimed, replayed and settled (api/idempotency.ts). */
export interface IdempotencyGate {
  /**
   * undefined when the request carries no key; else a claim to settle, or the stored answer to give
   * again. `request` is what must match for a retry (default: the JSON body), with method and path.
   */
  begin<C extends ApiRequestContext>(
    ctx: C,
    organizationOf: (ctx: C) => Promise<string>,
    request?: unknown,
  ): Promise<IdempotentRequest | undefined>;
}
export interface IdempotentRequest {
  replay?: { status: number; body: unknown; headers: Record<string, string> };
  settle(status: number, body: unknown, headers?: Record<string, string>): Promise<void>;
  fail(err: unknown): Promise<void>;
}

/** Set on an answer that is a stored one, not a new run. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Answers with a stored answer: its status, body and headers, marked as a replay. */
export function answerReplay(ctx: ApiRequestContext, replay: NonNullable<IdempotentRequest['replay']>): void {
  ctx.status = replay.status;
  for (const [name, value] of Object.entries(replay.headers)) ctx.set(name, value);
  ctx.body = replay.body;
  ctx.set(REPLAYED_HEADER, 'true');
}

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteSpec<
  B extends z.ZodType | undefined,
  Q extends z.ZodType | undefined,
  R extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: Method;
  /** Koa path, `:param` style. */
  path: string;
  summary: string;
  tag: string;
  /** false for public routes (health, docs). */
  auth?: boolean;
  body?: B;
  query?: Q;
  /**
   * Success status and its body schema: the OpenAPI document's, and the type the handler must return
   * (so the compiler checks the server against its own document).
   */
  status?: number;
  response?: R;
  /** What a success answers, as the explorer shows it (every route has one: openapi-explorer.test.ts). */
  example?: unknown;
  /** The success body's media type when it is not JSON (a page). */
  responseType?: string;
  /** A request body the explorer prefills, where the body schema's own `.meta({ example })` has none. */
  bodyExample?: unknown;
  description?: string;
  /**
   * For a POST that creates or charges: the organization an Idempotency-Key belongs to, resolved by
   * the route's own organization check (its wording of 400/403). Asked only when the key is sent.
   */
  idempotent?: (ctx: ApiContext) => Promise<string>;
  /** The operation's OpenAPI id; by default the method and path (`getJobsByJobId`). */
  operationId?: string;
  /** Error statuses beyond the ones every route of its kind documents (errorStatuses). */
  errors?: number[];
}

type Infer<T> = T extends z.ZodType ? z.infer<T> : undefined;
/**
 * What a handler answers: its response schema's type, or undefined where it set `ctx.body` (a stream,
 * a redirect) or answers no body. A route without a response schema can only answer undefined.
 */
export type Answer<R> = (R extends z.ZodType ? z.output<R> : never) | undefined;

export function zodMessage(error: z.ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}

/** Routes declare their schemas once: the same schema validates the request and documents it. */
export class Api {
  // Case-sensitive: a route is one path, so nothing keyed on the path (the rate-limit group) can be
  // dodged by writing /API/UPLOADS.
  readonly router = new Router<ApiState>({ sensitive: true });
  private readonly paths: Record<string, Record<string, unknown>> = {};
  private readonly schemas: Record<string, unknown> = {};
  private readonly tags = new Set<string>();

  /**
   * @param authenticate runs before a protected route validates its body and query, so a caller
   *   without valid credentials gets 401 whatever else is wrong with the request.
   */
  constructor(
    private readonly authenticate?: (ctx: ApiContext) => Promise<unknown>,
    private readonly idempotency?: IdempotencyGate,
  ) {}

  route<
    B extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    R extends z.ZodType | undefined = undefined,
  >(spec: RouteSpec<B, Q, R>, handler: (ctx: ApiContext, input: { body: Infer<B>; query: Infer<Q> }) => Promise<Answer<R>>): void {
    this.document(spec);
    this.router[spec.method](spec.path, async (ctx: ApiContext) => {
      if (spec.auth !== false && this.authenticate) await this.authenticate(ctx);
      if (ctx.state.bodyError) throw ctx.state.bodyError;
      const body = spec.body ? parseBody(spec.body, ctx.state.body ?? {}) : undefined;
      const query = spec.query ? parseWith(spec.query, ctx.query, 'query') : undefined;
      const once = spec.idempotent && this.idempotency ? await this.idempotency.begin(ctx, spec.idempotent) : undefined;
      if (once?.replay) {
        answerReplay(ctx, once.replay);
        return;
      }
      let result: unknown;
      try {
        result = await handler(ctx, { body: body as Infer<B>, query: query as Infer<Q> });
      } catch (err) {
        await once?.fail(err);
        throw err;
      }
      if (result !== undefined) {
        ctx.status = spec.status ?? 200;
        ctx.body = result;
      }
      await once?.settle(ctx.status, ctx.body);
    });
  }

  private document(spec: RouteSpec<z.ZodType | undefined, z.ZodType | undefined>): void {
    const oaPath = spec.path.replace(/:(\w+)/g, '{$1}');
    const params: Array<{ name: string | undefined; in: string; required: boolean; schema: unknown }> = [
      ...spec.path.matchAll(/:(\w+)/g),
    ].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (spec.query) {
      const js = this.jsonSchema(spec.query, 'input') as {
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
    const success: Record<string, unknown> = spec.response ? mediaType(this.jsonSchema(spec.response, 'output')) : {};
    // A named schema is a $ref here: its own `.meta({ example })` is still the answer's example.
    const example = spec.example ?? (spec.response ? z.globalRegistry.get(spec.response)?.example : undefined);
    if (example !== undefined) success.example = example;
    // Inline, not $ref'd: clients reading `parameters[].name` see them like any other parameter.
    const headerParams: unknown[] = [REQUEST_ID_PARAMETER];
    if (spec.idempotent) headerParams.push(IDEMPOTENCY_KEY_PARAMETER);
    const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
    const op: Record<string, unknown> = {
      summary: spec.summary,
      tags: [spec.tag],
      parameters: [...params, ...headerParams],
      responses: {
        [String(spec.status ?? 200)]: {
          description: 'Success',
          headers: spec.idempotent
            ? { ...requestIdHeader, 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } }
            : requestIdHeader,
          ...(Object.keys(success).length ? { content: { [spec.responseType ?? 'application/json']: success } } : {}),
        },
        ...Object.fromEntries(
          errorStatuses(spec).map((status) => [String(status), { $ref: `#/components/responses/${ERROR_RESPONSES[status]!.name}` }]),
        ),
      },
    };
    op.operationId = spec.operationId ?? operationIdOf(spec.method, spec.path);
    if (
      Object.values(this.paths).some((ops) =>
        Object.values(ops).some((o) => (o as { operationId?: string }).operationId === op.operationId),
      )
    )
      throw new Error(`Two operations are named ${String(op.operationId)}`);
    op.description = spec.description ?? spec.summary;
    // Public routes say so: no credentials (`security: []`), not "whatever the document's default is".
    op.security = spec.auth !== false ? [{ bearer: [] }, { apiKey: [] }] : [];
    if (spec.body) {
      if (spec.bodyExample !== undefined && !spec.body.safeParse(spec.bodyExample).success) {
        throw new Error(`The request example of ${spec.method} ${spec.path} does not fit its schema`);
      }
      const request = mediaType(this.jsonSchema(spec.body, 'input'));
      if (spec.bodyExample !== undefined) request.example = spec.bodyExample;
      op.requestBody = { required: true, content: { 'application/json': request } };
    }
    (this.paths[oaPath] ??= {})[spec.method] = op;
    this.tags.add(spec.tag);
  }

  /** A zod schema as JSON Schema, its named parts (common/src/api/components.ts) moved to `components.schemas`. */
  jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
    const {
      $schema: _,
      $defs,
      ...rest
    } = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      // A request body refuses fields it does not know (strict input), at every depth it is closed;
      // an answer may gain fields, which clients should ignore (not `additionalProperties: false`).
      override: ({ zodSchema, jsonSchema }) => {
        if (!(zodSchema instanceof z.core.$ZodObject)) return;
        if (io === 'output' || !isClosedObject(zodSchema)) delete jsonSchema.additionalProperties;
        else jsonSchema.additionalProperties = false;
      },
    }) as Record<string, unknown>;
    for (const [name, def] of Object.entries(($defs ?? {}) as Record<string, unknown>)) {
      const moved = toComponentRefs(def);
      const known = this.schemas[name];
      if (known && JSON.stringify(known) !== JSON.stringify(moved)) throw new Error(`The schema ${name} reads differently as ${io}`);
      this.schemas[name] = moved;
    }
    return toComponentRefs(rest) as Record<string, unknown>;
  }

  openApiDocument(
    info: { title: string; version: string; description?: string },
    servers: Array<Record<string, unknown>>,
  ): Record<string, unknown> {
    return {
      openapi: '3.1.0',
      info: {
        ...info,
        contact: { name: 'Video Shorts API', url: 'https://github.com/shorts-render-cluster/docs/api.md' },
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers,
      tags: [...this.tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
      paths: this.paths,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'An API key (vsk_…) or a JWT access token' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
        headers: {
          RequestId: { description: "The request's id: the X-Request-Id sent, or one made for it", schema: { type: 'string' } },
          IdempotentReplayed: {
            description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
            schema: { type: 'string', enum: ['true'] },
          },
          RetryAfter: { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
          RateLimitLimit: {
            description: "Requests a minute the caller's group admits (docs/api.md, Rate limits)",
            schema: { type: 'integer' },
          },
          RateLimitRemaining: { description: 'Requests left in the allowance now', schema: { type: 'integer' } },
          RateLimitReset: { description: 'Seconds until the allowance is whole again', schema: { type: 'integer' } },
        },
        responses: Object.fromEntries(
          Object.entries(ERROR_RESPONSES).map(([status, r]) => [
            r.name,
            {
              description: r.description,
              headers: {
                'X-Request-Id': { $ref: '#/components/headers/RequestId' },
                ...(status === '429' || status === '503'
                  ? {
                      'Retry-After': { $ref: '#/components/headers/RetryAfter' },
                      ...(status === '429'
                        ? {
                            'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
                            'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
                            'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
                          }
                        : {}),
                    }
                  : {}),
              },
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
            },
          ]),
        ),
        schemas: {
          ...Object.fromEntries(Object.entries(this.schemas).sort(([a], [b]) => a.localeCompare(b))),
          Error: {
            type: 'object',
            description: 'Every error body (docs/api.md, "Error codes"); some routes add keys such as storageInfo or phoneNumber',
            properties: {
              error: { type: 'string' },
              message: { type: 'string' },
              code: {
                type: 'string',
                enum: Object.keys(ERROR_CODES),
                description: 'Stable and machine-readable (docs/api.md, "Error codes")',
              },
              requestId: { type: 'string', description: 'The X-Request-Id of the request' },
            },
            required: ['error', 'message', 'code'],
          },
        },
      },
    };
  }
}

/** The error answers an operation documents, each a `components.responses` entry with the Error body. */
const ERROR_RESPONSES: Record<number, { name: string; description: string }> = {
  400: {
    name: 'BadRequest',
    description: 'The request is malformed or fails validation (`invalid_input`), an unknown body field included',
  },
  401: { name: 'Unauthorized', description: 'Missing, wrong or expired credentials' },
  403: { name: 'Forbidden', description: "Not allowed: the organization, the caller's role, the plan, credits or storage" },
  404: { name: 'NotFound', description: 'No such resource (or one of another organization)' },
  409: { name: 'Conflict', description: 'The resource is in a state that refuses this now, or an Idempotency-Key is in flight' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than BODY_LIMIT_BYTES' },
  415: { name: 'UnsupportedMediaType', description: 'The body was not sent as Content-Type: application/json' },
  422: { name: 'IdempotencyKeyReused', description: 'The Idempotency-Key was used with another request in the last 24 h' },
  429: { name: 'TooManyRequests', description: 'Rate limited: retry after Retry-After seconds' },
  500: { name: 'InternalError', description: 'An unexpected server fault (no stack traces or SQL in the body)' },
  502: { name: 'UpstreamFailed', description: 'A provider this request depends on failed' },
  503: { name: 'ServiceUnavailable', description: 'Shedding load: retry after Retry-After seconds' },
};

/** What can go wrong on a route of this shape; the route adds its own (`errors`). */
function errorStatuses(spec: RouteSpec<z.ZodType | undefined, z.ZodType | undefined>): number[] {
  const statuses = new Set([400, 404, 429, 500, ...(spec.errors ?? [])]);
  if (spec.auth !== false) [401, 403].forEach((s) => statuses.add(s));
  if (spec.method !== 'get') statuses.add(409);
  if (spec.body) [413, 415].forEach((s) => statuses.add(s));
  if (spec.idempotent) statuses.add(422);
  return [...statuses].sort((a, b) => a - b);
}

/** `get /api/jobs/:jobId/shorts/:shortId/captions.srt` → `getJobsByJobIdShortsByShortIdCaptionsSrt` */
export function operationIdOf(method: string, path: string): string {
  const words = path
    .split('/')
    .filter((seg) => seg && seg !== 'api')
    .flatMap((seg) => (seg.startsWith(':') ? ['by', seg.slice(1)] : seg.split(/[^A-Za-z0-9]+/)))
    .filter(Boolean);
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join('');
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  Jobs: 'VideoShorts jobs: create, list, retrieve, cancel, retry, delete; editing shorts and transcripts in place',
  Render: 'Rendering one short to MP4 with captions, style and watermark, and its caption files',
  'Brand presets': "The organization's saved render configurations",
  Files: "The organization's stored files and storage summary",
  'Social posting': 'Linked social accounts, posting settings and posts',
  'API keys': "Managing the organization's API keys (signed-in owners and admins)",
  'Studio sessions': "The web studio's sign-in and organization settings",
  Webhooks: "The organization's webhook signing secret and job webhook deliveries",
  Probes: 'Probing a media URL before creating a job',
};

/** `#/$defs/X` (z.toJSONSchema's place for named schemas) → `#/components/schemas/X`. */
function toComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toComponentRefs);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === '$ref' && typeof v === 'string' ? v.replace(/^#\/\$defs\//, '#/components/schemas/') : toComponentRefs(v),
    ]),
  );
}

const REQUEST_ID_PARAMETER = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description:
    'Your id for this request (1-128 of A-Z a-z 0-9 . _ : = + / @ -), echoed in the X-Request-Id response header, in error bodies and on every server log line of the request; one is made when absent or unusable.',
  schema: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._:=+/@-]{1,128}$' },
};
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes a retry safe: the same key with the same body within 24 h (per organization) answers the first response again (with Idempotent-Replayed: true) and does no work; with another body it is 422 idempotency_key_reused; while the first is still running, 409 idempotency_key_in_flight. 1-255 printable ASCII characters (a UUID).',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/**
 * A schema's `.meta({ example })` also becomes its media type's example, which is what explorers
 * (Swagger UI's "Example Value", try-it-out's prefilled body) show first.
 */
function mediaType(schema: Record<string, unknown>): Record<string, unknown> {
  return 'example' in schema ? { schema, example: schema.example } : { schema };
}

/** A body naming a field its schema does not (at any depth) is refused before anything else about it. */
function parseBody<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const unknown = unknownField(schema, value);
  if (unknown) throw badRequest(unknownFieldMessage(unknown));
  return parseWith(schema, value, 'body');
}

function parseWith<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw badRequest(`Invalid ${where}: ${zodMessage(parsed.error)}`);
  return parsed.data;
}

/**
 * Reads a JSON body up to `limit` bytes; a larger one is a clean 413 at once. Bad JSON is a 400 and
 * a body sent with any other content type than JSON (`application/json` or `…+json`), or with none
 * unless it plainly is JSON, a 415: errors that the matched route raises once it has checked the credentials. The contract asks
 * clients for `Content-Type: application/json`; text/plain, XML and form bodies are refused however
 * they look, so what a cross-site HTML form can send never reaches a route. Raw uploads (tus, agents'
 * `/objects/…`) are read by their own routes, before this.
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
      // A body sent with no Content-Type at all that plainly is JSON is still read: scripts forget the
      // header (curl -d, requests' data=), and no HTML form sends a body without one. It does not
      // count as typed JSON: routes a browser's cookies reach check `bodyTypedJson` themselves.
      const untypedJson = !ctx.get('content-type').trim() && /^\s*[{[]/.test(text);
      if (!ctx.state.bodyTypedJson && !untypedJson) {
        ctx.state.bodyError = unsupportedMediaType(ctx.get('content-type'));
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

export const JSON_CONTENT_TYPE_MESSAGE = 'Send Content-Type: application/json with a JSON body';

/** 415: the body is not declared as JSON. */
export function unsupportedMediaType(sent: string): AppError {
  const what = sent.trim() ? `not ${sent.split(';')[0]!.trim().slice(0, 100)}` : 'a Content-Type header was missing';
  return new AppError(415, 'Unsupported Media Type', `${JSON_CONTENT_TYPE_MESSAGE} (${what})`);
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
