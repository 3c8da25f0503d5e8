-- Failed password sign-ins per account (ASVS 2.2.1): one row per e-mail address tried, counting the
-- failures of a one-hour window that starts at its first failure. Shared by every coordinator on
-- this database; logged, so a restart does not lift a lockout.
CREATE TABLE sign_in_failures (
  account           text PRIMARY KEY,
  window_started_at timestamptz NOT NULL,
  failures          integer NOT NULL
);
CREATE INDEX sign_in_failures_window ON sign_in_failures (window_started_at);
