-- Locality: the agent whose part of a task read the job's source, which `leased_by` does not always
-- name. A split render is leased a second time for its join, which reads the chunks and never the
-- source, and `leased_by` then names the joiner. Set when a task with a locality is leased for a part
-- that reads the source: its first part, a retry of it, a final part that reads it again
-- (coordinator/src/tasks/locality.ts).
ALTER TABLE tasks ADD COLUMN source_read_by text;

-- Each agent's render speed is read from its latest chunks when a render is split
-- (coordinator/src/renders/render-speeds.ts).
CREATE INDEX tasks_render_chunks_by_agent ON tasks (leased_by, finished_at DESC) WHERE type = 'render-chunk' AND state = 'completed';
