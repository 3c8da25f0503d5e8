// A long recording joined from clips (issue 36 item 6): its audio decodes past its streams' end, so
// the agent reports its length twice, and when the second price differs from the first by a cent the
// job's one `estimate` ledger row grows (it used to be a second row, which the ledger's unique index
// refused on every heartbeat until the job failed as "agents stopped responding"). And any report the
// coordinator cannot store for such a reason fails the task at once, saying so. Real Postgres, a real
// agent, the agent's ffmpeg. The recording is 10.8 minutes (the per-minute price passes the job
// minimum past 10 minutes on the free plan) but cheap: 64x36 at 2 fps with silent sound, so nothing is
// transcribed (the client names the short), and 100 credits a dollar make its 1 s of extra audio 5
// credit cents.
import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { agentTools, serveFiles, type MediaServer } from './helpers/media.js';
import { measureMediaDuration } from '../node-agent/src/media/ffmpeg.js';
import { extractAnalysisAudio } from '../node-agent/src/tasks/analyze-video.js';
import { priceJob } from '../coordinator/src/jobs/pricing.js';

const run = promisify(execFile);
const TOOLS = agentTools();
const CREDITS_PER_DOLLAR = 100;
let cluster: TestCluster;
let media: MediaServer;
let joined: string;

const ffmpeg = (...args: string[]) => run(TOOLS.ffmpegPath, ['-y', '-hide_banner', '-loglevel', 'error', ...args]);

/** Three takes of 215.4 s joined by the concat demuxer, each placed 215 s after the last (an editor
 *  trimming by video length): streams of about 645.5 s whose audio decodes about 1 s longer. */
async function joinedRecording(dir: string): Promise<string> {
  const list: string[] = [];
  for (const take of [1, 2, 3]) {
    const clip = path.join(dir, `take-${take}.mp4`);
    await ffmpeg(
      ...['-f', 'lavfi', '-i', 'testsrc2=size=64x36:rate=2:duration=215.4', '-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono'],
      ...['-t', '215.4', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '16k', clip],
    );
    list.push(`file '${clip}'`, 'duration 215');
  }
  const listFile = path.join(dir, 'takes.txt');
  await writeFile(listFile, list.join('\n') + '\n');
  const out = path.join(dir, 'joined-long.mp4');
  await ffmpeg('-f', 'concat', '-safe', '0', '-i', listFile, '-c', 'copy', out);
  return out;
}

test.before(async () => {
  // Whole-file analysis: the length is reported by the one task that measures and decodes it.
  cluster = await startCluster('analysis_joined_long', { creditsPerDollar: CREDITS_PER_DOLLAR, analysisRangeMinSec: 0 });
  joined = await joinedRecording(cluster.dataDir);
  media = await serveFiles({ 'joined-long.mp4': joined });
  await cluster.startAgent({ FFMPEG_PATH: TOOLS.ffmpegPath, FFPROBE_PATH: TOOLS.ffprobePath });
});
test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

const createJob = async (key: string, title: string) => {
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: {
      functionName: 'VideoShorts',
      name: title,
      fileUrl: media.url('joined-long.mp4'),
      options: { predefinedShorts: [{ title: 'Opening', start: 0, end: 4 }] },
    },
  });
  if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(created.body)}`);
  return created.body.id as string;
};

test.serial('a long recording joined from clips completes: its second, longer length grows the one estimate', async (t) => {
  t.timeout(5 * 60_000);
  // The two lengths the agent reports differ by a credit cent at least: the case that broke.
  const measuredSec = await measureMediaDuration(TOOLS.ffmpegPath, joined);
  const { billedSec } = await extractAnalysisAudio(TOOLS.ffmpegPath, joined, `${joined}.wav`, measuredSec);
  const price = (durationSec: number) =>
    priceJob({ plan: 'free', durationSec, fromYoutube: false, downloadBytes: 0 }, CREDITS_PER_DOLLAR).cost;
  t.log(`streams end at ${measuredSec} s, the audio decodes to ${billedSec} s: ${price(measuredSec)} then ${price(billedSec)} credits`);
  t.true(billedSec > measuredSec + 0.5 && price(billedSec) > price(measuredSec) && price(measuredSec) > 30);

  const { org, key } = await cluster.org({ plan: 'free', credits: 100 });
  const jobId = await createJob(key, 'Joined takes');
  const job = await cluster.settledJob(key, jobId, { timeoutMs: 4 * 60_000 });
  t.is(job.status, 'COMPLETED', job.message);
  t.is(job.cost, price(billedSec));

  const ledger = await cluster.app.db.query<{ kind: string; amount: number }>(
    `SELECT kind, amount::float8 AS amount FROM credit_ledger WHERE job_id = $1 ORDER BY id`,
    [jobId],
  );
  t.deepEqual(
    ledger.map((l) => l.kind),
    ['reserve', 'estimate', 'charge'],
  );
  // The reservation grew to the second price; the charge is that price.
  t.is(Math.round((ledger[0]!.amount + ledger[1]!.amount) * 100) / 100, price(billedSec));
  const attempts = await cluster.app.db.one<{ attempts: number }>(
    `SELECT attempts FROM tasks WHERE subject_id = $1 AND parent_id IS NULL`,
    [jobId],
  );
  t.is(attempts!.attempts, 1, 'done on its first lease');
  const balance = await cluster.app.db.one<{ credits: number; reserved: number }>(
    `SELECT credits::float8 AS credits, reserved_credits::float8 AS reserved FROM organizations WHERE id = $1`,
    [org.id],
  );
  t.deepEqual(balance, { credits: Math.round((100 - price(billedSec)) * 100) / 100, reserved: 0 });
});

test.serial('a report the database refuses for good fails the job at once, saying the coordinator could not store it', async (t) => {
  t.timeout(3 * 60_000);
  const { org, key } = await cluster.org({ plan: 'free', credits: 100 });
  // A fault of the database's own (a trigger raising), not a mock: the job's progress cannot be stored.
  await cluster.app.db.query(`
    CREATE FUNCTION refuse_job_progress() RETURNS trigger AS $$
    BEGIN RAISE EXCEPTION 'progress refused for the test'; END $$ LANGUAGE plpgsql;
    CREATE TRIGGER refuse_job_progress BEFORE UPDATE ON jobs FOR EACH ROW
      WHEN (NEW.organization_id = '${org.id}' AND NEW.progress > OLD.progress) EXECUTE FUNCTION refuse_job_progress();`);
  t.teardown(() => cluster.app.db.query(`DROP TRIGGER refuse_job_progress ON jobs; DROP FUNCTION refuse_job_progress();`));
  const started = Date.now();
  const jobId = await createJob(key, 'Refused progress');
  const job = await cluster.settledJob(key, jobId, { timeoutMs: 2 * 60_000 });
  t.is(job.status, 'FAILED');
  t.regex(job.message as string, /could not store the agent's report/);
  const task = await cluster.app.db.one<{ attempts: number; state: string }>(
    `SELECT attempts, state FROM tasks WHERE subject_id = $1 AND parent_id IS NULL`,
    [jobId],
  );
  t.deepEqual(task, { attempts: 1, state: 'failed' }, 'on its first attempt, not after every lease ran out');
  t.log(`failed after ${Date.now() - started} ms`);
});
