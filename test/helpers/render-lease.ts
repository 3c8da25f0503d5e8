import type { Word } from '@shorts/common/text/transcript';
import type { TestCluster } from './cluster.js';
import { insertCompletedJob } from './completed-job.js';
import type { FakeAgent, LeasedTask } from './fake-agent.js';

const WORDS: Word[] = [{ text: 'hello', start: 0.5, end: 0.9 }];

/**
 * A render of a completed job's first short (0-2 s), asked for through the API by a new pro
 * organization, and its render-short task leased by `agent`.
 */
export async function leaseRender(cluster: TestCluster, agent: FakeAgent, words: Word[] = WORDS) {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, { organizationId: org.id, words, shorts: [{ startTime: 0, endTime: 2 }] });
  const created = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0 } });
  const task: LeasedTask | undefined = await agent.lease(3000);
  if (task?.type !== 'render-short') throw new Error('no render leased');
  return { org, key, renderId: created.body.renderId as string, task };
}
