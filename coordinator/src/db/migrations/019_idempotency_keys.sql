-- Idempotency-Key: one row per (organization, key), in the database so every coordinator behind a
-- balancer answers a retry the same way. `status` NULL means the first request is still running;
-- once it settles the row holds its answer (2xx, or a 4xx that changed nothing) until expires_at.
CREATE TABLE idempotency_keys (
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  key             text NOT NULL,
  request_hash    text NOT NULL,
  status          integer,
  response        jsonb,
  -- Headers the answer needs besides its body (tus creation's Location).
  response_headers jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (organization_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);

-- The X-Request-Id of the API request that queued a task (its fan-out children inherit it), so the
-- coordinator's and the agent's log lines for the task carry it too.
ALTER TABLE tasks ADD COLUMN request_id text;
