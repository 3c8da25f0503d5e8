import type { Coordinator } from '../context.js';
import type { TypedOutcomeHandler } from '../tasks/typed-outcome.js';

// render-chunk (contract: common/src/tasks/render-chunk.ts), the children of a render split across
// agents (./render-chunks.ts).

/** render-chunk's side in the coordinator: fresh URLs when an agent takes one. Its outcome is its
 *  parent's business (fan-out.ts), never a domain's. */
export function createRenderChunkOutcomeHandler(app: Pick<Coordinator, 'urls'>): TypedOutcomeHandler<'render-chunk'> {
  const never = () => {
    throw new Error("a render-chunk is always a render's child");
  };
  return {
    async prepareLease(_task, spec) {
      const sourceUrl = (await app.urls.sign(spec.sourceObjectKey, 'GET', 6 * 3600)).url;
      const watermarkObjectUrl = spec.watermark?.objectKey ? (await app.urls.sign(spec.watermark.objectKey, 'GET', 6 * 3600)).url : null;
      return { ...spec, sourceUrl, watermarkObjectUrl };
    },
    async onComplete() {
      never();
    },
    async onFailed() {
      never();
    },
  };
}
