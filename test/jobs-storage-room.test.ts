// No analysis for free (issue 36 item 4): a job's source must fit the organization's storage when
// the agent reports its size (the reservation), not only after the work; and a job whose finished
// analysis is refused for the organization's own limit (its storage filled while it ran) is charged
// for that work. Real Postgres, a real agent, ffmpeg and pocketsphinx on a flite-spoken talk.
import test from 'ava';
import { stat } from 'node:fs/promises';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';
import { makeTalkVideo, TALK } from './helpers/talk-video.js';
import { fliteAvailable } from './transcribe-synth.js';
import { PLAN_LIMITS } from '../coordinator/src/tenancy/plans.js';

let cluster: TestCluster;
let media: MediaServer;
let videoBytes: number;
const FREE_LIMIT = PLAN_LIMITS.free.storageBytes;

const needs = needing({ tools: { flite: fliteAvailable(), pocketsphinx: havePocketsphinx } });

test.before(async () => {
  if (!fliteAvailable() || !havePocketsphinx) return;
  cluster = await startCluster('jobs_storage_room');
  const talk = await makeTalkVideo(cluster.dataDir, { phrases: TALK.slice(0, 4), width: 320, height: 180 });
  videoBytes = (await stat(talk.videoPath)).size;
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  await cluster.startAgent();
});

test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

async function submit(key: string) {
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('talk.mp4') } });
  if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(created.body)}`);
  return created.body.id as string;
}

const setStorageUsed = (orgId: string, bytes: number) =>
  cluster.app.db.query(`UPDATE organizations SET storage_used_bytes = $2 WHERE id = $1`, [orgId, bytes]);

const ledgerOf = async (jobId: string) =>
  (await cluster.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [jobId])).map(
    (l) => l.kind,
  );

const balanceOf = (orgId: string) =>
  cluster.app.db.one<{ credits: number; reserved: number }>(
    `SELECT credits::float8 AS credits, reserved_credits::float8 AS reserved FROM organizations WHERE id = $1`,
    [orgId],
  );

needs.serial('a source that does not fit the storage left is refused at reservation, before any transcription', async (t) => {
  t.timeout(5 * 60_000);
  const { org, key } = await cluster.org({ plan: 'free', credits: 10 });
  // A few bytes under the limit: creation accepts the job (storage is not full yet).
  await setStorageUsed(org.id, FREE_LIMIT - 100);
  const jobId = await submit(key);
  const seen: number[] = [];
  const job = await cluster.settledJob(key, jobId, { seen, timeoutMs: 4 * 60_000 });
  t.is(job.status, 'FAILED');
  t.regex(
    job.message as string,
    /^Storage is full: 100 MB of 100 MB used\. This video needs [\d.]+ MB\. Delete files to start new jobs\.$/,
  );
  t.true(Math.max(...seen) < 30, `refused before transcription: progress ${seen.join(',')}`);
  const task = await cluster.app.db.one<{ stage: string }>(`SELECT stage FROM tasks WHERE subject_id = $1`, [jobId]);
  t.is(task!.stage, 'downloading', 'the agent stopped at the download');
  t.deepEqual(await ledgerOf(jobId), ['reserve', 'release']);
  t.deepEqual(await balanceOf(org.id), { credits: 10, reserved: 0 });

  // The same source with room for it goes on.
  await setStorageUsed(org.id, FREE_LIMIT - videoBytes - 1_000_000);
  const fits = await cluster.settledJob(key, await submit(key), { timeoutMs: 4 * 60_000 });
  t.is(fits.status, 'COMPLETED', fits.message);
});

needs.serial('a job whose analysis is refused for storage filled while it ran is charged for the work', async (t) => {
  t.timeout(5 * 60_000);
  const { org, key } = await cluster.org({ plan: 'free', credits: 10 });
  const jobId = await submit(key);
  // Reserved and transcribing: the tenant now fills its storage (other uploads, say).
  await waitFor(
    async () =>
      (await cluster.app.db.one<{ stage: string | null }>(`SELECT stage FROM tasks WHERE subject_id = $1 AND parent_id IS NULL`, [jobId]))
        ?.stage === 'transcribing',
    4 * 60_000,
    'the job transcribing',
  );
  await setStorageUsed(org.id, FREE_LIMIT - 100);
  const job = await cluster.settledJob(key, jobId, { timeoutMs: 4 * 60_000 });
  t.is(job.status, 'FAILED');
  t.regex(job.message as string, /^Not enough storage/);
  t.deepEqual(await ledgerOf(jobId), ['reserve', 'charge']);
  const row = await cluster.app.db.one<{ cost: number; usage: string }>(
    `SELECT cost::float8 AS cost, credit_usage_status AS usage FROM jobs WHERE id = $1`,
    [jobId],
  );
  t.deepEqual(row, { cost: 0.3, usage: 'ACTIVE' });
  t.deepEqual(await balanceOf(org.id), { credits: 9.7, reserved: 0 });
});
