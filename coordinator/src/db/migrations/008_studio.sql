-- The web studio: people sign in (password or one-time link) and get a browser session; videos
-- arrive by resumable tus uploads.

ALTER TABLE users ADD COLUMN password_hash text;

-- Only hashes of the session token and the sign-in link are stored: a leaked table signs no one in.
CREATE TABLE sessions (
  token_hash   text PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token   text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE login_links (
  token_hash   text PRIMARY KEY,
  user_id      text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz
);

-- A tus upload in progress: the bytes so far live in the coordinator's data dir until the last
-- one arrives, then move into the organization's storage and become a job (or a watermark image).
CREATE TABLE uploads (
  id              text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id         text REFERENCES users(id) ON DELETE SET NULL,
  purpose         text NOT NULL DEFAULT 'job' CHECK (purpose IN ('job', 'watermark')),
  length_bytes    bigint NOT NULL CHECK (length_bytes > 0),
  offset_bytes    bigint NOT NULL DEFAULT 0,
  file_name       text NOT NULL,
  title           text,
  content_type    text,
  state           text NOT NULL DEFAULT 'receiving' CHECK (state IN ('receiving', 'completed', 'failed')),
  error_message   text,
  file_id         text,
  job_id          text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX uploads_org_state ON uploads (organization_id, state);
