import type { Queryable } from '../db/db.js';
import type { TaskOutcomeHandler, TaskQueue } from '../tasks/task-queue.js';

// probe-media: the smallest real task, an agent ffprobes a URL. It proves the lease path end to end
// and lets an operator check that an agent can reach a media source.

export interface ProbeResult {
  formatName: string;
  durationSec: number;
  streams: Array<{ index: number; codecType: string; codecName: string; width?: number; height?: number }>;
}

export async function enqueueProbe(c: Queryable, queue: TaskQueue, organizationId: string, url: string): Promise<string> {
  return queue.enqueue(c, { type: 'probe-media', organizationId, subjectId: null, payload: { url } });
}

export const probeTaskHandler: TaskOutcomeHandler = {
  // The task row itself keeps the result; nothing else to update.
  async onComplete() {},
  async onFailed() {},
};
