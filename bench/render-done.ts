// The render benches (farm-chunked.ts, farm-shorts.ts, render-api.ts) wait for a render through the
// API the same way: this is that wait.
import { waitFor, type TestCluster } from '../test/helpers/cluster.js';

/** Waits for the render to be done (throws if it failed); polls the API twice a second only, so that
 *  the bench's own requests take little from the agents' cores (the benches' times come from the
 *  database, not from this wait). */
export async function renderDone(cluster: TestCluster, key: string, renderId: string): Promise<void> {
  const done = await waitFor(
    async () => {
      const s = await cluster.api('GET', `/api/render/${renderId}`, { key });
      return s.body.type === 'done' || s.body.type === 'error' ? s.body : undefined;
    },
    60 * 60_000,
    'render',
    500,
  );
  if (done.type !== 'done') throw new Error(`render failed: ${JSON.stringify(done)}`);
}
