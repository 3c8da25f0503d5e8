import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';

let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('agent_start');
});
test.after.always(() => cluster?.close());

test('an agent missing speech recognition says so at start and takes no analysis work', async (t) => {
  const agent = await cluster.startAgent({ POCKETSPHINX_BIN: '/nonexistent/pocketsphinx_continuous' });
  const disabled = JSON.parse(await agent.waitForLog(/"task type disabled: prerequisite missing"/, 5000));
  t.is(disabled.taskType, 'analyze-video');
  t.regex(disabled.missing, /pocketsphinx/i);
  const ready = JSON.parse(await agent.waitForLog(/"agent ready"/));
  t.deepEqual(ready.taskTypes, ['probe-media', 'render-short']);
  const row = await cluster.app.db.one(`SELECT capabilities FROM agents WHERE id = $1`, [ready.agentId]);
  t.deepEqual(row!.capabilities.task_types, ['probe-media', 'render-short']);
  t.false(row!.capabilities.nvenc_available);
  t.true(row!.capabilities.cpu_cores >= 1);
  t.true(row!.capabilities.video_encoders.includes('libx264'));
});

test('the metrics show connected agents and queue depth', async (t) => {
  await cluster.startAgent();
  const metrics = (await cluster.api('GET', '/metrics')).body as string;
  t.regex(metrics, /shorts_agents_connected [12]/);
  t.regex(metrics, /shorts_task_queue_wait_seconds/);
});
