-- Fan-out: a task may split into child tasks and finish when they all have. After its own agent's
-- part, the parent waits ('waiting', no lease) with its own result stored, children_pending counting
-- down as children complete; the last child's completion joins their results and completes the
-- parent in the same transaction. Children are ordinary tasks (leased, placed, re-leased as any),
-- with the parent's organization; child_index orders their results for the join.
ALTER TABLE tasks DROP CONSTRAINT tasks_state_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_state_check
  CHECK (state IN ('queued', 'leased', 'waiting', 'completed', 'failed', 'cancelled'));
ALTER TABLE tasks
  ADD COLUMN parent_id        text REFERENCES tasks(id) ON DELETE CASCADE,
  ADD COLUMN child_index      integer,
  ADD COLUMN children_pending integer NOT NULL DEFAULT 0 CHECK (children_pending >= 0),
  ADD CONSTRAINT tasks_child_index CHECK ((parent_id IS NULL) = (child_index IS NULL));
CREATE UNIQUE INDEX tasks_children ON tasks (parent_id, child_index) WHERE parent_id IS NOT NULL;
