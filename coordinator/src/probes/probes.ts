import type { Queryable } from '../db/db.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import type { TypedOutcomeHandler } from '../tasks/typed-outcome.js';

// probe-media (contract: common/src/tasks/probe-media.ts): the task row itself keeps the result.


export async function enqueueProbe(c: Queryable, queue: TaskQueue, organizationId: string, url: string): Promise<string> {
  return queue.enqueue(c, { type: 'probe-media', organizationId, subjectId: null, payload: { url } });
}

export const probeTaskHandler: TypedOutcomeHandler<'probe-media'> = {
  // The task row itself keeps the result; nothing else to update.
  async onComplete() {},
  async onFailed() {},
};
