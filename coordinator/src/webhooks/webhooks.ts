import { createHmac } from 'node:crypto';
import type PgBoss from 'pg-boss';
import type { Db, Queryable } from '../db/db.js';
import type { Logger } from '@shorts/common/logger';
import { safeFetch, FetchRefusedError, type SafeResponse } from '@shorts/common/net/safe-fetch';
import { parseAllowlist } from '@shorts/common/net/address-policy';
import { backoffDelay } from '@shorts/common/retry';
import type { Metrics } from '../metrics/metrics.js';

export const WEBHOOK_QUEUE = 'webhook-delivery';

/** Seven tries: with the default 60 s first delay the six waits span about an hour (DECISIONS.md). */
export const WEBHOOK_MAX_ATTEMPTS = 7;

/** A receiver's Retry-After is honoured up to this; past it the receiver is treated as gone for now. */
const MAX_RETRY_AFTER_SEC = 6 * 3600;

export interface WebhookDelivery {
  organizationId: string;
  jobId: string;
  url: string;
  event: 'job.completed' | 'job.failed';
  /** The exact JSON body, fixed when the event happened. */
  body: string;
  /** 1 for the first try; each retry is queued as its own pg-boss job carrying the next number. */
  attempt?: number;
}

/** `X-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">` (DECISIONS.md). */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** pg-boss writes through the caller's transaction, so the event is queued exactly when the job's
 *  final state commits. */
const txExecutor = (c: Queryable): PgBoss.Db => ({ executeSql: (text, values) => c.query(text, values) });

// pg-boss's own retries only cover the worker itself failing (the database, a crash): a delivery that
// fails is retried by queueing the next attempt, whose delay can honour the receiver's Retry-After.
const CRASH_RETRIES: PgBoss.SendOptions = { retryLimit: 2, retryDelay: 5, retryBackoff: true };

export async function enqueueWebhook(boss: PgBoss, c: Queryable, delivery: WebhookDelivery): Promise<void> {
  await boss.send(WEBHOOK_QUEUE, { ...delivery, attempt: 1 }, { ...CRASH_RETRIES, db: txExecutor(c) } as PgBoss.SendOptions);
}

export type AttemptOutcome =
  | { delivered: true; statusCode: number }
  | { delivered: false; statusCode: number | null; error: string; retry: boolean; retryAfterSec?: number };

/**
 * What one attempt's result means, decided on the refusal's code and the HTTP status, never on an
 * error message's wording. Only an address the guard refuses (or a URL that is not one) is final:
 * it will not become public on retry. A receiver that is down, slow, unresolvable or overloaded is
 * tried again.
 */
export function classifyAttempt(
  result: { response: Pick<SafeResponse, 'status' | 'headers'> } | { error: unknown },
  now = Date.now(),
): AttemptOutcome {
  if ('response' in result) {
    const { status, headers } = result.response;
    if (status >= 200 && status < 300) return { delivered: true, statusCode: status };
    const retryAfterSec = status === 429 || status === 503 ? parseRetryAfter(headers['retry-after'], now) : undefined;
    return {
      delivered: false,
      statusCode: status,
      error: `receiver answered HTTP ${status}`,
      retry: true,
      ...(retryAfterSec !== undefined ? { retryAfterSec } : {}),
    };
  }
  const err = result.error;
  if (!(err instanceof FetchRefusedError))
    return { delivered: false, statusCode: null, error: `delivery failed: ${(err as Error).message}`, retry: true };
  switch (err.code) {
    case 'blocked_host':
    case 'invalid_url':
      return { delivered: false, statusCode: null, error: `refused: ${err.message}`, retry: false };
    case 'timeout':
    case 'network':
    case 'too_large':
    case 'too_many_redirects':
    case 'http_status':
      return { delivered: false, statusCode: null, error: `delivery failed: ${err.message}`, retry: true };
  }
}

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  const seconds = /^\d+$/.test(text) ? Number(text) : (Date.parse(text) - now) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(Math.max(0, seconds), MAX_RETRY_AFTER_SEC);
}

