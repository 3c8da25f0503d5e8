// A long source analysed in time ranges (issue 22 item 2), against the same source analysed whole:
// real Postgres, real agent processes, ffmpeg, pocketsphinx and the face detector on a flite-spoken
// talk of about 45 s. Two coordinators run side by side: one never splits, one splits anything past
// 15 s into ranges of about 15 s (runs of whole speech spans of the transcriber's plan). Pocketsphinx runs at about 0.4 x real time on a loaded
// 2-core machine, so the end-to-end case makes one job of each and kills an agent inside it.
import test, { type ExecutionContext } from 'ava';
import { stat } from 'node:fs/promises';
import { Transform } from 'node:stream';
import type { Word } from '@shorts/common/text/transcript';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';
import { makeTalkVideo, TALK } from './helpers/talk-video.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { fliteAvailable, type Synthesised } from './transcribe-synth.js';
import type { Parsed } from './helpers/parsed.js';

const RANGED = { analysisRangeMinSec: 15, analysisRangeSec: 15 };
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
  const made = await makeTalkVideo(whole.dataDir, { phrases: [...TALK, ...MORE] });
  talk = { ...made, sizeBytes: (await stat(made.videoPath)).size };
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  const store = ranged.app.store;
  const get = store.get.bind(store);
  store.get = async (key, range) => {
    const got = await get(key, range);
    const read = { key, at: Date.now(), range, bytes: 0 };
    reads.push(read);
    const counted = new Transform({
      transform(chunk: Buffer, _enc, done) {
        read.bytes += chunk.length;
        done(null, chunk);
      },
    });
    got.stream.on('error', (err) => counted.destroy(err));
    return { ...got, stream: got.stream.pipe(counted) };
  };
  await Promise.all([whole.startAgent(AGENT_ENV), ranged.startAgent(AGENT_ENV)]);
});

test.after.always(async () => {
  await media?.close();
  await Promise.all([whole?.close(), ranged?.close()]);
});

/** A short of a job as the API shows it, in the fields compared here. */
interface PickedShort {
  title: string;
  text: string;
  startId: number | null;
  endId: number | null;
  startTime: number;
  endTime: number;
  reframe: { keyframes: Array<{ x: number; time: number }> };
}

/** The job, its words and shorts as a studio user reads them. */
async function analysed(cluster: TestCluster, key: string, orgId: string, jobId: string, seen?: number[]) {
  const job = await cluster.settledJob(key, jobId, { seen, timeoutMs: 15 * 60_000 });
  if (job.status !== 'COMPLETED') return { job, words: [] as Word[], shorts: [] as PickedShort[] };
  const user = await createUser(cluster.app.db, { email: `ranges-${jobId}@example.com`, organizationId: orgId });
  const token = await cluster.app.signer.issue(user.id);
  const detailed = await cluster.api('GET', `/api/jobs/${jobId}?organizationId=${orgId}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { job, words: detailed.body.data.transcription.words as Word[], shorts: detailed.body.data.shorts as PickedShort[] };
}

async function submit(cluster: TestCluster, credits = 10) {
  const { org, key } = await cluster.org({ plan: 'pro', credits });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', name: 'Habits talk', fileUrl: media.url('talk.mp4') },
  });
  if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(created.body)}`);
  return { org, key, jobId: created.body.id as string };
}

/** The same words in the same order, each within 50 ms of the whole-file analysis's timing. */
function assertSameWords(t: ExecutionContext, got: Word[], expected: Word[]) {
  t.deepEqual(
    got.map((x) => x.text),
    expected.map((x) => x.text),
    'the same words',
  );
  const worst = Math.max(0, ...got.map((x, i) => Math.max(Math.abs(x.start - expected[i]!.start), Math.abs(x.end - expected[i]!.end))));
  t.log(`${got.length} words, worst timing difference ${(worst * 1000).toFixed(0)} ms`);
  t.true(worst <= 0.05, `worst timing difference ${worst.toFixed(3)} s`);
}

