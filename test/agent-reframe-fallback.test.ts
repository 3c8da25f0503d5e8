import test from 'ava';
import { startCluster, type AgentProcess, type TestCluster } from './helpers/cluster.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';
import { makeTalkVideo } from './helpers/talk-video.js';
import { fliteAvailable } from './transcribe-synth.js';
import { blazeFaceModelPath } from '../node-agent/src/reframe/blazeface.js';

// When face detection fails on an agent, a job's shorts still get a crop path: the camera's no-face
// framing, held still, and the failure is in the agent's log with the job it hit.

let cluster: TestCluster | undefined;
let media: MediaServer | undefined;
let agent: AgentProcess;
const tools = { flite: fliteAvailable(), pocketsphinx: havePocketsphinx };

test.before(async () => {
  if (!tools.flite || !tools.pocketsphinx) return;
  cluster = await startCluster('agent_reframe_fallback');
  const talk = await makeTalkVideo(cluster.dataDir);
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  // The 128-pixel BlazeFace given the 256-pixel model: it loads (so the agent takes analysis), and
  // every detection fails on the input's shape.
  agent = await cluster.startAgent({ FACE_DETECTOR: 'blazeface-front', FACE_DETECTOR_MODEL: blazeFaceModelPath('back') });
});
test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

needing({ tools }).serial('face detection failing: every short gets the still no-face framing, and the log names the job', async (t) => {
  const { key } = await cluster!.org({ plan: 'pro', credits: 10 });
  const predefinedShorts = [
    { title: 'Practice', start: 0, end: 8 },
    { title: 'Later', start: 10, end: 16 },
  ];
  const created = await cluster!.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: media!.url('talk.mp4'), options: { predefinedShorts } },
  });
  t.is(created.status, 201);
  const job = await cluster!.settledJob(key, created.body.id);
  t.is(job.status, 'COMPLETED', job.message);

  const failed = await agent.waitForLog(/speaker detection failed/, 1000);
  t.is(JSON.parse(failed).jobId, created.body.id);
  t.is(job.data.shorts.length, 2);
  for (const s of job.data.shorts) {
    // The 640x360 talk is far from 9:16: the whole picture, fitted, from start to end, not moving.
    const { quality, ...path } = s.reframe;
    // Detection failed: no turn was judged, so there is no least-sure span to point at.
    t.truthy(quality);
    t.is(quality!.lowestConfidenceSpan, null);
    t.deepEqual(
      path,
      {
        sourceWidth: 640,
        sourceHeight: 360,
        keyframes: [{ time: s.startTime, x: 0, y: 0, width: 640, height: 360 }],
        segments: [{ start: s.startTime, end: s.endTime, layout: 'fit', tracks: [] }],
        shots: [{ start: s.startTime, end: s.endTime, transition: 'start' }],
      },
      s.content,
    );
  }
  const crops = await cluster!.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM files WHERE job_id = $1 AND 'short' = ANY(tags)`, [
    created.body.id,
  ]);
  t.is(crops!.n, 2, 'a crop clip rendered along each path');
});
