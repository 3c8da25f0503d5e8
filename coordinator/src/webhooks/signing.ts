import { createHash, createHmac, randomBytes } from 'node:crypto';

// Standard Webhooks (standardwebhooks.com): `webhook-id`, `webhook-timestamp` and
// `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the secret's part
// after `whsec_` decoded from base64. X-Signature (DECISIONS.md) stays as it was, keyed by the
// secret's whole text.

export const SECRET_PREFIX = 'whsec_';

/** How long a rotated-out secret still signs deliveries (issue 37). */
export const PREVIOUS_SECRET_GRACE_MS = 24 * 3600 * 1000;

/** A new secret: `whsec_` and 24 random bytes in standard base64 (32 characters, no padding), so
 *  every Standard Webhooks library reads it as it is. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/**
 * The HMAC key a secret stands for. Secrets made before Standard Webhooks are `whsec_` and 24 bytes
 * in base64url (`-` and `_` where standard base64 has `+` and `/`): their key is that text decoded
 * as base64url, which Node's decoder reads alongside standard base64, so both forms give their 24
 * bytes here.
 */
export function webhookKey(secret: string): Buffer {
  const text = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  return Buffer.from(text, 'base64');
}

/** The secret in the form Standard Webhooks libraries read (standard base64): the same text for a
 *  new secret; for one made before, the same key with the base64url letters rewritten. */
export function standardSecret(secret: string): string {
  return SECRET_PREFIX + webhookKey(secret).toString('base64');
}

/** One `v1,<base64>` signature of a message. */
export function signStandard(secret: string, webhookId: string, unixSeconds: number, body: string): string {
  return `v1,${createHmac('sha256', webhookKey(secret)).update(`${webhookId}.${unixSeconds}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per valid secret, space-separated (the current one first). */
export function standardSignatureHeader(secrets: string[], webhookId: string, unixSeconds: number, body: string): string {
  return secrets.map((s) => signStandard(s, webhookId, unixSeconds, body)).join(' ');
}

/** A new event's webhook-id. */
export const newWebhookId = (uuid: string): string => `msg_${uuid.replace(/-/g, '')}`;

/** The webhook-id of an event queued before events carried one: the same for each of its retries. */
export function legacyWebhookId(organizationId: string, jobId: string, event: string, body: string): string {
  return `msg_${createHash('sha256').update(`${organizationId}\n${jobId}\n${event}\n${body}`).digest('hex').slice(0, 32)}`;
}
