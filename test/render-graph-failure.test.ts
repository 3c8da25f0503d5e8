import test from 'ava';
import path from 'node:path';
import sharp from 'sharp';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { agentTools, ffmpegWrapper, makeTestVideo } from './helpers/media.js';
import { FfmpegError, runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { insertFiles } from '../coordinator/src/files/files.js';

// A render whose filter graph ffmpeg cannot set up fails the same way on every agent and every
// attempt: the farm fails it once, with ffmpeg's reason, instead of retrying it.

const TOOLS = agentTools();
let cluster: TestCluster;
let source: string;

test.before(async () => {
  cluster = await startCluster('render_graph_failure', { taskMaxAttempts: 3 });
  source = path.join(cluster.dataDir, 'grey.mp4');
  await makeTestVideo(source, { colour: '0x808080', width: 640, height: 360, seconds: 1, toneHz: 300 });
  // The agent's ffmpeg, with the watermark's pixels made non-square again (a stand-in for any graph bug): a
  // non-separable blend mode's graph then cannot configure, as before setsar=1 was added.
  const wrapper = path.join(cluster.dataDir, 'ffmpeg-non-square-watermark');
  await ffmpegWrapper(
    wrapper,
    TOOLS.ffmpegPath,
    'args=()\nfor a in "$@"; do args+=("${a//setsar=1,format=rgba/setsar=3017\\/3000,format=rgba}"); done',
    '"${args[@]}"',
  );
  await cluster.startAgent({ FFMPEG_PATH: wrapper, FFPROBE_PATH: TOOLS.ffprobePath });
});
test.after.always(() => cluster?.close());

test("a render whose filter graph cannot be configured fails after one attempt, with the filter's reason", async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: [],
    shorts: [{ startTime: 0, endTime: 1 }],
  });
  const bytes = await sharp({ create: { width: 431, height: 120, channels: 4, background: { r: 230, g: 30, b: 110, alpha: 1 } } })
    .png()
    .toBuffer();
  const objectKey = `orgs/${org.id}/logo.png`;
  const { size } = await cluster.app.store.put(objectKey, bytes);
  const [fileId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: org.id, name: 'logo.png', type: 'image', sizeBytes: size, objectKey }]),
  );
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id: jobId, target: 0, options: { waterMark: { fileAppId: fileId, width: '300px', blendMode: 'hue' } } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    120_000,
    'render',
  );
  t.like(done, { type: 'error', code: 'RENDERING_ERROR' });
  t.regex(done.message, /^Rendering failed: mergeplanes: input #1 link in1 SAR \d+:\d+ does not match output link default SAR 1:1$/);
  const task = await cluster.app.db.one(`SELECT attempts, max_attempts AS "maxAttempts", state FROM tasks WHERE subject_id = $1`, [
    created.body.renderId,
  ]);
  t.like(task, { attempts: 1, maxAttempts: 3 });
  const events = await cluster.app.db.query<{ kind: string }>(
    `SELECT kind FROM task_events WHERE task_id = (SELECT id FROM tasks WHERE subject_id = $1) ORDER BY id`,
    [created.body.renderId],
  );
  t.false(
    events.some((e) => e.kind === 'retry'),
    JSON.stringify(events),
  );
});

test('ffmpeg failures: a graph that cannot configure is told apart from one that may pass next time', async (t) => {
  const graph = (filter: string) =>
    runFfmpeg(
      TOOLS.ffmpegPath,
      [
        '-hide_banner',
        '-nostdin',
        '-loglevel',
        'error',
        '-f',
        'lavfi',
        '-i',
        'color=s=64x64:d=0.1',
        '-f',
        'lavfi',
        '-i',
        'color=s=64x64:d=0.1',
        '-filter_complex',
        filter,
        '-map',
        '[o]',
        '-f',
        'null',
        '-',
      ],
      { durationSec: 0.1 },
    );
  const sar = await t.throwsAsync(
    graph(
      '[0:v]format=yuv444p,setsar=3/2[a];[1:v]format=yuv444p[b];[a]extractplanes=y+u+v[y][u][v];[b]extractplanes=y[y2];[y2][u][v]mergeplanes=0x001020:yuv444p[o];[y]nullsink',
    ),
    { instanceOf: FfmpegError },
  );
  t.true(sar.graphRefused, sar.message);
  t.regex(sar.reason, /^mergeplanes: input #1 .*SAR 3:2 does not match/);
  const unknown = await t.throwsAsync(graph('[0:v]nosuchfilter[o]'), { instanceOf: FfmpegError });
  t.true(unknown.graphRefused);
  t.regex(unknown.reason, /No such filter: 'nosuchfilter'/);
  // A file that is not there (a vanished download, a full disk) says nothing about the graph.
  const missing = await t.throwsAsync(
    runFfmpeg(
      TOOLS.ffmpegPath,
      ['-hide_banner', '-nostdin', '-loglevel', 'error', '-i', path.join(cluster.dataDir, 'gone.mp4'), '-f', 'null', '-'],
      { durationSec: 1 },
    ),
    { instanceOf: FfmpegError },
  );
  t.false(missing.graphRefused);
});
