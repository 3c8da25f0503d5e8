-- Agents seen by the coordinator: online, draining (finishes what it has, takes nothing new) or
-- offline (silent past its lease TTL), with what its last heartbeat said; and what it can do, as the
-- tags and task types the lease query matches tasks against.
ALTER TABLE agents DROP CONSTRAINT agents_state_check;
ALTER TABLE agents ADD CONSTRAINT agents_state_check CHECK (state IN ('online', 'draining', 'offline'));
ALTER TABLE agents
  ADD COLUMN task_types         text[] NOT NULL DEFAULT '{}',
  ADD COLUMN capability_tags    text[] NOT NULL DEFAULT '{}',
  ADD COLUMN max_slots          integer NOT NULL DEFAULT 1 CHECK (max_slots >= 1),
  ADD COLUMN running_tasks      integer NOT NULL DEFAULT 0,
  ADD COLUMN free_disk_bytes    bigint,
  ADD COLUMN drain_requested_at timestamptz,
  ADD COLUMN offline_at         timestamptz;
UPDATE agents SET
  task_types = ARRAY(SELECT jsonb_array_elements_text(COALESCE(capabilities->'task_types', '[]'::jsonb))),
  max_slots = GREATEST(COALESCE((capabilities->>'max_concurrent_tasks')::int, 1), 1);
CREATE INDEX agents_live ON agents (last_seen_at) WHERE state <> 'offline';

-- Placement: tags the leasing agent must have, and tags that make an agent the better choice.
-- waiting_reason: set while a queued task has waited past the notice threshold with no connected
-- agent able to run it ("waiting for a render agent"); the API shows it, cleared at lease.
ALTER TABLE tasks
  ADD COLUMN requires       text[] NOT NULL DEFAULT '{}',
  ADD COLUMN prefers        text[] NOT NULL DEFAULT '{}',
  ADD COLUMN waiting_reason text;
-- Fair ordering counts each organization's running tasks and finds its latest lease.
CREATE INDEX tasks_running_by_org ON tasks (organization_id) WHERE state = 'leased';
CREATE INDEX tasks_running_by_agent ON tasks (leased_by) WHERE state = 'leased';
CREATE INDEX tasks_org_started ON tasks (organization_id, started_at);
