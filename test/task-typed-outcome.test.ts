// A domain's side of a task type (withContract) gets the task's stored payload as its type's contract
// reads it: no domain casts a payload to what it hopes it holds.
import test from 'ava';
import { ContractViolation } from '@shorts/common/tasks/contracts';
import type { ProbeMediaPayload } from '@shorts/common/tasks/probe-media';
import type { Queryable } from '../coordinator/src/db/db.js';
import type { TaskRow } from '../coordinator/src/tasks/task-queue.js';
import { withContract } from '../coordinator/src/tasks/typed-outcome.js';

const c = {} as Queryable;
const stored = (payload: Record<string, unknown>) => ({ id: 't1', type: 'probe-media', payload }) as TaskRow;
const probed = { formatName: 'mov,mp4', durationSec: 2, streams: [{ index: 0, codecType: 'video', codecName: 'h264' }] };

test("a domain reads its task's payload as the contract parsed it, and a payload the contract refuses only where it reads it", async (t) => {
  const read: ProbeMediaPayload[] = [];
  const failed: string[] = [];
  const handler = withContract('probe-media', {
    async onComplete(_c, task) {
      read.push(task.payload);
    },
    async onFailed(_c, _task, reason) {
      failed.push(reason);
    },
  });

  // A key the contract does not name is not the domain's to see.
  await handler.onComplete(c, stored({ url: 'https://media.example/a.mp4', leftover: 'not in the contract' }), probed);
  t.deepEqual(read, [{ url: 'https://media.example/a.mp4' }]);

  const refused = await t.throwsAsync(handler.onComplete(c, stored({ url: '' }), probed));
  t.true(refused instanceof ContractViolation);
  t.regex(refused!.message, /payload does not match the probe-media contract: url/);
  t.is(read.length, 1);

  // A failure handler that never reads the payload still runs: the task can always fail.
  await handler.onFailed(c, stored({ url: '' }), 'the source is gone', 'TASK_FAILED');
  t.deepEqual(failed, ['the source is gone']);
});