/** The same shorts: bounds and words as picked, and the same camera path within the timing slack. */
function assertSameShorts(t: ExecutionContext, got: PickedShort[], expected: PickedShort[]) {
  const bounds = (s: PickedShort) => ({ title: s.title, text: s.text, startId: s.startId, endId: s.endId });
  t.deepEqual(got.map(bounds), expected.map(bounds), 'the same shorts');
  got.forEach((s, i) => {
    t.true(
      Math.abs(s.startTime - expected[i]!.startTime) <= 0.05 && Math.abs(s.endTime - expected[i]!.endTime) <= 0.05,
      `short ${i} bounds`,
    );
    const e = expected[i]!.reframe;
    t.is(s.reframe.keyframes.length, e.keyframes.length, `short ${i} keyframes`);
    s.reframe.keyframes.forEach((k, j) => {
      t.true(Math.abs(k.x - e.keyframes[j]!.x) <= 2 && Math.abs(k.time - e.keyframes[j]!.time) <= 0.05, `short ${i} keyframe ${j}`);
    });
  });
}

async function tasksOf(cluster: TestCluster, jobId: string) {
  return cluster.app.db.query<{
    id: string;
    type: string;
    state: string;
    parentId: string | null;
    childIndex: number | null;
    startedAt: Date;
    finishedAt: Date | null;
    attempts: number;
    payload: Parsed;
    result: Parsed;
    leasedBy: string | null;
  }>(
    `SELECT id, type, state, parent_id AS "parentId", child_index AS "childIndex", started_at AS "startedAt", finished_at AS "finishedAt", attempts, payload, result, leased_by AS "leasedBy"
     FROM tasks WHERE subject_id = $1 ORDER BY parent_id NULLS FIRST, child_index`,
    [jobId],
  );
}

