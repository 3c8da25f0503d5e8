// A long source analysed in time ranges (issue 22 item 2), against the same source analysed whole:
// real Postgres, real agent processes, ffmpeg, pocketsphinx and the face detector on a flite-spoken
// talk of about 45 s. Two coordinators run side by side: one never splits, one splits anything past
// 15 s into ranges of about 15 s (whole speech spans of the transcriber's plan, read from 2.5 s before). Pocketsphinx runs at about 0.4 x real time on a loaded
// 2-core machine, so the end-to-end case makes one job of each and kills an agent inside it.
import test from 'ava';
import { Transform } from 'node:stream';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Word } from '../common/src/text/transcript.js';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { FFMPEG, serveFiles, type MediaServer } from './helpers/media.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';
import { TALK } from './helpers/talk-video.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { fliteAvailable, synthesiseTalk, type Synthesised } from './transcribe-synth.js';

const run = promisify(execFile);
const RANGED = { analysisRangeMinSec: 15, analysisRangeSec: 15, analysisRangeOverlapSec: 5 };
/** Both farms' agents: transcription chunks of at most 12 s, so that the talk has several to group. */
const AGENT_ENV = { TRANSCRIBE_MAX_CHUNK_SEC: '12' };

// ---- Whole file and ranges, end to end ----

const MORE = [
  { text: 'Now let us talk about the power of small habits.', pauseAfter: 0.8 },
  { text: 'One page of writing every day becomes a book in a year.', pauseAfter: 1.0 },
  { text: 'The secret is to start so small that you cannot fail.', pauseAfter: 0.9 },
];

let whole: TestCluster;
let ranged: TestCluster;
let media: MediaServer;
let talk: Synthesised & { videoPath: string; sizeBytes: number };
/** Every read of the ranged coordinator's object store: key, when, bytes actually streamed. */
const reads: Array<{ key: string; at: number; range?: { start: number; end?: number }; bytes: number }> = [];

const needs = needing({ tools: { flite: fliteAvailable(), pocketsphinx: havePocketsphinx } });

test.before(async () => {
  if (!fliteAvailable() || !havePocketsphinx) return;
  [whole, ranged] = await Promise.all([startCluster('ranges_whole', { analysisRangeMinSec: 0 }), startCluster('ranges_split', RANGED)]);
  const spoken = await synthesiseTalk(whole.dataDir, [...TALK, ...MORE]);
  const videoPath = path.join(whole.dataDir, 'long-talk.mp4');
  // Keyframes every second, as a camera's recording has them, so a range's seek lands near its start.
  await run(FFMPEG, [
    '-y', '-hide_banner', '-loglevel', 'error',
    '-f', 'lavfi', '-i', `testsrc2=size=640x360:rate=25:duration=${spoken.durationSec.toFixed(3)}`, '-i', spoken.wavPath,
    '-c:v', 'libx264', '-preset', 'ultrafast', '-g', '25', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '96k', '-shortest', videoPath,
  ]);
  const { stat } = await import('node:fs/promises');
  talk = { ...spoken, videoPath, sizeBytes: (await stat(videoPath)).size };
  media = await serveFiles({ 'talk.mp4': videoPath });
  const store = ranged.app.store;
  const get = store.get.bind(store);
  store.get = async (key, range) => {
    const got = await get(key, range);
    const read = { key, at: Date.now(), range, bytes: 0 };
    reads.push(read);
    const counted = new Transform({ transform(chunk: Buffer, _enc, done) { read.bytes += chunk.length; done(null, chunk); } });
    got.stream.on('error', (err) => counted.destroy(err));
    return { ...got, stream: got.stream.pipe(counted) };
  };
  await Promise.all([whole.startAgent(AGENT_ENV), ranged.startAgent(AGENT_ENV)]);
});

test.after.always(async () => {
  await media?.close();
  await Promise.all([whole?.close(), ranged?.close()]);
});

/** The job, its words and shorts as a studio user reads them. */
async function analysed(cluster: TestCluster, key: string, orgId: string, jobId: string, seen?: number[]) {
  const job = await cluster.settledJob(key, jobId, { seen, timeoutMs: 15 * 60_000 });
  if (job.status !== 'COMPLETED') return { job, words: [] as Word[], shorts: [] as any[] };
  const user = await createUser(cluster.app.db, { email: `ranges-${jobId}@example.com`, organizationId: orgId });
  const token = await cluster.app.signer.issue(user.id);
  const detailed = await cluster.api('GET', `/api/jobs/${jobId}?organizationId=${orgId}`, { headers: { authorization: `Bearer ${token}` } });
  return { job, words: detailed.body.data.transcription.words as Word[], shorts: detailed.body.data.shorts as any[] };
}

