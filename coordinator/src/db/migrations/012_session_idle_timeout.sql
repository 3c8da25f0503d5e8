-- Studio sessions end after an idle timeout as well as their absolute lifetime (expires_at): the
-- last time a session was used is kept (coordinator/src/tenancy/sessions.ts).
ALTER TABLE sessions ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX sessions_last_seen ON sessions (last_seen_at);
