import type Koa from 'koa';
import { appErrorOf, errorCodeOf, ServiceBusyError, TooManyRequestsError } from '../errors.js';
import type { Logger } from '@shorts/common/logger';
import type { Metrics } from '../metrics/metrics.js';

/** Postgres refuses NUL in text (22021) and in JSON strings (22P05): the client's input, not a fault. */
const unstorableText = (err: unknown) => ['22021', '22P05'].includes((err as { code?: string } | null)?.code ?? '');

/** The route template, never the raw path: ids in paths would make a series per job. */
function routeLabel(ctx: Koa.Context): string {
  const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
  if (matched) return String(matched);
  // /mcp is no router route (mcp/http-transport.ts): named as one.
  if (ctx.path === '/mcp') return '/mcp';
  return ctx.path.startsWith('/objects/') ? '/objects/*' : 'unmatched';
}

/**
 * Every JSON error body, whoever wrote it (a thrown AppError, the router's 405, a route's own 404),
 * gains `code` (errors.ts ERROR_CODES) and the request's `requestId`; `error` and `message` stay.
 */
function completeErrorBody(ctx: Koa.Context): void {
  const body = ctx.body as Record<string, unknown> | null | undefined;
  if (ctx.status < 400 || !body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return;
  if (typeof body.error !== 'string') return;
  const requestId = (ctx.state as { requestId?: string }).requestId;
  ctx.body = { ...body, code: body.code ?? errorCodeOf(ctx.status, body.error), ...(requestId ? { requestId } : {}) };
}

/** The one place an error becomes an HTTP answer. 5xx bodies never carry stack traces or SQL. */
export function errorMiddleware(log: Logger, metrics: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { error: 'Not Found', message: `No route for ${ctx.method} ${ctx.path}` };
      } else if (ctx.status >= 400 && ctx.body == null) {
        // The router's 405 (a known path, another method) and 501, which Koa would answer as text.
        ctx.body = { error: ctx.message, message: `${ctx.method} is not supported on ${ctx.path}` };
      }
    } catch (err) {
      const appErr = appErrorOf(err);
      if (unstorableText(err)) {
        ctx.status = 400;
        ctx.body = { error: 'Bad Request', message: 'Text values cannot contain NUL (U+0000) characters' };
      } else if (appErr) {
        ctx.status = appErr.status;
        ctx.body = appErr.toBody();
        if (appErr instanceof TooManyRequestsError || appErr instanceof ServiceBusyError)
          ctx.set('Retry-After', String(Math.max(1, Math.ceil(appErr.retryAfterSec))));
        if (appErr.status >= 500 && !(appErr instanceof ServiceBusyError))
          log.error('request failed', { method: ctx.method, path: ctx.path, err });
      } else {
        log.error('unhandled error', { method: ctx.method, path: ctx.path, err });
        ctx.status = 500;
        ctx.body = { error: 'Internal server error', message: 'Internal server error' };
      }
    }
    completeErrorBody(ctx);
    metrics.httpRequests.labels(ctx.method, routeLabel(ctx), String(ctx.status)).observe(Number(process.hrtime.bigint() - started) / 1e9);
  };
}
