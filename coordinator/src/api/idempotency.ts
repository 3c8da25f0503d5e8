// Idempotency-Key on the POSTs that create or charge (RouteSpec.idempotent): a retry with the same
// key and body within 24 h gets the first answer again and does no work. Keys are per organization
// and live in Postgres (migration 019), so any coordinator behind the balancer can answer the retry.
import { createHash } from 'node:crypto';
import type { Logger } from '@shorts/common/logger';
import type { Db } from '../db/db.js';
import { AppError, appErrorOf, badRequest } from '../errors.js';
import type { ApiRequestContext, IdempotencyGate, IdempotentRequest } from './http.js';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_TTL_SEC = 24 * 3600;
/** A claim this old that never settled belongs to a coordinator that died mid-request: a retry may take it over. */
const ABANDONED_AFTER_SEC = 10 * 60;
/** Printable ASCII, as Stripe and the IETF draft's examples use (UUIDs, ULIDs, hashes). */
const SANE_KEY = /^[\x21-\x7e]{1,255}$/;
// 4xx answers a retry must not get again: malformed input (the client fixes the body and tries the
// same key again, as if it had failed validation before any work) and refusals that another run may
// well not meet (a conflict that clears, a refilled rate bucket). Every other 4xx changed nothing
// and is replayed; 5xx are never stored.
const NOT_STORED_4XX = new Set([400, 408, 409, 422, 425, 429]);

interface KeyRow {
  request_hash: string;
  status: number | null;
  response: unknown;
  response_headers: Record<string, string> | null;
}

/** `value` as JSON with object keys sorted, so the same body sent with its keys in another order is the same body. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export class IdempotencyKeys implements IdempotencyGate {
  private lastSweepMs = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly ttlSec = IDEMPOTENCY_TTL_SEC,
  ) {}

  async begin<C extends ApiRequestContext>(
    ctx: C,
    organizationOf: (ctx: C) => Promise<string>,
    request: unknown = ctx.state.body ?? null,
  ): Promise<IdempotentRequest | undefined> {
    const key = ctx.get(IDEMPOTENCY_HEADER);
    if (!key) return undefined;
    if (!SANE_KEY.test(key)) {
      throw badRequest(`${IDEMPOTENCY_HEADER} must be 1-255 printable ASCII characters`).withCode('idempotency_key_invalid');
    }
    const organizationId = await organizationOf(ctx);
    const hash = createHash('sha256')
      .update(`${ctx.method} ${ctx.path}\n${canonicalJson(request)}`)
      .digest('hex');
    this.sweep();
    const claimed = await this.db.one(
      `INSERT INTO idempotency_keys (organization_id, key, request_hash, expires_at)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4))
       ON CONFLICT (organization_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, status = NULL, response = NULL, response_headers = NULL, created_at = now(),
             expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= now()
            OR (idempotency_keys.status IS NULL AND idempotency_keys.request_hash = EXCLUDED.request_hash
                AND idempotency_keys.created_at <= now() - make_interval(secs => $5))
       RETURNING 1`,
      [organizationId, key, hash, this.ttlSec, ABANDONED_AFTER_SEC],
    );
    if (!claimed) {
      const row = await this.db.one<KeyRow>(
        'SELECT request_hash, status, response, response_headers FROM idempotency_keys WHERE organization_id = $1 AND key = $2',
        [organizationId, key],
      );
      // Gone between the two statements (swept, or released by a failed first run): the caller retries.
      if (!row) throw inFlight();
      if (row.request_hash !== hash) {
        throw new AppError(
          422,
          'Unprocessable Entity',
          `This ${IDEMPOTENCY_HEADER} was already used with another request body or route in the last 24 hours; use a new key for a new request`,
        ).withCode('idempotency_key_reused');
      }
      if (row.status === null) throw inFlight();
      this.log.info('idempotent replay', { organizationId, status: row.status });
      return {
        replay: { status: row.status, body: row.response, headers: row.response_headers ?? {} },
        settle: async () => undefined,
        fail: async () => undefined,
      };
    }
    const release = () =>
      this.db.query('DELETE FROM idempotency_keys WHERE organization_id = $1 AND key = $2 AND status IS NULL', [organizationId, key]);
    const store = (status: number, body: unknown, headers?: Record<string, string>) =>
      this.db.query(
        `UPDATE idempotency_keys SET status = $3, response = $4, response_headers = $5
          WHERE organization_id = $1 AND key = $2 AND status IS NULL`,
        [organizationId, key, status, JSON.stringify(body ?? null), headers ? JSON.stringify(headers) : null],
      );
    return {
      settle: async (status, body, headers) => {
        await store(status, body, headers).catch((err: unknown) => this.log.error('idempotency: could not store the answer', { err }));
      },
      fail: async (err) => {
        const appErr = appErrorOf(err);
        const replayable = appErr && appErr.status >= 400 && appErr.status < 500 && !NOT_STORED_4XX.has(appErr.status);
        await (replayable ? store(appErr.status, appErr.toBody()) : release()).catch((e: unknown) =>
          this.log.error('idempotency: could not settle a failed request', { err: e }),
        );
      },
    };
  }

  /** Expired keys carry nothing: delete them now and then (at most once a minute per process). */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweepMs < 60_000) return;
    this.lastSweepMs = now;
    void this.sweepExpired().catch((err: unknown) => this.log.warn('idempotency: sweeping expired keys failed', { err }));
  }

  async sweepExpired(): Promise<number> {
    const rows = await this.db.query('DELETE FROM idempotency_keys WHERE expires_at <= now() RETURNING 1');
    return rows.length;
  }
}

const inFlight = () =>
  new AppError(409, 'Conflict', `A request with this ${IDEMPOTENCY_HEADER} is still being processed; retry it later`).withCode(
    'idempotency_key_in_flight',
  );
