import type { AgentServiceHandlers } from '@shorts/common/generated/shorts/v1/AgentService';
import type { AgentRpcContext } from './agent-rpc.js';

/** LeaseTask: a long poll for one task the agent can run. */
export function leaseTaskRpc({ unary, deps, registry, sessionOf, markSeen }: AgentRpcContext): AgentServiceHandlers['LeaseTask'] {
  const { queue, log } = deps;
  return unary('LeaseTask', async (req, call) => {
    const session = await sessionOf(req.agent_id);
    // A draining agent finishes what it has and takes nothing new; it learns so here.
    if ((await markSeen(session.id)) === 'draining') return { draining: true };
    const types = req.task_types.length ? req.task_types.filter((t) => session.taskTypes.includes(t)) : session.taskTypes;
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    const waitMs = Math.min(req.wait_ms || deps.leaseWaitMs, deps.leaseWaitMs);
    const task = await queue.lease(session.id, types, waitMs, abort.signal);
    registry.touch(session.id);
    if (!task) return {};
    // From here the lease is committed: if the agent cannot receive it, hand it back at once
    // rather than let it expire and cost the task an attempt.
    let payload: Record<string, unknown>;
    try {
      payload = await queue.leasePayload(task);
    } catch (err) {
      await queue
        .handBack(task, `could not prepare the lease: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300), {
          prepareFailed: true,
        })
        .catch((handBackErr) => log.error('could not hand back a lease', { taskId: task.id, err: handBackErr }));
      throw err;
    }
    if (abort.signal.aborted || call.cancelled) {
      await queue.handBack(task, 'the agent left before it received the lease');
      return {};
    }
    return {
      task: {
        task_id: task.id,
        type: task.type,
        lease_token: task.leaseToken ?? '',
        attempt: task.attempts,
        lease_expires_at_ms: task.leaseExpiresAt ? new Date(task.leaseExpiresAt).getTime() : 0,
        payload_json: JSON.stringify(payload),
        request_id: task.requestId ?? '',
      },
    };
  });
}
