import type { Queryable } from '../db/db.js';
import type { TaskQueue } from '../tasks/task-queue.js';

// probe-media (contract: common/src/tasks/probe-media.ts); its outcome: ./probe-media-outcome.ts.

export async function enqueueProbe(c: Queryable, queue: TaskQueue, organizationId: string, url: string): Promise<string> {
  return queue.enqueue(c, { type: 'probe-media', organizationId, subjectId: null, payload: { url } });
}
