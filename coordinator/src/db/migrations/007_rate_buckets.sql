-- Rate-limit token buckets, shared by every coordinator on this database (one process's memory
-- would admit N times the limit behind a balancer of N). UNLOGGED: a crash forgets the buckets,
-- which only means full ones, and every request's write skips the WAL.
CREATE UNLOGGED TABLE rate_buckets (
  key        text PRIMARY KEY,
  tokens     double precision NOT NULL,
  admitted   boolean NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX rate_buckets_updated ON rate_buckets (updated_at);