needs.serial(
  'a ranged analysis gives the whole-file words, shorts and reframing, with an agent killed while it holds a range; each range reads only its own samples of the stored audio',
  async (t) => {
    t.timeout(20 * 60_000); // pocketsphinx on a machine others share
    const [w, r] = await Promise.all([submit(whole), submit(ranged)]);
    const seen: number[] = [];
    const wholeDone = analysed(whole, w.key, w.org.id, w.jobId);
    const rangedDone = analysed(ranged, r.key, r.org.id, r.jobId, seen);

    // The agent holding the first range is killed while it transcribes; the range goes back to the
    // queue when its lease runs out and another agent takes it.
    const doomed = ranged.agents[0]!;
    const held = await waitFor(
      async () => (await tasksOf(ranged, r.jobId)).find((x) => x.type === 'analyze-range' && x.state === 'leased'),
      300_000,
      'a range leased',
    );
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
    t.deepEqual(
      children.map((c) => [c.type, c.state]),
      children.map(() => ['analyze-range', 'completed']),
    );
    t.true(children.length >= 3, `${children.length} ranges`);
    // Each range decodes whole speech spans, about 15 s of them at most, after the previous range's.
    children.forEach((c, i) => {
      const spans = c.payload.spans as Array<{ startSample: number; endSample: number }>;
      t.true(spans.length === 1 || spans.at(-1)!.endSample - spans[0]!.startSample <= RANGED.analysisRangeSec * 16_000, `range ${i} spans`);
      if (i > 0) t.true(spans[0]!.startSample >= children[i - 1]!.payload.spans.at(-1).endSample, `range ${i} follows range ${i - 1}`);
    });
    t.is(children.find((c) => c.id === held.id)!.attempts, 2, 'the killed range was leased again');
    t.deepEqual(
      seen,
      [...seen].sort((x, y) => x - y),
      `progress ${seen.join(',')}`,
    );
    t.true(
      seen.some((p) => p > 30 && p < 60),
      `progress moved while the ranges ran: ${seen.join(',')}`,
    );

    // Charged once, the same price as the whole file.
    t.is(b.job.cost, a.job.cost);
    const ledger = await ranged.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [r.jobId]);
    t.deepEqual(
      ledger.map((l) => l.kind),
      ['reserve', 'charge'],
    );
    const org = await ranged.app.db.one<{ credits: number; reserved: number }>(
      'SELECT credits, reserved_credits AS reserved FROM organizations WHERE id = $1',
      [r.org.id],
    );
    t.deepEqual(org, { credits: 10 - b.job.cost, reserved: 0 });

    // The source came from its origin once and was read whole once more, by the final part (the
    // shorts' frames). Each range read exactly its own samples of the stored analysis audio, one
    // bounded byte range; only the final part read that audio whole, once (it picks and reframes the
    // shorts with it, as a whole-file analysis does, instead of decoding the source's audio again).
    t.is(media.requests.filter((u) => u.includes('talk.mp4')).length, 2, 'the origin was fetched once per coordinator');
    const sourceKey = parent!.payload.stitched.source.objectKey as string;
    t.deepEqual(
      reads.filter((x) => x.key === sourceKey).map((x) => x.range),
      [undefined],
      'the source read once, by the final part',
    );
    const audioKey = children[0]!.payload.audioKey as string;
    const audioBytes = children[0]!.payload.dataOffset + Math.round(talk.durationSec * 16_000) * 2;
    const audioReads = reads.filter((x) => x.key === audioKey);
    const expected = children.map((c) => {
      const from = c.payload.dataOffset + c.payload.spans[0].startSample * 2;
      const to = c.payload.dataOffset + c.payload.spans.at(-1).endSample * 2 - 1;
      t.is(c.result.readBytes, to - from + 1, `range ${c.childIndex} read its samples`);
      t.log(`range ${c.childIndex}: ${to - from + 1} of the audio's ${audioBytes} bytes`);
      return { start: from, end: to };
    });
    t.is(audioReads.filter((x) => x.range === undefined).length, 1, 'the analysis audio read whole once, by the final part');
    for (const read of audioReads.filter((x) => x.range !== undefined)) {
      t.true(
        expected.some((e) => e.start === read.range?.start && e.end === read.range?.end),
        `a read of ${JSON.stringify(read.range)}`,
      );
      t.is(read.bytes, read.range!.end! - read.range!.start + 1);
    }
    // Every range read at least once (the killed one twice), and together less than the whole audio.
    t.true(expected.every((e) => audioReads.some((x) => x.range?.start === e.start)));
    t.true(expected.reduce((sum, e) => sum + e.end - e.start + 1, 0) < audioBytes);
    // The analysis audio was for the ranges only: it goes once the job is done.
    await waitFor(async () => (await ranged.app.store.stat(audioKey)) === null, 30_000, 'the analysis audio to be deleted');
    t.truthy(await ranged.app.store.stat(sourceKey), 'the source stays');
  },
);

needs.serial('cancelling a ranged analysis while its ranges run leaves no task running and charges nothing', async (t) => {
  t.timeout(10 * 60_000);
  const r = await submit(ranged, 5);
  const parent = await waitFor(
    async () => {
      const tasks = await tasksOf(ranged, r.jobId);
      return tasks[0]?.state === 'waiting' && tasks.some((x) => x.state === 'leased') ? tasks[0] : undefined;
    },
    300_000,
    'ranges running',
  );
  t.is(await ranged.app.queue.cancel(parent.id, 'Cancelled by an operator'), 'cancelled');
  // A leased range stops on its agent's next report; nothing is left queued, leased or waiting.
  const settled = await waitFor(
    async () => {
      const tasks = await tasksOf(ranged, r.jobId);
      return tasks.every((x) => ['completed', 'failed', 'cancelled'].includes(x.state)) ? tasks : undefined;
    },
    120_000,
    'every task of the job ended',
  );
  t.is(settled[0]!.state, 'cancelled');
  t.true(settled.length > 1, 'the ranges had been created');
  const job = await ranged.settledJob(r.key, r.jobId);
  t.is(job.status, 'FAILED');
  const ledger = await ranged.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [r.jobId]);
  t.deepEqual(
    ledger.map((l) => l.kind),
    ['reserve', 'release'],
  );
});

// ---- The shorts reframed side by side ----

