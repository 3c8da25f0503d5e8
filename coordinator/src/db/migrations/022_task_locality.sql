-- Locality (issue 35): the job whose stored source a task reads whole (its contract's
-- `readsJobSource`). The agents that ran such a task of the job keep the source in their object
-- cache, so the lease query keeps the job's next such task a moment for one of them while it is free
-- (coordinator/src/tasks/locality.ts; docs/leasing.md, "Locality").
ALTER TABLE tasks ADD COLUMN locality text;
CREATE INDEX tasks_locality ON tasks (locality, state) WHERE locality IS NOT NULL;
