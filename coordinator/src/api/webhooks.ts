import { z } from 'zod';
import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { requireOrg, suppliedOrgId } from './auth-context.js';
import { JOBS_ORG_MESSAGES } from './jobs-common.js';
import { redeliveryQueuedSchema, webhookDeliveryListSchema, webhookSecretSchema } from '@shorts/common/api/webhooks';
import { getWebhookSecret, listDeliveries, redeliver, rotateWebhookSecret } from '../webhooks/manage.js';

const orgQuery = z.object({ organizationId: z.string().optional().describe('Required with a session or bearer token') });
const orgBody = z.object({ organizationId: z.string().optional().describe('Required with a session or bearer token') });
const EXAMPLE_SECRET = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  standardSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  createdAt: '2026-11-28T09:00:00.000Z',
  previous: null,
};
const EXAMPLE_WEBHOOK_ID = 'msg_019ac8e2f1b07c3e9d5a4b6c7d8e9f01';
const EXAMPLE_DELIVERY = {
  id: '41',
  webhookId: EXAMPLE_WEBHOOK_ID,
  event: 'job.completed' as const,
  url: 'https://hooks.example.com/shorts',
  attempt: 1,
  status: 'delivered' as const,
  responseCode: 200,
  error: null,
  redelivery: false,
  createdAt: '2026-11-28T09:05:00.000Z',
};
const SIGNING =
  'Deliveries carry `X-Signature` (`t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`, keyed by the whole secret text) and the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature` (`v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the secret after `whsec_` decoded from base64). See docs/api.md, Webhooks.';

/** The organization's webhook secret and its jobs' delivery attempts; API keys and members alike. */
export function registerWebhookRoutes(api: Api, app: Coordinator): void {
  api.route(
    {
      method: 'get',
      path: '/api/webhooks/secret',
      tag: 'Webhooks',
      summary: "The organization's webhook signing secret, and the one rotated out while it still signs",
      description: SIGNING,
      query: orgQuery,
      response: webhookSecretSchema,
      example: EXAMPLE_SECRET,
    },
    async (ctx, { query }) => getWebhookSecret(app.db, await requireOrg(app, ctx, query.organizationId)),
  );

  api.route(
    {
      method: 'post',
      path: '/api/webhooks/secret/rotate',
      tag: 'Webhooks',
      summary: 'Make a new webhook secret; the old one keeps signing beside it for 24 hours',
      description: `Until \`previous.expiresAt\` every delivery's \`webhook-signature\` holds two space-separated signatures, the new secret's first; \`X-Signature\` is made with the new secret only. Rotating again within the 24 hours drops the older secret at once. ${SIGNING}`,
      body: orgBody,
      bodyExample: {},
      response: webhookSecretSchema,
      example: {
        ...EXAMPLE_SECRET,
        secret: 'whsec_p3Yl0QxR1m2sT9uVwX4yZ5aB6cD7eF8g',
        standardSecret: 'whsec_p3Yl0QxR1m2sT9uVwX4yZ5aB6cD7eF8g',
        previous: {
          secret: EXAMPLE_SECRET.secret,
          standardSecret: EXAMPLE_SECRET.secret,
          expiresAt: '2026-11-29T09:00:00.000Z',
        },
      },
    },
    async (ctx) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx));
      const rotated = await rotateWebhookSecret(app.db, orgId);
      app.log.info('webhook secret rotated', { organizationId: orgId });
      return rotated;
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/jobs/:jobId/webhook-deliveries',
      tag: 'Webhooks',
      summary: "Every attempt to deliver the job's webhook events, oldest first",
      description:
        "`status` is `delivered` for a 2xx answer, otherwise `failed` with `responseCode` (null when no answer came) and `error`. `attempt` counts from 1 per event (`webhookId`), retries and redeliveries included. Another organization's job is 404.",
      query: orgQuery,
      response: webhookDeliveryListSchema,
      example: { deliveries: [EXAMPLE_DELIVERY] },
    },
    async (ctx, { query }) => {
      const orgId = await requireOrg(app, ctx, query.organizationId, JOBS_ORG_MESSAGES);
      return { deliveries: await listDeliveries(app.db, orgId, ctx.params.jobId!) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/jobs/:jobId/webhook-deliveries/:deliveryId/redeliver',
      tag: 'Webhooks',
      status: 202,
      summary: 'Send the event of a recorded attempt again',
      description:
        "The same body and `webhook-id` (receivers can tell they have it), a new timestamp and signatures, to the URL the event was sent to. One attempt, not retried; it shows in the delivery list once made, with `redelivery` true. Another organization's job or delivery is 404; an attempt recorded before events were kept for redelivery is 409.",
      body: orgBody,
      bodyExample: {},
      response: redeliveryQueuedSchema,
      example: { queued: true, webhookId: EXAMPLE_WEBHOOK_ID, attempt: 2 },
    },
    async (ctx) => {
      const orgId = await requireOrg(app, ctx, suppliedOrgId(ctx), JOBS_ORG_MESSAGES);
      const queued = await redeliver(app.db, app.boss, orgId, ctx.params.jobId!, ctx.params.deliveryId!);
      app.log.info('webhook redelivery queued', { organizationId: orgId, jobId: ctx.params.jobId, webhookId: queued.webhookId });
      return queued;
    },
  );
}