/** Three shorts the client chose, so that both farms reframe exactly the same stretches. */
const CHOSEN = [
  { title: 'Opening', start: 1, end: 11 },
  { title: 'Middle', start: 12, end: 22 },
  { title: 'Habits', start: 24, end: 34 },
];

async function submitChosen(cluster: TestCluster, credits = 10) {
  const { org, key } = await cluster.org({ plan: 'pro', credits });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', name: 'Habits talk', fileUrl: media.url('talk.mp4'), options: { predefinedShorts: CHOSEN } },
  });
  if (created.status !== 201) throw new Error(`job refused: ${JSON.stringify(created.body)}`);
  return { org, key, jobId: created.body.id as string };
}

/** The chosen shorts as the whole-file farm's one agent reframed them itself (set by the case that makes them). */
let chosenOnOneAgent: PickedShort[] | undefined;

/** Until two agents are connected to the ranged farm: then its final part hands each short to a child. */
async function twoRangedAgents(): Promise<void> {
  const live = ranged.agents.filter((a) => a.proc.exitCode === null && a.proc.signalCode === null);
  for (let i = live.length; i < 2; i++) await ranged.startAgent(AGENT_ENV);
}

needs.serial(
  "on a farm, a ranged analysis's shorts are reframed by a child each, with an agent killed while it holds one: the same paths as a whole-file analysis, charged once, each child reading only its short's audio",
  async (t) => {
    t.timeout(20 * 60_000);
    await twoRangedAgents();
    const [w, r] = await Promise.all([submitChosen(whole), submitChosen(ranged)]);
    const seen: number[] = [];
    const wholeDone = analysed(whole, w.key, w.org.id, w.jobId);
    const rangedDone = analysed(ranged, r.key, r.org.id, r.jobId, seen);

    // The agent holding a short's reframing is killed while it detects faces; the short goes back
    // to the queue when its lease runs out and the other agent takes it.
    const held = await waitFor(
      async () => (await tasksOf(ranged, r.jobId)).find((x) => x.type === 'reframe-short' && x.state === 'leased' && x.leasedBy),
      600_000,
      'a short leased',
    );
    const holder = (await ranged.app.db.one<{ name: string }>(`SELECT name FROM agents WHERE id = $1`, [held.leasedBy]))!.name;
    const doomed = ranged.agents.find((a) => a.name === holder)!;
    await doomed.waitForLog(new RegExp(`"taskId":"${held.id}".*"stage":"detecting_speakers"`), 60_000);
    await doomed.kill('SIGKILL');
    await waitFor(async () => (await ranged.app.queue.tick()) > 0, 60_000, 'lease expiry');

    const [a, b] = await Promise.all([wholeDone, rangedDone]);
    t.is(a.job.status, 'COMPLETED', a.job.message);
    t.is(b.job.status, 'COMPLETED', b.job.message);
    if (a.job.status === 'COMPLETED') chosenOnOneAgent = a.shorts;
    t.is(b.shorts.length, CHOSEN.length);
    // The same stretches, framed from the same frames and samples: the same camera paths.
    t.deepEqual(
      b.shorts.map((s) => [s.title, s.startTime, s.endTime, s.text]),
      a.shorts.map((s) => [s.title, s.startTime, s.endTime, s.text]),
    );
    t.deepEqual(
      b.shorts.map((s) => s.reframe),
      a.shorts.map((s) => s.reframe),
      'the same camera paths',
    );
    t.true(
      a.shorts.every((s) => s.reframe.keyframes.length > 0),
      'the talk has a face to follow',
    );

    // The parent, its ranges, then one reframe-short child per short, the killed one run twice.
    const tasks = await tasksOf(ranged, r.jobId);
    const [parent, ...children] = tasks;
    t.like(parent, { type: 'analyze-video', state: 'completed', parentId: null });
    const shortsChildren = children.filter((c) => c.type === 'reframe-short');
    t.deepEqual(
      shortsChildren.map((c) => [c.state, c.payload.index, c.payload.start, c.payload.end]),
      CHOSEN.map((s, i) => ['completed', i, s.start, s.end]),
    );
    t.true(children.filter((c) => c.type === 'analyze-range').length >= 2, 'the talk was transcribed in ranges');
    t.true(
      Math.min(...shortsChildren.map((c) => c.childIndex!)) >
        Math.max(...children.filter((c) => c.type === 'analyze-range').map((c) => c.childIndex!)),
      'the shorts are numbered after the ranges',
    );
    t.is(shortsChildren.find((c) => c.id === held.id)!.attempts, 2, 'the killed short was leased again');
    t.deepEqual(
      seen,
      [...seen].sort((x, y) => x - y),
      `progress ${seen.join(',')}`,
    );
    t.true(
      seen.some((p) => p >= 80 && p < 100),
      `progress moved while the shorts were reframed: ${seen.join(',')}`,
    );

    // Each short's crop is its child's, stored and listed with the job.
    const crops = await ranged.app.db.query<{ objectKey: string; description: string }>(
      `SELECT object_key AS "objectKey", description FROM files WHERE job_id = $1 AND 'short' = ANY(tags) ORDER BY name`,
      [r.jobId],
    );
    t.deepEqual(
      crops.map((f) => f.description),
      CHOSEN.map((s) => s.title),
    );
    for (const [i, crop] of crops.entries()) {
      t.true(crop.objectKey.includes(`/tasks/${shortsChildren[i]!.id}/`), `short ${i}'s crop is its child's`);
      t.truthy(await ranged.app.store.stat(crop.objectKey));
    }

    // Charged once, the same price as the whole file.
    t.is(b.job.cost, a.job.cost);
    const ledger = await ranged.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [r.jobId]);
    t.deepEqual(
      ledger.map((l) => l.kind),
      ['reserve', 'charge'],
    );

    // The source came whole from the store at most once: the agent that stored it kept it, the other
    // read it once for its first short; every later read is the one-byte size check of a kept copy.
    const sourceKey = parent!.payload.stitched.source.objectKey as string;
    const sourceReads = reads.filter((x) => x.key === sourceKey && x.at >= Math.min(...shortsChildren.map((c) => c.startedAt.getTime())));
    t.true(sourceReads.filter((x) => x.range === undefined).length <= 1, `${sourceReads.length} reads of the source`);
    t.true(sourceReads.every((x) => x.range === undefined || (x.range.start === 0 && x.range.end === 0)));

    // Each child read only its short's samples of the analysis audio: one bounded byte range.
    const audioKey = parent!.payload.stitched.audioKey as string;
    const { dataOffset } = shortsChildren[0]!.payload.audio as { dataOffset: number };
    for (const child of shortsChildren) {
      const from = dataOffset + Math.floor(child.payload.start * 16_000) * 2;
      const to = dataOffset + Math.ceil(child.payload.end * 16_000) * 2 - 1;
      t.true(
        reads.some((x) => x.key === audioKey && x.range?.start === from && x.range?.end === to && x.bytes === to - from + 1),
        `short ${child.payload.index} read its samples`,
      );
    }
  },
);

