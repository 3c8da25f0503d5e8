-- Standard Webhooks (issue 37). A rotated secret stays valid for a while: deliveries are signed with
-- both until previous_webhook_secret_expires_at. webhook_secret itself keeps its form: X-Signature is
-- keyed by that exact text, so a secret made before this migration (whsec_ + base64url) is kept as it
-- is, and its Standard Webhooks key is the text after whsec_ decoded as base64url
-- (coordinator/src/webhooks/signing.ts).
ALTER TABLE organizations
  ADD COLUMN webhook_secret_created_at timestamptz,
  ADD COLUMN previous_webhook_secret text,
  ADD COLUMN previous_webhook_secret_expires_at timestamptz;

-- One row per event (a Standard Webhooks message): its webhook-id, stable across retries and
-- redeliveries, and the exact body, which a redelivery sends again. It goes with its job.
CREATE TABLE webhook_messages (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  job_id          text NOT NULL,
  event           text NOT NULL,
  url             text NOT NULL,
  body            text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_messages_job ON webhook_messages (organization_id, job_id);

-- Attempts recorded before this migration have no webhook-id.
ALTER TABLE webhook_deliveries
  ADD COLUMN webhook_id text,
  ADD COLUMN redelivery boolean NOT NULL DEFAULT false;
CREATE INDEX webhook_deliveries_org_job ON webhook_deliveries (organization_id, job_id);
