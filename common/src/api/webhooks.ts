// The webhook routes' answers (coordinator/src/api/webhooks.ts); the studio reads their types.
import { z } from 'zod';

/** GET /api/webhooks/secret and POST /api/webhooks/secret/rotate. */
export const webhookSecretSchema = z.object({
  secret: z
    .string()
    .describe('whsec_…: X-Signature is keyed by this exact text; the Standard Webhooks key is its part after whsec_ decoded from base64'),
  standardSecret: z
    .string()
    .describe(
      'The same key as a Standard Webhooks library reads it (standard base64): equal to `secret` except for a secret made before Standard Webhooks, whose part after whsec_ is base64url',
    ),
  createdAt: z.string().nullable().describe('When this secret was made (null: before rotation existed)'),
  previous: z
    .object({
      secret: z.string(),
      standardSecret: z.string(),
      expiresAt: z.string().describe('Until then deliveries carry a second webhook-signature made with it'),
    })
    .nullable()
    .describe('The secret rotated out in the last 24 hours, still signing deliveries; null when none'),
});
export type WebhookSecret = z.output<typeof webhookSecretSchema>;

/** One attempt to deliver an event, as GET /api/jobs/{jobId}/webhook-deliveries lists it. */
export const webhookDeliverySchema = z.object({
  id: z.string().describe('This attempt: POST …/webhook-deliveries/{id}/redeliver sends its event again'),
  webhookId: z.string().nullable().describe("The event's webhook-id (null for attempts recorded before it existed)"),
  event: z.enum(['job.completed', 'job.failed']),
  url: z.string(),
  attempt: z.number().int().describe('1 for the first try, counting retries and redeliveries of the same event'),
  status: z.enum(['delivered', 'failed']),
  responseCode: z.number().int().nullable().describe("The receiver's HTTP status; null when none came (refused, timed out)"),
  error: z.string().nullable(),
  redelivery: z.boolean().describe('Sent on request (redeliver) rather than by the event or its retries'),
  createdAt: z.string(),
});
export type WebhookDeliveryView = z.output<typeof webhookDeliverySchema>;

export const webhookDeliveryListSchema = z.object({ deliveries: z.array(webhookDeliverySchema) });
export type WebhookDeliveryList = z.output<typeof webhookDeliveryListSchema>;

/** POST …/redeliver: the event is queued; its attempt shows in the list once made. */
export const redeliveryQueuedSchema = z.object({ queued: z.literal(true), webhookId: z.string(), attempt: z.number().int() });
export type RedeliveryQueued = z.output<typeof redeliveryQueuedSchema>;