/** Exponential backoff from `baseSec`, each wait spread over ±25 % so receivers recovering from an
 *  outage are not hit by every queued event in the same second; never sooner than Retry-After. */
export function retryDelaySec(failedAttempt: number, baseSec: number, retryAfterSec?: number, random = Math.random): number {
  const backoff = backoffDelay(failedAttempt, { first: baseSec, jitter: 0.25, random });
  return Math.max(1, Math.ceil(Math.max(backoff, retryAfterSec ?? 0)));
}

export async function startWebhookWorker(deps: {
  boss: PgBoss;
  db: Db;
  log: Logger;
  metrics: Metrics;
  fetchAllowlist: string;
  /** First retry's delay (WEBHOOK_RETRY_DELAY_SEC). */
  retryDelaySec: number;
  /** One attempt's limit (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
}): Promise<void> {
  const { boss, log } = deps;
  await boss.createQueue(WEBHOOK_QUEUE);
  const allowlist = parseAllowlist(deps.fetchAllowlist);
  await boss.work<WebhookDelivery>(WEBHOOK_QUEUE, { pollingIntervalSeconds: 0.5, includeMetadata: true }, async ([job]) => {
    const meta = job as PgBoss.JobWithMetadata<WebhookDelivery>;
    const d = meta.data;
    const secretRow = await deps.db.one<{ secret: string }>(`SELECT webhook_secret AS "secret" FROM organizations WHERE id = $1`, [
      d.organizationId,
    ]);
    const secret: string | undefined = secretRow?.secret;
    if (!secret) return; // organization gone: nothing to deliver
    // Events queued before attempts were numbered in the data relied on pg-boss's retry count.
    const attempt = d.attempt ?? meta.retryCount + 1;
    let outcome: AttemptOutcome;
    try {
      const response = await safeFetch(d.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'shorts-webhooks/1',
          'x-signature': signWebhook(secret, d.body, Math.floor(Date.now() / 1000)),
          'x-webhook-event': d.event,
          'x-webhook-attempt': String(attempt),
        },
        body: d.body,
        allowlist,
        timeoutMs: deps.timeoutMs,
        maxBytes: 64 * 1024,
      });
      outcome = classifyAttempt({ response });
    } catch (error) {
      outcome = classifyAttempt({ error });
    }
    const error = outcome.delivered ? null : outcome.error;
    const nextInSec =
      !outcome.delivered && outcome.retry && attempt < WEBHOOK_MAX_ATTEMPTS
        ? retryDelaySec(attempt, deps.retryDelaySec, outcome.retryAfterSec)
        : null;
    // The attempt's record, the next attempt and this job's completion commit together: a crash
    // in between neither loses the retry nor queues it twice.
    await deps.db.tx(async (c) => {
      await c.query(
        `INSERT INTO webhook_deliveries (organization_id, job_id, event, url, attempt, status_code, error, delivered) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [d.organizationId, d.jobId, d.event, d.url, attempt, outcome.statusCode, error, outcome.delivered],
      );
      if (nextInSec !== null) {
        await boss.send(WEBHOOK_QUEUE, { ...d, attempt: attempt + 1 }, {
          ...CRASH_RETRIES,
          startAfter: nextInSec,
          db: txExecutor(c),
        } as PgBoss.SendOptions);
      }
      await boss.complete(WEBHOOK_QUEUE, meta.id, {}, { db: txExecutor(c) });
    });
    deps.metrics.webhookDeliveries.labels(outcome.delivered ? 'delivered' : 'failed').inc();
    if (outcome.delivered) log.info('webhook delivered', { jobId: d.jobId, attempt, event: d.event });
    else if (nextInSec !== null) log.warn('webhook attempt failed; retrying', { jobId: d.jobId, attempt, error, retryInSec: nextInSec });
    else log.warn('webhook delivery given up', { jobId: d.jobId, attempt, error, final: !outcome.retry });
  });
}
