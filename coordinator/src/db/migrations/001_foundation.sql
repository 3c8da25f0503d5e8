-- Tenancy, auth, the agent lease table, jobs, renders, files, presets, credits and webhooks.
-- Ids are opaque text (UUID v7 made by the application) so they sort by creation time.

CREATE TABLE organizations (
  id                          text PRIMARY KEY,
  name                        text NOT NULL,
  plan                        text NOT NULL DEFAULT 'free' CHECK (plan IN ('free', 'starter', 'pro', 'business')),
  credits                     numeric(14, 2) NOT NULL DEFAULT 0 CHECK (credits >= 0),
  reserved_credits            numeric(14, 2) NOT NULL DEFAULT 0 CHECK (reserved_credits >= 0),
  storage_used_bytes          bigint NOT NULL DEFAULT 0 CHECK (storage_used_bytes >= 0),
  phone_verification_required boolean NOT NULL DEFAULT false,
  retention_days              integer NOT NULL DEFAULT 90 CHECK (retention_days BETWEEN 1 AND 180),
  webhook_secret              text NOT NULL,
  created_at                  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id             text PRIMARY KEY,
  email          text NOT NULL UNIQUE,
  name           text,
  phone_number   text,
  phone_verified boolean NOT NULL DEFAULT false,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  role            text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, organization_id)
);

CREATE TABLE api_keys (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name            text,
  prefix          text NOT NULL,
  last4           text NOT NULL,
  key_hash        text NOT NULL UNIQUE,
  created_at      timestamptz NOT NULL DEFAULT now(),
  revoked_at      timestamptz
);
CREATE INDEX api_keys_org ON api_keys (organization_id);

-- Work leased to node-agents. pg-boss keeps the coordinator's own background queues; remote leases
-- need a heartbeat and long expiries that pg-boss 10 lacks, so they live here.
CREATE TABLE tasks (
  id               text PRIMARY KEY,
  type             text NOT NULL,
  organization_id  text REFERENCES organizations(id) ON DELETE CASCADE,
  subject_id       text,
  payload          jsonb NOT NULL DEFAULT '{}',
  state            text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'completed', 'failed', 'cancelled')),
  priority         integer NOT NULL DEFAULT 0,
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 3,
  lease_token      text,
  leased_by        text,
  lease_expires_at timestamptz,
  progress         real NOT NULL DEFAULT 0,
  stage            text,
  result           jsonb,
  last_error       text,
  cancel_requested boolean NOT NULL DEFAULT false,
  queued_at        timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  finished_at      timestamptz,
  created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tasks_queue ON tasks (type, priority DESC, queued_at) WHERE state = 'queued';
CREATE INDEX tasks_leases ON tasks (lease_expires_at) WHERE state = 'leased';
CREATE INDEX tasks_subject ON tasks (subject_id);

CREATE TABLE task_events (
  id         bigserial PRIMARY KEY,
  task_id    text NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  agent_id   text,
  kind       text NOT NULL,
  detail     text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX task_events_task ON task_events (task_id);

CREATE TABLE agents (
  id            text PRIMARY KEY,
  name          text NOT NULL,
  capabilities  jsonb NOT NULL,
  state         text NOT NULL DEFAULT 'online' CHECK (state IN ('online', 'offline')),
  registered_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE jobs (
  id                  text PRIMARY KEY,
  organization_id     text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id             text REFERENCES users(id) ON DELETE SET NULL,
  function_name       text NOT NULL,
  title               text,
  description         text,
  status              text NOT NULL DEFAULT 'PROCESSING' CHECK (status IN ('PROCESSING', 'COMPLETED', 'FAILED')),
  progress            integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  source              text NOT NULL DEFAULT 'API' CHECK (source IN ('API', 'WEB_APP')),
  youtube_video_id    text,
  file_url            text,
  options             jsonb NOT NULL DEFAULT '{}',
  webhook             text,
  reserved_credits    numeric(14, 2) NOT NULL DEFAULT 0,
  credit_usage_status text NOT NULL DEFAULT 'PENDING' CHECK (credit_usage_status IN ('PENDING', 'ACTIVE', 'RELEASED')),
  cost                numeric(14, 2),
  cost_breakdown      jsonb,
  shorts_count        integer NOT NULL DEFAULT 0,
  data                jsonb,
  error_message       text,
  duration_sec        double precision,
  download_bytes      bigint,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  completed_at        timestamptz,
  archived_at         timestamptz
);
CREATE INDEX jobs_org_created ON jobs (organization_id, created_at DESC) WHERE archived_at IS NULL;

-- Every credit movement; the unique key makes a second charge or release of one job impossible.
CREATE TABLE credit_ledger (
  id              bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  job_id          text,
  kind            text NOT NULL CHECK (kind IN ('grant', 'reserve', 'charge', 'release')),
  amount          numeric(14, 2) NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX credit_ledger_once ON credit_ledger (job_id, kind) WHERE job_id IS NOT NULL;

CREATE TABLE files (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  job_id          text,
  name            text NOT NULL,
  type            text NOT NULL CHECK (type IN ('image', 'video', 'audio', 'other')),
  content_type    text,
  size_bytes      bigint NOT NULL DEFAULT 0,
  length_sec      double precision NOT NULL DEFAULT 0,
  status          text NOT NULL DEFAULT 'completed' CHECK (status IN ('completed', 'pending')),
  description     text,
  tags            text[] NOT NULL DEFAULT '{}',
  object_key      text NOT NULL UNIQUE,
  thumbnail_key   text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX files_org_created ON files (organization_id, created_at DESC);
CREATE INDEX files_job ON files (job_id);

CREATE TABLE brand_presets (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name            text NOT NULL,
  description     text,
  preset          text,
  size            jsonb,
  options         jsonb NOT NULL DEFAULT '{}',
  is_active       boolean NOT NULL DEFAULT true,
  is_default      boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
-- At most one default per organization, whatever the code does.
CREATE UNIQUE INDEX brand_presets_one_default ON brand_presets (organization_id) WHERE is_default;

CREATE TABLE renders (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  job_id          text NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  short_id        integer NOT NULL,
  status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'progress', 'done', 'error')),
  progress        real NOT NULL DEFAULT 0,
  spec            jsonb NOT NULL,
  file_id         text,
  size_bytes      bigint,
  error_message   text,
  error_code      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX renders_org ON renders (organization_id);

CREATE TABLE webhook_deliveries (
  id              bigserial PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  job_id          text NOT NULL,
  event           text NOT NULL,
  url             text NOT NULL,
  attempt         integer NOT NULL,
  status_code     integer,
  error           text,
  delivered       boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (job_id);
