import { createHmac } from 'node:crypto';
import type PgBoss from 'pg-boss';
import type { Db, Queryable } from '../db/db.js';
import type { Logger } from '@shorts/common/logger';
import { safeFetch, FetchRefusedError, type SafeResponse } from '@shorts/common/net/safe-fetch';
import { parseAllowlist, type AllowEntry } from '@shorts/common/net/address-policy';
import { backoffDelay } from '@shorts/common/retry';
import type { Metrics } from '../metrics/metrics.js';
import { newId } from '../ids.js';
import { legacyWebhookId, newWebhookId, standardSignatureHeader } from './signing.js';

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
  /** The Standard Webhooks `webhook-id`: one per event, the same on each retry and redelivery
   *  (events queued before it existed get one derived from the event, legacyWebhookId). */
  webhookId?: string;
  /** Sent again on request (POST .../redeliver): one attempt, not retried. */
  redelivery?: boolean;
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

/** Queues an event's first attempt and keeps the event (its webhook-id and body) for redelivery. */
export async function enqueueWebhook(boss: PgBoss, c: Queryable, delivery: WebhookDelivery): Promise<string> {
  const webhookId = newWebhookId(newId());
  await c.query(`INSERT INTO webhook_messages (id, organization_id, job_id, event, url, body) VALUES ($1, $2, $3, $4, $5, $6)`, [
    webhookId,
    delivery.organizationId,
    delivery.jobId,
    delivery.event,
    delivery.url,
    delivery.body,
  ]);
  await sendAttempt(boss, c, { ...delivery, webhookId, attempt: 1 });
  return webhookId;
}

/** Queues one attempt of an event, due after `startAfterSec`. */
export async function sendAttempt(boss: PgBoss, c: Queryable, delivery: WebhookDelivery, startAfterSec?: number): Promise<void> {
  await boss.send(WEBHOOK_QUEUE, delivery, {
    ...CRASH_RETRIES,
    ...(startAfterSec !== undefined ? { startAfter: startAfterSec } : {}),
    db: txExecutor(c),
  } as PgBoss.SendOptions);
}

export type AttemptOutcome =
  | { delivered: true; statusCode: number }
  | { delivered: false; statusCode: number | null; error: string; retry: boolean; retryAfterSec?: number; location?: string };

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
    // A redirect is never followed: 301/302 would turn the POST into a bodiless GET that a receiver
    // may answer 200 without having received the event. The URL is wrong until the tenant changes
    // it, so a retry cannot help; the Location is kept for them to fix it.
    if (status >= 300 && status < 400) {
      const location = firstHeader(headers.location);
      return {
        delivered: false,
        statusCode: status,
        error: `receiver answered HTTP ${status} redirecting to ${location ?? '(no Location)'}; webhooks do not follow redirects`,
        retry: false,
        ...(location !== undefined ? { location } : {}),
      };
    }
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

