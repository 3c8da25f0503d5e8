import type { Db } from '../db/db.js';
import type { TaskType } from '@shorts/common/tasks';
import { AppError } from '../errors.js';

// Agent liveness, decided here and nowhere else. An agent is told to heartbeat every third of the
// lease TTL; any call it makes is a sign of life (markAgentSeen). One silent for a whole lease TTL
// is not connected: placement and the farm's numbers leave it out (connectedAgentSql, heardFromSql),
// this process stops counting it (AgentRegistry.connectedCount), and the lease watchdog marks it
// offline (markSilentAgentsOffline) until it speaks again. It lives with the queue because the
// queue's placement reads it, and a slot is busy while the queue has a task leased on it.

/** How often an agent is asked to heartbeat: three times per lease TTL. */
export const heartbeatIntervalMs = (leaseTtlMs: number): number => Math.floor(leaseTtlMs / 3);

/** SQL: agent row `a` was heard from within the last `silenceParam` milliseconds (a query parameter
 *  holding the lease TTL). */
export const heardFromSql = (a: string, silenceParam: string): string =>
  `${a}.last_seen_at > now() - make_interval(secs => ${silenceParam} / 1000.0)`;

/** SQL: agent row `a` is connected and may take work: online (not draining) and heard from lately. */
export const connectedAgentSql = (a: string, silenceParam: string): string => `${a}.state = 'online' AND ${heardFromSql(a, silenceParam)}`;

/** Every call from an agent counts as a sign of life; one marked offline comes back (draining
 *  still, if it was asked to drain). Answers the agent's state, so it learns of a drain. */
export async function markAgentSeen(
  db: Db,
  agentId: string,
  heartbeat?: { runningTasks: number; freeDiskBytes: number },
): Promise<'online' | 'draining'> {
  const row = await db.one<{ state: 'online' | 'draining' }>(
    `UPDATE agents SET last_seen_at = now(), offline_at = NULL,
       state = CASE WHEN drain_requested_at IS NOT NULL THEN 'draining' ELSE 'online' END,
       running_tasks = COALESCE($2, running_tasks), free_disk_bytes = COALESCE($3, free_disk_bytes)
     WHERE id = $1 RETURNING state`,
    [agentId, heartbeat?.runningTasks ?? null, heartbeat?.freeDiskBytes || null],
  );
  if (!row) throw new AppError(404, 'unknown_agent', `agent ${agentId} is not registered`);
  return row.state;
}

/** Marks agents silent for a whole lease TTL offline; returns those it marked. */
export function markSilentAgentsOffline(db: Db, leaseTtlMs: number): Promise<Array<{ id: string; name: string }>> {
  return db.query<{ id: string; name: string }>(
    `UPDATE agents SET state = 'offline', offline_at = now()
     WHERE state <> 'offline' AND last_seen_at < now() - make_interval(secs => $1 / 1000.0) RETURNING id, name`,
    [leaseTtlMs],
  );
}

/** The connected agents that take a task type and have a free slot now, with their free slots.
 *  The slot the asking task holds counts as free: it is, once that task hands its work to children. */
export function freeAgents(
  app: { db: Db; config: { leaseTtlMs: number } },
  type: TaskType,
  askingTaskId: string,
): Promise<Array<{ id: string; slots: number; nvenc: boolean }>> {
  return app.db.query<{ id: string; slots: number; nvenc: boolean }>(
    `SELECT * FROM (
       SELECT a.id, 'nvenc' = ANY(a.capability_tags) AS nvenc,
              GREATEST(a.max_slots - (SELECT count(*) FROM tasks t WHERE t.state = 'leased' AND t.leased_by = a.id AND t.id <> $2), 0)::int AS slots
         FROM agents a
        WHERE ${connectedAgentSql('a', '$1')} AND $3 = ANY(a.task_types)
     ) free WHERE slots > 0 ORDER BY id`,
    [app.config.leaseTtlMs, askingTaskId, type],
  );
}

/** The free slots of these agents, all of them together. */
export function slotsOf(agents: ReadonlyArray<{ slots: number }>): number {
  return agents.reduce((n, a) => n + a.slots, 0);
}

/** Free slots in the farm for a task type (freeAgents'), all and on NVENC hosts. */
export async function freeSlots(
  app: { db: Db; config: { leaseTtlMs: number } },
  type: TaskType,
  askingTaskId: string,
): Promise<{ all: number; nvenc: number }> {
  const agents = await freeAgents(app, type, askingTaskId);
  return { all: slotsOf(agents), nvenc: slotsOf(agents.filter((a) => a.nvenc)) };
}

/** Slots busy on each of these agents: the tasks the queue has leased to it now (0 for none). */
export async function busySlotsByAgent(db: Db, agentIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.query<{ agentId: string; busy: number }>(
    `SELECT leased_by AS "agentId", count(*)::int AS busy FROM tasks WHERE state = 'leased' AND leased_by = ANY($1::text[]) GROUP BY leased_by`,
    [agentIds],
  );
  return new Map(rows.map((r) => [r.agentId, r.busy]));
}
