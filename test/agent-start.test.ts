import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { expectedOnnxProvider } from './helpers/onnx-provider.js';
import type { Parsed } from './helpers/parsed.js';

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
  // A short's reframing needs no recogniser: this host still takes it, and everything but transcription.
  t.deepEqual(ready.taskTypes, ['probe-media', 'reframe-short', 'render-short', 'render-chunk']);
  const row = await cluster.app.db.one<{
    capabilities: {
      task_types: string[];
      nvenc_available: boolean;
      cpu_cores: number;
      video_encoders: string[];
      face_detector: string;
      face_detector_provider: string;
    };
  }>(`SELECT capabilities FROM agents WHERE id = $1`, [ready.agentId]);
  t.deepEqual(row!.capabilities.task_types, ['probe-media', 'reframe-short', 'render-short', 'render-chunk']);
  t.false(row!.capabilities.nvenc_available);
  t.true(row!.capabilities.cpu_cores >= 1);
  t.true(row!.capabilities.video_encoders.includes('libx264'));
});

test('an agent that analyses videos loads its face detector at start and reports where it runs', async (t) => {
  const agent = await cluster.startAgent();
  const loaded = JSON.parse(await agent.waitForLog(/"face detector ready"/));
  t.is(loaded.detector, 'blazeface-back-256');
  // CUDA where the host has an NVIDIA GPU and onnxruntime's CUDA provider loads, else CPU.
  const provider = await expectedOnnxProvider();
  t.is(loaded.provider, provider);
  const ready = JSON.parse(await agent.waitForLog(/"agent ready"/));
  t.true(ready.taskTypes.includes('analyze-video'));
  const row = await cluster.app.db.one<{
    capabilities: {
      task_types: string[];
      nvenc_available: boolean;
      cpu_cores: number;
      video_encoders: string[];
      face_detector: string;
      face_detector_provider: string;
    };
  }>(`SELECT capabilities FROM agents WHERE id = $1`, [ready.agentId]);
  t.is(row!.capabilities.face_detector, 'blazeface-back-256');
  t.is(row!.capabilities.face_detector_provider, `EXECUTION_PROVIDER_${provider}`);
});

test('an agent configured with a face detector model that is absent takes no analysis work and says why', async (t) => {
  const agent = await cluster.startAgent({ FACE_DETECTOR: 'yunet', FACE_DETECTOR_MODEL: '/nonexistent/yunet.onnx' });
  const ready = JSON.parse(await agent.waitForLog(/"agent ready"/));
  // Both types that find faces say why they are off: the analysis and a short's reframing.
  const disabled = agent.logs.filter((l) => l.includes('"task type disabled: prerequisite missing"')).map((l) => JSON.parse(l) as Parsed);
  t.deepEqual(
    disabled.map((d) => d.taskType),
    ['analyze-video', 'reframe-short'],
  );
  for (const d of disabled) t.regex(d.missing, /FACE_DETECTOR=yunet needs the model file \/nonexistent\/yunet\.onnx/);
  t.false(ready.taskTypes.includes('analyze-video'));
  t.false(ready.taskTypes.includes('reframe-short'));
  t.true(ready.taskTypes.includes('analyze-range'), 'transcription needs no faces');
});

test('the metrics show connected agents and queue depth', async (t) => {
  await cluster.startAgent();
  const metrics = (await cluster.api('GET', '/metrics')).body as string;
  t.regex(metrics, /shorts_agents_connected [1-9]/);
  t.regex(metrics, /shorts_task_queue_wait_seconds/);
  // Where each agent's face detection runs comes from its reported capabilities.
  const provider = (await expectedOnnxProvider()).toLowerCase();
  t.regex(metrics, new RegExp(`shorts_agent_info\\{[^}]*face_detector_provider="${provider}"[^}]*\\} 1`));
});