const firstHeader = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** Retry-After is either delay-seconds or an HTTP date (RFC 9110 10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = firstHeader(value)?.trim();
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

export interface WebhookWorkerDeps {
  boss: PgBoss;
  db: Db;
  log: Logger;
  metrics: Metrics;
  fetchAllowlist: string;
  /** First retry's delay (WEBHOOK_RETRY_DELAY_SEC). */
  retryDelaySec: number;
  /** One attempt's limit (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Attempts in flight at once in this coordinator (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Of those, the most one organization's events may hold (WEBHOOK_CONCURRENCY_PER_ORGANIZATION). */
  perOrganization: number;
  /** How often an idle pool looks for due events. */
  pollMs?: number;
}

interface QueuedDelivery {
  id: string;
  data: WebhookDelivery;
  retryCount: number;
}

// pg-boss's own fetch takes the oldest due events whoever they belong to, so a tenant with a backlog
// of events for a receiver that holds every request open would fill every slot. This is the same
// claim (its state change, its retry count, its SKIP LOCKED) with one more condition: the oldest due
// event of an organization that does not already hold its share of this coordinator's slots.
const CLAIM_NEXT = `
WITH next AS (
  SELECT id FROM pgboss.job
  WHERE name = $1 AND state < 'active' AND start_after < now()
    AND NOT (COALESCE(data->>'organizationId', '') = ANY($2::text[]))
  ORDER BY priority DESC, created_on, id
  LIMIT 1
  FOR UPDATE SKIP LOCKED
)
UPDATE pgboss.job j SET
  state = 'active',
  started_on = now(),
  retry_count = CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1 ELSE j.retry_count END
FROM next
WHERE j.name = $1 AND j.id = next.id
RETURNING j.id, j.data, j.retry_count AS "retryCount"`;

// An attempt cut short by this coordinator stopping was no attempt: its event goes back as it was,
// for any coordinator to take, rather than waiting out pg-boss's expiry.
const HAND_BACK = `UPDATE pgboss.job SET state = 'created', started_on = NULL WHERE name = $1 AND id = ANY($2::uuid[]) AND state = 'active'`;

/**
 * Delivers webhook events concurrently, `concurrency` at a time, of which one organization holds at
 * most `perOrganization`: a receiver that stalls every request (10 s each, then retried) occupies
 * only its own organization's share, and every other tenant's events keep the remaining slots.
 * Returns the function that stops it: no new claims, attempts in flight cut short and handed back.
 */
export async function startWebhookWorker(deps: WebhookWorkerDeps): Promise<() => Promise<void>> {
  const { boss, db, log } = deps;
  await boss.createQueue(WEBHOOK_QUEUE);
  const allowlist = parseAllowlist(deps.fetchAllowlist);
  const perOrganization = Math.min(deps.perOrganization, deps.concurrency);
  const inFlight = new Map<string, { organizationId: string; abort: AbortController; done: Promise<void> }>();
  let stopping = false;
  let filling: Promise<void> | undefined;

  const busyOrganizations = (): string[] => {
    const held = new Map<string, number>();
    for (const f of inFlight.values()) held.set(f.organizationId, (held.get(f.organizationId) ?? 0) + 1);
    return [...held].filter(([, n]) => n >= perOrganization).map(([org]) => org);
  };

  const fillSlots = async (): Promise<void> => {
    while (!stopping && inFlight.size < deps.concurrency) {
      const claimed = await db.one<QueuedDelivery>(CLAIM_NEXT, [WEBHOOK_QUEUE, busyOrganizations()]);
      if (!claimed) return;
      const abort = new AbortController();
      const slot = { organizationId: claimed.data.organizationId, abort, done: Promise.resolve() };
      inFlight.set(claimed.id, slot);
      slot.done = deliverWebhook(deps, allowlist, claimed, abort.signal)
        .catch((err: unknown) =>
          log.error('webhook delivery failed; pg-boss retries it after its expiry', {
            err,
            jobId: claimed.data.jobId,
            organizationId: claimed.data.organizationId,
          }),
        )
        .finally(() => {
          inFlight.delete(claimed.id);
          fill();
        });
    }
  };

  // One claiming loop at a time: two would both see the same free slots and overfill them.
  const fill = (): void => {
    if (stopping || filling) return;
    filling = fillSlots()
      .catch((err: unknown) => log.error('webhook pool could not claim events; trying again', { err, queue: WEBHOOK_QUEUE }))
      .finally(() => {
        filling = undefined;
      });
  };

  const timer = setInterval(fill, deps.pollMs ?? 500);
  fill();
  return async () => {
    stopping = true;
    clearInterval(timer);
    await filling;
    for (const f of inFlight.values()) f.abort.abort();
    await Promise.all([...inFlight.values()].map((f) => f.done));
  };
}

/**
 * One attempt at one event: signed and posted, then its record, its retry (if any) and its completion
 * in one transaction. Cut short by `signal` (the worker stopping), the event is handed back instead.
 */
async function deliverWebhook(deps: WebhookWorkerDeps, allowlist: AllowEntry[], job: QueuedDelivery, signal: AbortSignal): Promise<void> {
  const { boss, db, log } = deps;
  const d = job.data;
  // A rotated-out secret signs too until it expires, so receivers can switch over in their own time.
  const secretRow = await db.one<{ secret: string; previous: string | null }>(
    `SELECT webhook_secret AS "secret",
            CASE WHEN previous_webhook_secret_expires_at > now() THEN previous_webhook_secret END AS "previous"
       FROM organizations WHERE id = $1`,
    [d.organizationId],
  );
  const secret: string | undefined = secretRow?.secret;
  if (!secret) {
    await boss.complete(WEBHOOK_QUEUE, job.id); // organization gone: nothing to deliver
    return;
  }
  // Events queued before attempts were numbered in the data relied on pg-boss's retry count.
  const attempt = d.attempt ?? job.retryCount + 1;
  const webhookId = d.webhookId ?? legacyWebhookId(d.organizationId, d.jobId, d.event, d.body);
  const now = Math.floor(Date.now() / 1000);
  let outcome: AttemptOutcome;
  try {
    const response = await safeFetch(d.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'shorts-webhooks/1',
        'x-signature': signWebhook(secret, d.body, now),
        'webhook-id': webhookId,
        'webhook-timestamp': String(now),
        'webhook-signature': standardSignatureHeader(secretRow?.previous ? [secret, secretRow.previous] : [secret], webhookId, now, d.body),
        'x-webhook-event': d.event,
        'x-webhook-attempt': String(attempt),
      },
      body: d.body,
      allowlist,
      timeoutMs: deps.timeoutMs,
      signal,
      // The status line decides delivery: a large answer must not turn a 2xx into a retry.
      discardBody: true,
      maxRedirects: 0,
    });
    outcome = classifyAttempt({ response });
  } catch (error) {
    outcome = classifyAttempt({ error });
  }
  if (signal.aborted) {
    await db.query(HAND_BACK, [WEBHOOK_QUEUE, [job.id]]);
    return;
  }
  const error = outcome.delivered ? null : outcome.error;
  const nextInSec =
    !outcome.delivered && outcome.retry && !d.redelivery && attempt < WEBHOOK_MAX_ATTEMPTS
      ? retryDelaySec(attempt, deps.retryDelaySec, outcome.retryAfterSec)
      : null;
  // The attempt's record, the next attempt and this job's completion commit together: a crash
  // in between neither loses the retry nor queues it twice.
  await db.tx(async (c) => {
    await c.query(
      `INSERT INTO webhook_deliveries (organization_id, job_id, event, url, attempt, status_code, error, delivered, redirect_location, webhook_id, redelivery)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        d.organizationId,
        d.jobId,
        d.event,
        d.url,
        attempt,
        outcome.statusCode,
        error,
        outcome.delivered,
        outcome.delivered ? null : (outcome.location ?? null),
        webhookId,
        !!d.redelivery,
      ],
    );
    if (nextInSec !== null) await sendAttempt(boss, c, { ...d, webhookId, attempt: attempt + 1 }, nextInSec);
    await boss.complete(WEBHOOK_QUEUE, job.id, {}, { db: txExecutor(c) });
  });
  deps.metrics.webhookDeliveries.labels(outcome.delivered ? 'delivered' : 'failed').inc();
  const fields = { jobId: d.jobId, organizationId: d.organizationId, attempt, event: d.event, webhookId };
  if (outcome.delivered) log.info('webhook delivered', fields);
  else if (nextInSec !== null) log.warn('webhook attempt failed; retrying', { ...fields, error, retryInSec: nextInSec });
  else log.warn('webhook delivery given up', { ...fields, error, final: !outcome.retry });
}
