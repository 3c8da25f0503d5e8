import test from 'ava';
import path from 'node:path';
import { startCluster, waitFor, type AgentProcess, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { encodeTestVideo, makeTestVideo, serveFiles, type MediaServer } from './helpers/media.js';
import { ffprobe } from '../node-agent/src/media/ffmpeg.js';

// What an agent refuses before any real work, and how: sources past the configured frame-rate and
// frame-size caps (analysis and render alike), and a lease whose input does not parse. Each ends
// with the job, render or task failed for good with a message that says why, never left leased.

let cluster: TestCluster;
let media: MediaServer;
let agent: AgentProcess;
let bursts: string;
let large: string;

/**
 * 3 s of 160x90 video whose frames come in pairs 1/60 s apart, a pair every 1/6 s: on average 12
 * frames a second, but decoded in bursts at 60.
 */
async function burstyVideo(dir: string): Promise<string> {
  const out = path.join(dir, 'bursts.mp4');
  await encodeTestVideo(out, ['testsrc2=s=160x90:r=60:d=3'], {
    tone: 'sine=d=3',
    videoArgs: ['-vf', "select='lt(mod(n\\,10)\\,2)'", '-vsync', 'vfr'],
  });
  return out;
}

test.before(async () => {
  cluster = await startCluster('agent_task_guards');
  bursts = await burstyVideo(cluster.dataDir);
  large = await makeTestVideo(path.join(cluster.dataDir, 'large.mp4'), { seconds: 2, width: 320, height: 180 });
  media = await serveFiles({ 'bursts.mp4': bursts, 'large.mp4': large });
  // Caps lowered so that small test videos exceed them: 160x90 (14,400 px) passes the size cap,
  // 320x180 (57,600 px) does not.
  agent = await cluster.startAgent({ MAX_SOURCE_FPS: '30', MAX_SOURCE_PIXELS: '20000' });
});
test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

const settledJob = (key: string, id: string) => cluster.settledJob(key, id, { timeoutMs: 60_000 });

const credits = async (orgId: string) =>
  cluster.app.db.one<{ credits: string; reserved: string }>(
    'SELECT credits, reserved_credits AS reserved FROM organizations WHERE id = $1',
    [orgId],
  );

test('the bursty test video averages under the frame-rate cap but runs above it', async (t) => {
  const info = await ffprobe(bursts);
  t.true(info.fps !== null && info.fps < 30, `average ${info.fps}`);
  t.is(info.peakFps, 60);
});

test.serial('analysis refuses a source above the frame-rate cap even when its average is below it', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('bursts.mp4') } });
  t.is(created.status, 201);
  const job = await settledJob(key, created.body.id);
  t.is(job.status, 'FAILED');
  t.regex(JSON.stringify(job), /The video runs at 60 frames a second; sources are limited to 30/);
  const row = await credits(org.id);
  t.is(Number(row!.credits), 10, 'nothing charged');
  t.is(Number(row!.reserved), 0);
});

test.serial('analysis refuses a source above the frame-size cap', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('large.mp4') } });
  t.is(created.status, 201);
  const job = await settledJob(key, created.body.id);
  t.is(job.status, 'FAILED');
  t.regex(JSON.stringify(job), /The video is 320x180; sources are limited to 20,000 pixels a frame/);
});

test.serial('a render refuses a source above the frame-rate or frame-size cap', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  for (const [source, width, height, message] of [
    [bursts, 160, 90, /The video runs at 60 frames a second; sources are limited to 30/],
    [large, 320, 180, /The video is 320x180; sources are limited to 20,000 pixels a frame/],
  ] as const) {
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      width,
      height,
      words: [{ text: 'hello', start: 0.5, end: 0.9 }],
      shorts: [{ startTime: 0, endTime: 2 }],
    });
    const created = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0 } });
    t.is(created.status, 201, JSON.stringify(created.body));
    const status = await waitFor(
      async () => {
        const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
        return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
      },
      60_000,
      'render to settle',
    );
    t.is(status.type, 'error');
    t.regex(status.message, message);
  }
});

test.serial('a lease whose input does not parse fails its task for good, and the agent goes on', async (t) => {
  const { key } = await cluster.org();
  await agent.kill('SIGKILL');
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: media.url('large.mp4') } });
  t.is(created.status, 201);
  // What no coordinator of this version writes, as an older or newer one might: the url a number.
  await cluster.app.db.query(`UPDATE tasks SET payload = '{"url": 42}'::jsonb WHERE id = $1`, [created.body.id]);
  agent = await cluster.startAgent({ MAX_SOURCE_FPS: '30', MAX_SOURCE_PIXELS: '20000' });
  // No watchdog runs in tests: a task left leased would stay so and this would time out.
  const probe = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/probes/${created.body.id}`, { key });
      return r.body.state === 'completed' || r.body.state === 'failed' ? r.body : undefined;
    },
    30_000,
    'probe to settle',
  );
  t.is(probe.state, 'failed');
  t.regex(probe.error, /^The task's input could not be read: .*url/);
  const row = await cluster.app.db.one<{ attempts: number; lease_token: string | null }>(
    'SELECT attempts, lease_token FROM tasks WHERE id = $1',
    [created.body.id],
  );
  t.is(row!.attempts, 1, 'not retried: another agent would read it no better');
  t.is(row!.lease_token, null);
  await agent.waitForLog(/"task failed".*BAD_PAYLOAD/, 5000);

  const next = await cluster.api('POST', '/api/probes', { key, body: { url: media.url('large.mp4') } });
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/probes/${next.body.id}`, { key });
      return r.body.state === 'completed' || r.body.state === 'failed' ? r.body : undefined;
    },
    30_000,
    'second probe to settle',
  );
  t.is(done.state, 'completed', JSON.stringify(done));
});
