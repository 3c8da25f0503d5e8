-- An agent's upload URL writes its object once: the first PUT that completes under a task's lease
-- is recorded here, in the transaction that moves its bytes into place, and any later PUT for that
-- lease and object is refused (409). A PUT that breaks off or is refused part-way records nothing,
-- so it may be tried again; a new lease of the task signs new URLs and writes afresh.
CREATE TABLE task_upload_writes (
  task_id    text NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  lease      text NOT NULL,
  object_key text NOT NULL,
  size_bytes bigint NOT NULL,
  written_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, lease, object_key)
);
