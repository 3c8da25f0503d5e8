import type { AgentServiceHandlers } from '@shorts/common/generated/shorts/v1/AgentService';
import { TASK_STATES } from '@shorts/common/tasks';
import { AppError } from '../errors.js';
import { taskWritesName } from '../files/task-objects.js';
import { leaseTag, taskUploadLimit } from '../files/task-uploads.js';
import { LEASE_LOST, taskObjectKey } from '../tasks/task-queue.js';
import type { AgentRpcContext } from './agent-rpc.js';

/** CreateUploadUrl: a signed URL for one object the leased task writes. */
export function createUploadUrlRpc({ unary, deps }: AgentRpcContext): AgentServiceHandlers['CreateUploadUrl'] {
  const { queue } = deps;
  return unary('CreateUploadUrl', async (req) => {
    const task = await queue.get(req.task_id);
    if (!task || task.state !== TASK_STATES.leased || task.leaseToken !== req.lease_token) {
      throw new AppError(409, LEASE_LOST, `Task ${req.task_id} is no longer leased with this token`);
    }
    if (!/^(?!\.)[A-Za-z0-9._-]{1,100}$/.test(req.name)) throw new AppError(400, 'bad_name', 'upload name must be a plain file name');
    if (!taskWritesName(task.type, req.name))
      throw new AppError(400, 'bad_name', `${task.type} does not write an object named ${req.name}`);
    const key = taskObjectKey(task, req.name);
    const maxBytes = await taskUploadLimit(deps.store, task, req.name, deps.agentUploadMaxBytes);
    const { url, expiresAt } = deps.urls.signUpload(key, { taskId: task.id, lease: leaseTag(task.leaseToken), maxBytes });
    return { url, object_key: key, expires_at_ms: expiresAt.getTime() };
  });
}
