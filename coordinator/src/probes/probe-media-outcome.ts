import type { TypedOutcomeHandler } from '../tasks/typed-outcome.js';

// probe-media (contract: common/src/tasks/probe-media.ts): the task row itself keeps the result.

export const probeMediaOutcomeHandler: TypedOutcomeHandler<'probe-media'> = {
  // The task row itself keeps the result; nothing else to update.
  async onComplete() {},
  async onFailed() {},
};
