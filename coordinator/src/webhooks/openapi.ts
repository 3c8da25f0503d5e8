import { z } from 'zod';
import { bearerJobSchema } from '@shorts/common/api/jobs';

// The OpenAPI 3.1 `webhooks` section: what the service POSTs to a job's `webhook` URL.

const header = (description: string, example: string) => ({ required: true, description, schema: { type: 'string' }, example });

const eventSchema = z.object({
  event: z.enum(['job.completed', 'job.failed']),
  jobId: z.string(),
  status: z.enum(['COMPLETED', 'FAILED']),
  data: bearerJobSchema.describe('The job as GET /api/jobs/{jobId} gives it to a bearer token; a failed job adds `message`, why it failed'),
});

const HEADERS = {
  'webhook-id': header(
    'Standard Webhooks message id: one per event, the same on every retry and redelivery (deduplicate on it)',
    'msg_019ac8e2f1b07c3e9d5a4b6c7d8e9f01',
  ),
  'webhook-timestamp': header('Unix seconds when this attempt was signed', '1764320700'),
  'webhook-signature': header(
    'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`, keyed by the organization\'s secret after `whsec_` decoded from base64; two signatures for 24 hours after a rotation (new secret first, then the old one)',
    'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
  ),
  'X-Signature': header(
    '`t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`, keyed by the current secret\'s whole text (DECISIONS.md)',
    't=1764320700,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd',
  ),
  'X-Webhook-Event': header('The event name, as in the body', 'job.completed'),
  'X-Webhook-Attempt': header('1 for the first try, counting retries and redeliveries of the same event', '1'),
};

type ToSchema = (schema: z.ZodType) => unknown;

const operation = (toSchema: ToSchema, event: 'job.completed' | 'job.failed', summary: string) => ({
  post: {
    operationId: event === 'job.completed' ? 'webhookJobCompleted' : 'webhookJobFailed',
    summary,
    tags: ['Webhooks'],
    // What the service sends: the receiver checks the signature headers, no credentials.
    security: [],
    description:
      "Sent to the job's `webhook` URL. A 2xx answer is a delivery; anything else (a 3xx is not followed) is retried with backoff, 7 tries over about an hour, honouring Retry-After on 429 and 503. Verify with any Standard Webhooks library (docs/api.md, Webhooks) or with X-Signature.",
    parameters: Object.entries(HEADERS).map(([name, h]) => ({ name, in: 'header', ...h })),
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: toSchema(eventSchema),
          example: {
            event,
            jobId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11',
            status: event === 'job.completed' ? 'COMPLETED' : 'FAILED',
            data: {
              jobId: '0b5c8e0e-6f0a-4d7e-9a51-2f0d8c3b9e11',
              title: 'Keynote',
              status: event === 'job.completed' ? 'COMPLETED' : 'FAILED',
              progress: event === 'job.completed' ? 100 : 15,
              createdAt: '2026-11-25T10:00:00.000Z',
            },
          },
        },
      },
    },
    responses: { '2XX': { description: 'Received: no retry follows' }, default: { description: 'Not received: retried with backoff' } },
  },
});

/** `toSchema`: the document's own converter, so the job's named schemas are referred to, not repeated. */
export const webhooksOpenApi = (toSchema: ToSchema) => ({
  jobCompleted: operation(toSchema, 'job.completed', 'A job completed'),
  jobFailed: operation(toSchema, 'job.failed', 'A job failed'),
});
