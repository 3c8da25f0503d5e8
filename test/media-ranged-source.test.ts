import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FFMPEG } from './helpers/media.js';
import { serveRanged } from './helpers/range-server.js';

// Sources from a server that takes range requests, through the API: an MP4 with its index at the end
// crosses the network once for a whole job, and what its index alone answers (a probe, a file with no
// picture) is answered without fetching the media data.

const run = promisify(execFile);
let cluster: TestCluster;
let media: Awaited<ReturnType<typeof serveRanged>>;
const files: Record<string, Buffer> = {};

test.before(async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ranged-source-'));
  const clip = path.join(dir, 'index-last.mp4');
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=640x360:r=25:d=6', '-f', 'lavfi', '-i', 'sine=f=300:d=6'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', clip],
  ]);
  // Sound only, as a voice recorder's M4A (index at the end, as ffmpeg writes it).
  const voice = path.join(dir, 'voice.m4a');
  await run(FFMPEG, ['-y', '-v', 'error', '-f', 'lavfi', '-i', 'anoisesrc=d=60:a=0.2', '-c:a', 'aac', '-b:a', '128k', voice]);
  files['index-last.mp4'] = await readFile(clip);
  files['voice.m4a'] = await readFile(voice);
  media = await serveRanged(Object.fromEntries(Object.entries(files).map(([name, body]) => [name, () => body])), { ranges: true });
  cluster = await startCluster('media_ranged_source');
  await cluster.startAgent();
});

test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

test.serial('a job on an MP4 with its index at the end fetches each byte once, index first', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: {
      functionName: 'VideoShorts',
      fileUrl: media.url('index-last.mp4'),
      options: { predefinedShorts: [{ title: 'Ranged', start: 1, end: 4 }] },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 180_000 });
  t.is(job.status, 'COMPLETED', job.message);
  const size = files['index-last.mp4']!.length;
  t.is(media.total('index-last.mp4'), size, JSON.stringify(media.served));
  const parts = media.served.filter((e) => e.name === 'index-last.mp4').map((e) => e.range);
  t.is(parts.length, 3, JSON.stringify(parts));
  t.true(Number(/^bytes=(\d+)-/.exec(parts[1]!)![1]) > Number(/^bytes=(\d+)-/.exec(parts[2]!)![1]), 'the tail (index) before the middle');
});

test.serial('a file with no picture is refused from its index, before its sound is fetched', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('voice.m4a') } });
  t.is(created.status, 201);
  const job = await cluster.settledJob(key, created.body.id, { timeoutMs: 120_000 });
  t.is(job.status, 'FAILED');
  t.regex(job.message, /no video stream/i);
  t.falsy(job.cost);
  const size = files['voice.m4a']!.length;
  t.true(media.total('voice.m4a') < size / 2, `${media.total('voice.m4a')} of ${size} bytes fetched`);
});

test.serial('a probe of an MP4 reads its index and no more', async (t) => {
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const before = media.total('index-last.mp4');
  const created = await cluster.api('POST', '/api/probes', { key, body: { url: media.url('index-last.mp4') } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const probe = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/probes/${created.body.id}`, { key });
      return r.body.state === 'completed' || r.body.state === 'failed' ? r.body : undefined;
    },
    60_000,
    'probe to settle',
  );
  t.is(probe.state, 'completed', JSON.stringify(probe));
  t.true(Math.abs(probe.result.durationSec - 6) < 0.1, JSON.stringify(probe.result));
  t.like(probe.result.streams[0], { codecType: 'video', width: 640, height: 360 });
  const size = files['index-last.mp4']!.length;
  const fetched = media.total('index-last.mp4') - before;
  t.true(fetched < size / 2, `${fetched} of ${size} bytes fetched`);
});