needs.serial(
  "on a farm, a short source's shorts are reframed by a child each too: the same paths as one agent reframing them itself, and the audio they read is deleted after",
  async (t) => {
    t.timeout(15 * 60_000);
    if (!chosenOnOneAgent) {
      const w = await submitChosen(whole);
      const one = await analysed(whole, w.key, w.org.id, w.jobId);
      t.is(one.job.status, 'COMPLETED', one.job.message);
      chosenOnOneAgent = one.shorts;
    }
    // The whole-file farm (it never splits) gets a second agent: two free slots when the analysis is leased.
    await whole.startAgent(AGENT_ENV);
    const w = await submitChosen(whole);
    const seen: number[] = [];
    const done = await analysed(whole, w.key, w.org.id, w.jobId, seen);
    t.is(done.job.status, 'COMPLETED', done.job.message);
    t.deepEqual(
      done.shorts.map((s) => [s.title, s.startTime, s.endTime, s.text, s.reframe]),
      chosenOnOneAgent.map((s) => [s.title, s.startTime, s.endTime, s.text, s.reframe]),
      'the same shorts and camera paths',
    );

    // The analysis, transcribed whole, then one reframe-short child per short; each crop is its child's.
    const [parent, ...children] = await tasksOf(whole, w.jobId);
    t.like(parent, { type: 'analyze-video', state: 'completed' });
    t.false('stitched' in (parent!.payload as object), 'not split into ranges');
    t.deepEqual(
      children.map((c) => [c.type, c.state, c.payload.index, c.payload.start, c.payload.end]),
      CHOSEN.map((s, i) => ['reframe-short', 'completed', i, s.start, s.end]),
    );
    const crops = await whole.app.db.query<{ objectKey: string; description: string }>(
      `SELECT object_key AS "objectKey", description FROM files WHERE job_id = $1 AND 'short' = ANY(tags) ORDER BY name`,
      [w.jobId],
    );
    t.deepEqual(
      crops.map((f) => f.description),
      CHOSEN.map((s) => s.title),
    );
    crops.forEach((crop, i) => t.true(crop.objectKey.includes(`/tasks/${children[i]!.id}/`), `short ${i}'s crop is its child's`));
    t.deepEqual(
      seen,
      [...seen].sort((x, y) => x - y),
      `progress ${seen.join(',')}`,
    );
    // The audio the children read was stored for them only.
    const audioKey = children[0]!.payload.audio.objectKey as string;
    t.true(audioKey.includes(`/tasks/${parent!.id}/`));
    await waitFor(async () => (await whole.app.store.stat(audioKey)) === null, 30_000, 'the analysis audio to be deleted');
    const ledger = await whole.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [w.jobId]);
    t.deepEqual(
      ledger.map((l) => l.kind),
      ['reserve', 'charge'],
    );
  },
);

