import { createHmac } from 'node:crypto';
import type PgBoss from 'pg-boss';
import type { Queryable } from '../db/db.js';
import type { Logger } from '../../../common/src/logger.js';
import { safeFetch, FetchRefusedError } from '../../../common/src/net/safe-fetch.js';
import { parseAllowlist } from '../../../common/src/net/address-policy.js';
import type { Metrics } from '../metrics/metrics.js';

export const WEBHOOK_QUEUE = 'webhook-delivery';

export interface WebhookDelivery {
  organizationId: string;
  jobId: string;
  url: string;
  event: 'job.completed' | 'job.failed';
  /** The exact JSON body, fixed when the event happened. */
  body: string;
}

/** `X-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">` (DECISIONS.md). */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** pg-boss writes through the caller's transaction, so the event is queued exactly when the job's
 *  final state commits. */
const txExecutor = (c: Queryable): PgBoss.Db => ({ executeSql: (text, values) => c.query(text, values) });

export async function enqueueWebhook(boss: PgBoss, c: Queryable, delivery: WebhookDelivery, retryDelaySec: number): Promise<void> {
  await boss.send(WEBHOOK_QUEUE, delivery, { retryLimit: 6, retryDelay: retryDelaySec, retryBackoff: true, db: txExecutor(c) } as PgBoss.SendOptions);
}

export async function startWebhookWorker(deps: { boss: PgBoss; db: { query: Queryable['query'] }; log: Logger; metrics: Metrics; fetchAllowlist: string }): Promise<void> {
  const { boss, log } = deps;
  await boss.createQueue(WEBHOOK_QUEUE);
  const allowlist = parseAllowlist(deps.fetchAllowlist);
  await boss.work<WebhookDelivery>(WEBHOOK_QUEUE, { pollingIntervalSeconds: 0.5, includeMetadata: true }, async ([job]) => {
    const d = job!.data;
    const secretRow = await deps.db.query(`SELECT webhook_secret AS "secret" FROM organizations WHERE id = $1`, [d.organizationId]);
    const secret: string | undefined = secretRow.rows[0]?.secret;
    if (!secret) return; // organization gone: nothing to deliver
    const attempt = (job as PgBoss.JobWithMetadata<WebhookDelivery>).retryCount + 1;
    let statusCode: number | null = null;
    let error: string | null = null;
    try {
      const res = await safeFetch(d.url, {
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
        timeoutMs: 10_000,
        maxBytes: 64 * 1024,
      });
      statusCode = res.status;
      if (res.status < 200 || res.status >= 300) error = `receiver answered HTTP ${res.status}`;
    } catch (err) {
      error = err instanceof FetchRefusedError ? `refused: ${err.message}` : `delivery failed: ${(err as Error).message}`;
    }
    await deps.db.query(
      `INSERT INTO webhook_deliveries (organization_id, job_id, event, url, attempt, status_code, error, delivered) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [d.organizationId, d.jobId, d.event, d.url, attempt, statusCode, error, error === null],
    );
    deps.metrics.webhookDeliveries.labels(error ? 'failed' : 'delivered').inc();
    if (error) {
      log.warn('webhook attempt failed', { jobId: d.jobId, attempt, error });
      // A private address will not become public on retry.
      if (error.startsWith('refused:') && !/timeout|network/.test(error)) return;
      throw new Error(error);
    }
    log.info('webhook delivered', { jobId: d.jobId, attempt, event: d.event });
  });
}
