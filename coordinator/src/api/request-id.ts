import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import { withLogFields } from '@shorts/common/logger';

/** What a caller's X-Request-Id may be: a UUID, a ULID, a trace id; nothing that could forge a log line. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:=+/@-]{1,128}$/;

/** The caller's X-Request-Id when it is sane, else a new UUID. */
export function requestIdOf(header: string | undefined): string {
  return header && SANE_REQUEST_ID.test(header) ? header : randomUUID();
}

/**
 * The outermost middleware: every answer carries X-Request-Id (errors put it in their body too,
 * api/errors.ts), and every log line written while the request runs, by any logger, carries
 * `requestId`.
 */
export function requestIdMiddleware(): Koa.Middleware {
  return async (ctx, next) => {
    const requestId = requestIdOf(ctx.get('x-request-id') || undefined);
    (ctx.state as { requestId?: string }).requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    await withLogFields({ requestId }, next);
  };
}
