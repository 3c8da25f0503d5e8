import type { Db } from '../db/db.js';
import { notFound } from '../errors.js';
import { isId } from '../ids.js';
import { busySlotsByAgent } from '../tasks/liveness.js';

// The agents table as operators see it: who is online, draining or offline, and what each does.
// What each runs now is the queue's to say (tasks/liveness.ts); its tasks, and cancelling them,
// are in tasks/operator.ts.

export interface AgentView {
  id: string;
  name: string;
  state: 'online' | 'draining' | 'offline';
  taskTypes: string[];
  capabilities: string[];
  slots: number;
  /** Tasks the coordinator has leased to the agent now. */
  runningTasks: number;
  /** Tasks the agent said it runs in its last heartbeat. More than runningTasks: attempts whose lease
   *  was taken back still winding down (or an agent that does not stop work it lost). */
  reportedRunningTasks: number;
  freeDiskBytes: number | null;
  lastSeenAt: Date;
  registeredAt: Date;
  drainRequestedAt: Date | null;
}

const AGENT_COLUMNS = `a.id, a.name, a.state, a.task_types AS "taskTypes", a.capability_tags AS capabilities, a.max_slots AS slots,
  a.running_tasks AS "reportedRunningTasks",
  a.free_disk_bytes AS "freeDiskBytes", a.last_seen_at AS "lastSeenAt", a.registered_at AS "registeredAt",
  a.drain_requested_at AS "drainRequestedAt"`;

/** Online and draining agents, and those gone offline in the last day (all of them with `all`). */
export async function listAgents(db: Db, opts: { all?: boolean } = {}): Promise<AgentView[]> {
  const agents = await db.query<Omit<AgentView, 'runningTasks'>>(
    `SELECT ${AGENT_COLUMNS} FROM agents a
     WHERE $1 OR a.state <> 'offline' OR a.last_seen_at > now() - interval '1 day'
     ORDER BY a.state = 'offline', a.name, a.registered_at DESC`,
    [opts.all ?? false],
  );
  return withRunningTasks(db, agents);
}

/** Each agent with the tasks the queue has leased to it now. */
async function withRunningTasks(db: Db, agents: Array<Omit<AgentView, 'runningTasks'>>): Promise<AgentView[]> {
  const busy = await busySlotsByAgent(
    db,
    agents.map((a) => a.id),
  );
  return agents.map((agent) => ({ ...agent, runningTasks: busy.get(agent.id) ?? 0 }));
}

/** Draining: the agent finishes what it runs and leases nothing new; it learns so on its next
 *  heartbeat or lease call. `resume` lifts the drain. */
export async function setDraining(db: Db, id: string, draining: boolean): Promise<AgentView> {
  if (!isId(id)) throw notFound(`Agent ${id} not found`);
  const row = await db.one<{ state: string }>(
    `UPDATE agents SET
       drain_requested_at = CASE WHEN $2 THEN COALESCE(drain_requested_at, now()) ELSE NULL END,
       state = CASE WHEN state = 'offline' THEN 'offline' WHEN $2 THEN 'draining' ELSE 'online' END
     WHERE id = $1 RETURNING state`,
    [id, draining],
  );
  if (!row) throw notFound(`Agent ${id} not found`);
  const [view] = await withRunningTasks(
    db,
    await db.query<Omit<AgentView, 'runningTasks'>>(`SELECT ${AGENT_COLUMNS} FROM agents a WHERE a.id = $1`, [id]),
  );
  return view!;
}
