import type { Coordinator } from '../context.js';
import type { TypedOutcomeHandler } from '../tasks/typed-outcome.js';

// analyze-range (contract: common/src/tasks/analyze-range.ts), the children of a long source's
// analysis (./analysis-ranges.ts).

/** The coordinator's side of analyze-range: children report to their parent, so it only signs the
 *  URL of the audio the range reads when an agent takes it. */
export function createAnalyzeRangeOutcomeHandler(app: Pick<Coordinator, 'urls'>): TypedOutcomeHandler<'analyze-range'> {
  return {
    async prepareLease(_task, payload) {
      return { ...payload, audioUrl: (await app.urls.sign(payload.audioKey, 'GET', 6 * 3600)).url };
    },
    async onComplete() {},
    async onFailed() {},
  };
}
