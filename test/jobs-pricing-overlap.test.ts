// Amplification through predefined shorts (issue 36 item 5): each predefined short is reframed on
// its own, so shorts that overlap buy face detection and crop encoding of the same minutes again.
// The price is the source's minutes plus the minutes the shorts overlap (their total less their
// union), at the plan's rate, shown as `overlappingShorts` in the cost breakdown. End to end: a
// real agent on a cheap 5-minute video (64x36 at 2 fps, silent: nothing to transcribe), three
// shorts over the same 290 s.
import test from 'ava';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { agentTools, serveFiles, type MediaServer } from './helpers/media.js';
import { overlappingShortsSec, priceJob } from '../coordinator/src/jobs/pricing.js';

const run = promisify(execFile);
const TOOLS = agentTools();

test('the overlap is the shorts total length less their union', (t) => {
  t.is(overlappingShortsSec(undefined), 0);
  t.is(overlappingShortsSec([{ start: 0, end: 30 }]), 0);
  t.is(
    overlappingShortsSec([
      { start: 0, end: 30 },
      { start: 30, end: 60 },
    ]),
    0,
    'touching is not overlapping',
  );
  t.is(
    overlappingShortsSec([
      { start: 100, end: 130 },
      { start: 0, end: 30 },
    ]),
    0,
    'in any order',
  );
  t.is(
    overlappingShortsSec([
      { start: 0, end: 30 },
      { start: 20, end: 50 },
    ]),
    10,
  );
  t.is(overlappingShortsSec(Array.from({ length: 100 }, () => ({ start: 0, end: 300 }))), 99 * 300, 'the amplification of the issue');
  t.is(
    overlappingShortsSec([
      { start: 0, end: 60 },
      { start: 10, end: 20 },
      { start: 15, end: 70 },
      { start: 200, end: 210 },
    ]),
    10 + 45,
  );
});

test('100 copies of one 5-minute short on a 5-minute source cost 500 minutes, not 5', (t) => {
  const shorts = Array.from({ length: 100 }, () => ({ start: 0, end: 300 }));
  const price = priceJob({ plan: 'pro', durationSec: 300, fromYoutube: false, downloadBytes: 0, predefinedShorts: shorts });
  t.deepEqual(price, { cost: 13, costBreakDown: { shortGen: 0.13, youtubeProcessing: 0, overlappingShorts: 12.87 } });
  // Shorts apart from one another add nothing; the breakdown is the contract's two keys.
  t.deepEqual(
    priceJob({
      plan: 'pro',
      durationSec: 3600,
      fromYoutube: false,
      downloadBytes: 0,
      predefinedShorts: [
        { start: 0, end: 60 },
        { start: 60, end: 90 },
      ],
    }),
    {
      cost: 1.56,
      costBreakDown: { shortGen: 1.56, youtubeProcessing: 0 },
    },
  );
});

let cluster: TestCluster;
let media: MediaServer;

test.before(async () => {
  cluster = await startCluster('jobs_pricing_overlap', { analysisRangeMinSec: 0 });
  const video = path.join(cluster.dataDir, 'five-minutes.mp4');
  await run(TOOLS.ffmpegPath, [
    ...['-y', '-hide_banner', '-loglevel', 'error'],
    ...['-f', 'lavfi', '-i', 'testsrc2=size=64x36:rate=2:duration=300', '-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono'],
    ...['-t', '300', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '16k', video],
  ]);
  media = await serveFiles({ 'five-minutes.mp4': video });
  await cluster.startAgent({ FFMPEG_PATH: TOOLS.ffmpegPath, FFPROBE_PATH: TOOLS.ffprobePath });
});
test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

// The reservation is where the price bites (before any reframing): an organization with credits
// for the source's minutes but not for the overlap is refused there, the work never done.
test.serial('a job of overlapping predefined shorts is priced for the minutes analysed again when it reserves', async (t) => {
  t.timeout(5 * 60_000);
  const { org, key } = await cluster.org({ plan: 'pro', credits: 0.35 });
  const shorts = [1, 2, 3].map((n) => ({ title: `Take ${n}`, start: 5, end: 295 }));
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: media.url('five-minutes.mp4'), options: { predefinedShorts: shorts } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const seen: number[] = [];
  const job = await cluster.settledJob(key, created.body.id, { seen, timeoutMs: 4 * 60_000 });
  // 300 s of source and 2 x 290 s of shorts over minutes already shorted: 880 s at 0.026 a minute.
  t.is(job.status, 'FAILED');
  t.is(job.message, 'Not enough credits for this video: 5.0 minutes cost 0.38 credits, 0.35 available');
  t.true(Math.max(...seen) < 30, `refused before the work: progress ${seen.join(',')}`);
  const ledger = await cluster.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [job.id]);
  t.deepEqual(
    ledger.map((l) => l.kind),
    ['reserve', 'release'],
  );
  const balance = await cluster.app.db.one<{ credits: number; reserved: number }>(
    `SELECT credits::float8 AS credits, reserved_credits::float8 AS reserved FROM organizations WHERE id = $1`,
    [org.id],
  );
  t.deepEqual(balance, { credits: 0.35, reserved: 0 });
});