needs.serial(
  'cancelling a ranged analysis while its shorts are reframed leaves no task running, no crop stored and charges nothing',
  async (t) => {
    t.timeout(15 * 60_000);
    await twoRangedAgents();
    const r = await submitChosen(ranged, 5);
    const parent = await waitFor(
      async () => {
        const tasks = await tasksOf(ranged, r.jobId);
        return tasks[0]?.state === 'waiting' && tasks.some((x) => x.type === 'reframe-short' && x.state === 'leased')
          ? tasks[0]
          : undefined;
      },
      600_000,
      'shorts being reframed',
    );
    t.is(await ranged.app.queue.cancel(parent.id, 'Cancelled by an operator'), 'cancelled');
    const settled = await waitFor(
      async () => {
        const tasks = await tasksOf(ranged, r.jobId);
        return tasks.every((x) => ['completed', 'failed', 'cancelled'].includes(x.state)) ? tasks : undefined;
      },
      120_000,
      'every task of the job ended',
    );
    t.is(settled[0]!.state, 'cancelled');
    const job = await ranged.settledJob(r.key, r.jobId);
    t.is(job.status, 'FAILED');
    const ledger = await ranged.app.db.query<{ kind: string }>(`SELECT kind FROM credit_ledger WHERE job_id = $1 ORDER BY id`, [r.jobId]);
    t.deepEqual(
      ledger.map((l) => l.kind),
      ['reserve', 'release'],
    );
    // Nothing of the job is kept: no file row, and no object under the analysis or the shorts'
    // children that had finished (one still running may upload after the cancel: the orphan sweep's).
    t.deepEqual(await ranged.app.db.query(`SELECT id FROM files WHERE job_id = $1`, [r.jobId]), []);
    const stored = async (taskId: string) => {
      const keys: string[] = [];
      for await (const obj of ranged.app.store.list(`orgs/${r.org.id}/tasks/${taskId}/`)) keys.push(obj.key);
      return keys;
    };
    for (const task of settled.filter((x) => x.type === 'analyze-video' || (x.type === 'reframe-short' && x.state === 'completed'))) {
      await waitFor(async () => (await stored(task.id)).length === 0, 30_000, `the objects of ${task.type} ${task.id} to be deleted`);
    }
    t.pass();
  },
);
