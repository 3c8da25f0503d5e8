import type { AgentServiceHandlers } from '@shorts/common/generated/shorts/v1/AgentService';
import { isTaskType } from '@shorts/common/tasks';
import { capabilityTags } from '@shorts/common/placement';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { heartbeatIntervalMs } from '../tasks/liveness.js';
import type { AgentRpcContext } from './agent-rpc.js';

/** RegisterAgent: a host joins with its capabilities and gets an id and its timings. */
export function registerAgentRpc({ unary, deps, registry }: AgentRpcContext): AgentServiceHandlers['RegisterAgent'] {
  const { db, log } = deps;
  return unary('RegisterAgent', async (req) => {
    const caps = req.capabilities;
    if (!caps) throw new AppError(400, 'bad_capabilities', "RegisterAgent needs the host's capabilities");
    const taskTypes = caps.task_types.filter(isTaskType);
    const id = newId();
    const tags = capabilityTags(caps);
    await db.query(
      `INSERT INTO agents (id, name, capabilities, task_types, capability_tags, max_slots, free_disk_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        id,
        req.name || 'agent',
        { ...caps, task_types: taskTypes },
        taskTypes,
        tags,
        Math.max(1, Number(caps.max_concurrent_tasks) || 1),
        Number(caps.free_disk_bytes) || null,
      ],
    );
    registry.sessions.set(id, { id, name: req.name, taskTypes, lastSeen: Date.now() });
    log.info('agent registered', {
      agentId: id,
      name: req.name,
      taskTypes,
      tags,
      cores: caps.cpu_cores,
      slots: caps.max_concurrent_tasks,
    });
    return { agent_id: id, lease_ttl_ms: deps.leaseTtlMs, heartbeat_interval_ms: heartbeatIntervalMs(deps.leaseTtlMs) };
  });
}

/** Heartbeat: the agent is alive; tells it to register again or that it is draining. */
export function heartbeatRpc({ unary, sessionOf, markSeen }: AgentRpcContext): AgentServiceHandlers['Heartbeat'] {
  return unary('Heartbeat', async (req) => {
    const s = await sessionOf(req.agent_id).catch(() => undefined);
    if (!s) return { reregister: true };
    const state = await markSeen(s.id, { runningTasks: Number(req.running_tasks) || 0, freeDiskBytes: Number(req.free_disk_bytes) || 0 });
    return { reregister: false, draining: state === 'draining' };
  });
}