async function submit(cluster: TestCluster, credits = 10) {
  const { org, key } = await cluster.org({ plan: 'pro', credits });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', name: 'Habits talk', fileUrl: media.url('talk.mp4') } });
  if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(created.body)}`);
  return { org, key, jobId: created.body.id as string };
}

/** The same words in the same order, each within 50 ms of the whole-file analysis's timing. */
function assertSameWords(t: import('ava').ExecutionContext, got: Word[], expected: Word[]) {
  t.deepEqual(got.map((x) => x.text), expected.map((x) => x.text), 'the same words');
  const worst = Math.max(0, ...got.map((x, i) => Math.max(Math.abs(x.start - expected[i]!.start), Math.abs(x.end - expected[i]!.end))));
  t.log(`${got.length} words, worst timing difference ${(worst * 1000).toFixed(0)} ms`);
  t.true(worst <= 0.05, `worst timing difference ${worst.toFixed(3)} s`);
}

/** The same shorts: bounds and words as picked, and the same camera path within the timing slack. */
function assertSameShorts(t: import('ava').ExecutionContext, got: any[], expected: any[]) {
  const bounds = (s: any) => ({ title: s.title, text: s.text, startId: s.startId, endId: s.endId });
  t.deepEqual(got.map(bounds), expected.map(bounds), 'the same shorts');
  got.forEach((s, i) => {
    t.true(Math.abs(s.startTime - expected[i].startTime) <= 0.05 && Math.abs(s.endTime - expected[i].endTime) <= 0.05, `short ${i} bounds`);
    const e = expected[i].reframe;
    t.is(s.reframe.keyframes.length, e.keyframes.length, `short ${i} keyframes`);
    s.reframe.keyframes.forEach((k: any, j: number) => {
      t.true(Math.abs(k.x - e.keyframes[j].x) <= 2 && Math.abs(k.time - e.keyframes[j].time) <= 0.05, `short ${i} keyframe ${j}`);
    });
  });
}

async function tasksOf(cluster: TestCluster, jobId: string) {
  return cluster.app.db.query<{ id: string; type: string; state: string; parentId: string | null; childIndex: number | null; startedAt: Date; finishedAt: Date | null; attempts: number; payload: any; leasedBy: string | null }>(
    `SELECT id, type, state, parent_id AS "parentId", child_index AS "childIndex", started_at AS "startedAt", finished_at AS "finishedAt", attempts, payload, leased_by AS "leasedBy"
     FROM tasks WHERE subject_id = $1 ORDER BY parent_id NULLS FIRST, child_index`, [jobId],
  );
}

needs.serial('a ranged analysis gives the whole-file words, shorts and reframing, with an agent killed while it holds a range; each range reads only its part of the stored source', async (t) => {
  t.timeout(20 * 60_000); // pocketsphinx on a machine others share
  const [w, r] = await Promise.all([submit(whole), submit(ranged)]);
  const seen: number[] = [];
  const wholeDone = analysed(whole, w.key, w.org.id, w.jobId);
  const rangedDone = analysed(ranged, r.key, r.org.id, r.jobId, seen);

  // The agent holding the first range is killed while it transcribes; the range goes back to the
  // queue when its lease runs out and another agent takes it.
  const doomed = ranged.agents[0]!;
  const held = await waitFor(async () => (await tasksOf(ranged, r.jobId)).find((x) => x.type === 'analyze-range' && x.state === 'leased'), 300_000, 'a range leased');
  await doomed.waitForLog(new RegExp(`"taskId":"${held.id}".*"stage":"transcribing"`), 300_000);
  await doomed.kill('SIGKILL');
  await ranged.startAgent(AGENT_ENV);
  await waitFor(async () => (await ranged.app.queue.tick()) > 0, 60_000, 'lease expiry');

  const [a, b] = await Promise.all([wholeDone, rangedDone]);
  t.is(a.job.status, 'COMPLETED', a.job.message);
  t.is(b.job.status, 'COMPLETED', b.job.message);
  t.true(a.words.length >= 60, `${a.words.length} words recognised`);
  assertSameWords(t, b.words, a.words);
  assertSameShorts(t, b.shorts, a.shorts);
  t.true(b.shorts.length >= 1);

  // One parent, its ranges as planned, the killed one run twice; progress only went forward.
  const tasks = await tasksOf(ranged, r.jobId);
  const [parent, ...children] = tasks;
  t.like(parent, { type: 'analyze-video', state: 'completed', parentId: null });
  t.deepEqual(children.map((c) => [c.type, c.state]), children.map(() => ['analyze-range', 'completed']));
  t.true(children.length >= 3, `${children.length} ranges`);
  // Each range decodes whole speech spans of about 15 s at most, after the previous range's last.
  children.forEach((c, i) => {
    const spans = c.payload.spans as Array<{ start: number; end: number }>;
    t.true(spans.length === 1 || spans.at(-1)!.end - spans[0]!.start <= RANGED.analysisRangeSec, `range ${i} spans`);
    if (i > 0) t.true(spans[0]!.start >= children[i - 1]!.payload.spans.at(-1).end, `range ${i} follows range ${i - 1}`);
  });
  t.is(children.find((c) => c.id === held.id)!.attempts, 2, 'the killed range was leased again');
  t.deepEqual(seen, [...seen].sort((x, y) => x - y), `progress ${seen.join(',')}`);
  t.true(seen.some((p) => p > 30 && p < 60), `progress moved while the ranges ran: ${seen.join(',')}`);

  // Charged once, the same price as the whole file.
  t.is(b.job.cost, a.job.cost);
  const ledger = await ranged.app.db.query(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [r.jobId]);
  t.deepEqual(ledger.map((l: any) => l.kind), ['reserve', 'charge']);
  const org = await ranged.app.db.one<{ credits: number; reserved: number }>('SELECT credits, reserved_credits AS reserved FROM organizations WHERE id = $1', [r.org.id]);
  t.deepEqual(org, { credits: 10 - b.job.cost, reserved: 0 });

  // The source came from its origin once; each range then read only its own part of the stored
  // copy (the file's index and the bytes around its time span). One agent ran at a time, so a
  // range's reads are those made between its last lease and its completion.
  t.is(media.requests.filter((u) => u.includes('talk.mp4')).length, 2, 'the origin was fetched once per coordinator');
  const sourceKey = parent!.payload.stitched.source.objectKey as string;
  for (const child of children) {
    const from = new Date(child.startedAt).getTime();
    const to = new Date(child.finishedAt!).getTime();
    const bytes = reads.filter((x) => x.key === sourceKey && x.at >= from && x.at <= to).reduce((sum, x) => sum + x.bytes, 0);
    const share = (child.payload.end - child.payload.start) / talk.durationSec;
    t.log(`range ${child.payload.start}-${child.payload.end} s read ${bytes} of ${talk.sizeBytes} bytes (its time share ${(share * 100).toFixed(0)} %)`);
    t.true(bytes > 0, 'the range read the stored source');
    t.true(bytes < talk.sizeBytes * (share + 0.15), `range ${child.childIndex} read ${bytes} bytes`);
  }
});

needs.serial('cancelling a ranged analysis while its ranges run leaves no task running and charges nothing', async (t) => {
  t.timeout(10 * 60_000);
  const r = await submit(ranged, 5);
  const parent = await waitFor(async () => {
    const tasks = await tasksOf(ranged, r.jobId);
    return tasks[0]?.state === 'waiting' && tasks.some((x) => x.state === 'leased') ? tasks[0] : undefined;
  }, 300_000, 'ranges running');
  t.is(await ranged.app.queue.cancel(parent.id, 'Cancelled by an operator'), 'cancelled');
  // A leased range stops on its agent's next report; nothing is left queued, leased or waiting.
  const settled = await waitFor(async () => {
    const tasks = await tasksOf(ranged, r.jobId);
    return tasks.every((x) => ['completed', 'failed', 'cancelled'].includes(x.state)) ? tasks : undefined;
  }, 120_000, 'every task of the job ended');
  t.is(settled[0]!.state, 'cancelled');
  t.true(settled.length > 1, 'the ranges had been created');
  const job = await ranged.settledJob(r.key, r.jobId);
  t.is(job.status, 'FAILED');
  const ledger = await ranged.app.db.query(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [r.jobId]);
  t.deepEqual(ledger.map((l: any) => l.kind), ['reserve', 'release']);
});
