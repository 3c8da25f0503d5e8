import type { Coordinator } from '../context.js';
import type { TypedOutcomeHandler } from '../tasks/typed-outcome.js';

// reframe-short (contract: common/src/tasks/reframe-short.ts), the children that reframe a long
// source's shorts side by side (./analysis-shorts.ts).

/** The coordinator's side of reframe-short: children report to their parent, so it only signs the
 *  URLs of the source and audio the short reads when an agent takes it. */
export function createReframeShortOutcomeHandler(app: Pick<Coordinator, 'urls'>): TypedOutcomeHandler<'reframe-short'> {
  return {
    async prepareLease(_task, payload) {
      const sign = async (key: string) => (await app.urls.sign(key, 'GET', 6 * 3600)).url;
      return { ...payload, sourceUrl: await sign(payload.source.objectKey), audioUrl: await sign(payload.audio.objectKey) };
    },
    async onComplete() {},
    async onFailed() {},
  };
}
