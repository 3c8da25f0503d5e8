import type PgBoss from 'pg-boss';
import type { Db } from '../db/db.js';
import { notFound, conflict } from '../errors.js';
import { findJob } from '../jobs/jobs.js';
import type { RedeliveryQueued, WebhookDeliveryView, WebhookSecret } from '@shorts/common/api/webhooks';
import { newWebhookSecret, PREVIOUS_SECRET_GRACE_MS, standardSecret } from './signing.js';
import { sendAttempt, WEBHOOK_QUEUE, type WebhookDelivery } from './webhooks.js';

// What an organization does with its own webhooks through the API and the studio: read and rotate
// its secret, list a job's delivery attempts, send an event again. Every query names the organization.

interface SecretRow {
  secret: string;
  createdAt: Date | null;
  previous: string | null;
  previousExpiresAt: Date | null;
}

const SECRET_COLUMNS = `webhook_secret AS "secret", webhook_secret_created_at AS "createdAt",
  CASE WHEN previous_webhook_secret_expires_at > now() THEN previous_webhook_secret END AS "previous",
  CASE WHEN previous_webhook_secret_expires_at > now() THEN previous_webhook_secret_expires_at END AS "previousExpiresAt"`;

const secretView = (r: SecretRow): WebhookSecret => ({
  secret: r.secret,
  standardSecret: standardSecret(r.secret),
  createdAt: r.createdAt ? r.createdAt.toISOString() : null,
  previous:
    r.previous && r.previousExpiresAt
      ? { secret: r.previous, standardSecret: standardSecret(r.previous), expiresAt: r.previousExpiresAt.toISOString() }
      : null,
});

export async function getWebhookSecret(db: Db, organizationId: string): Promise<WebhookSecret> {
  const row = await db.one<SecretRow>(`SELECT ${SECRET_COLUMNS} FROM organizations WHERE id = $1`, [organizationId]);
  if (!row) throw notFound('Organization not found');
  return secretView(row);
}

/**
 * A new secret signs from now on; the one it replaces keeps signing beside it for 24 hours (a
 * second signature in webhook-signature), so receivers can switch without losing an event. Rotating
 * again within those hours drops the older one: only the last two secrets are ever valid.
 */
export async function rotateWebhookSecret(db: Db, organizationId: string): Promise<WebhookSecret> {
  const row = await db.one<SecretRow>(
    `UPDATE organizations SET previous_webhook_secret = webhook_secret,
            previous_webhook_secret_expires_at = now() + make_interval(secs => $3::double precision / 1000),
            webhook_secret = $2, webhook_secret_created_at = now()
      WHERE id = $1 RETURNING ${SECRET_COLUMNS}`,
    [organizationId, newWebhookSecret(), PREVIOUS_SECRET_GRACE_MS],
  );
  if (!row) throw notFound('Organization not found');
  return secretView(row);
}

interface DeliveryRow {
  id: string;
  webhookId: string | null;
  event: WebhookDeliveryView['event'];
  url: string;
  attempt: number;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  redelivery: boolean;
  createdAt: Date;
}

/** A job's delivery attempts, oldest first; another organization's job (or none) is 404. */
export async function listDeliveries(db: Db, organizationId: string, jobId: string): Promise<WebhookDeliveryView[]> {
  if (!(await findJob(db.pool, organizationId, jobId))) throw notFound('Job not found');
  const rows = await db.query<DeliveryRow>(
    `SELECT id::text AS id, webhook_id AS "webhookId", event, url, attempt, delivered, status_code AS "statusCode", error, redelivery,
            created_at AS "createdAt"
       FROM webhook_deliveries WHERE organization_id = $1 AND job_id = $2 ORDER BY created_at, id`,
    [organizationId, jobId],
  );
  return rows.map((r) => ({
    id: r.id,
    webhookId: r.webhookId,
    event: r.event,
    url: r.url,
    attempt: r.attempt,
    status: r.delivered ? 'delivered' : 'failed',
    responseCode: r.statusCode,
    error: r.error,
    redelivery: r.redelivery,
    createdAt: r.createdAt.toISOString(),
  }));
}

/**
 * Sends the event of one recorded attempt again: the same webhook-id and body (a receiver that
 * already has it can tell), newly signed and timestamped, numbered after the event's last attempt.
 * It is one attempt, not retried: the client asking can ask again.
 */
export async function redeliver(
  db: Db,
  boss: PgBoss,
  organizationId: string,
  jobId: string,
  deliveryId: string,
): Promise<RedeliveryQueued> {
  if (!(await findJob(db.pool, organizationId, jobId))) throw notFound('Job not found');
  if (!/^\d{1,18}$/.test(deliveryId)) throw notFound('Delivery not found');
  return db.tx(async (c) => {
    const message = (
      await c.query<{ id: string; event: WebhookDelivery['event']; url: string; body: string }>(
        `SELECT m.id, m.event, m.url, m.body FROM webhook_deliveries d
           JOIN webhook_messages m ON m.id = d.webhook_id AND m.organization_id = d.organization_id
          WHERE d.id = $1::bigint AND d.organization_id = $2 AND d.job_id = $3
          FOR UPDATE OF m`,
        [deliveryId, organizationId, jobId],
      )
    ).rows[0];
    if (!message) {
      const recorded = (
        await c.query(`SELECT 1 FROM webhook_deliveries WHERE id = $1::bigint AND organization_id = $2 AND job_id = $3`, [
          deliveryId,
          organizationId,
          jobId,
        ])
      ).rows.length;
      if (!recorded) throw notFound('Delivery not found');
      throw conflict('This attempt was recorded before events were kept for redelivery: its event cannot be sent again');
    }
    // The message row is locked: two redeliveries at once get distinct numbers.
    const { last } = (
      await c.query<{ last: number }>(
        `SELECT GREATEST(
           (SELECT COALESCE(max(attempt), 0) FROM webhook_deliveries WHERE webhook_id = $1),
           (SELECT COALESCE(max((data->>'attempt')::int), 0) FROM pgboss.job WHERE name = $2 AND data->>'webhookId' = $1 AND state < 'completed')
         ) AS last`,
        [message.id, WEBHOOK_QUEUE],
      )
    ).rows[0]!;
    const attempt = last + 1;
    await sendAttempt(boss, c, {
      organizationId,
      jobId,
      url: message.url,
      event: message.event,
      body: message.body,
      webhookId: message.id,
      attempt,
      redelivery: true,
    });
    return { queued: true as const, webhookId: message.id, attempt };
  });
}
