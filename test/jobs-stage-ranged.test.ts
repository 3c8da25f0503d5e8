// Every progress report of a ranged analysis names its stage, its children's included (issue 36
// item 12): a job polled while its ranges transcribe says "transcribing" at every poll, in the API
// and on its task (what `admin task show` prints), never nothing. Real Postgres, a real agent,
// ffmpeg and pocketsphinx on a flite-spoken talk of about 20 s split into ranges of about 8 s.
import test from 'ava';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { serveFiles, type MediaServer } from './helpers/media.js';
import { havePocketsphinx, needing } from './helpers/requirements.js';
import { makeTalkVideo, TALK } from './helpers/talk-video.js';
import { fliteAvailable } from './transcribe-synth.js';
import { showTask } from '../coordinator/src/tasks/operator.js';
import { ANALYZE_STAGES, isAnalyzeStage, type AnalyzeStage } from '@shorts/common/tasks/analyze-video';

let cluster: TestCluster;
let media: MediaServer;

const needs = needing({ tools: { flite: fliteAvailable(), pocketsphinx: havePocketsphinx } });

test.before(async () => {
  if (!fliteAvailable() || !havePocketsphinx) return;
  cluster = await startCluster('jobs_stage_ranged', { analysisRangeMinSec: 8, analysisRangeSec: 8 });
  const talk = await makeTalkVideo(cluster.dataDir, { phrases: TALK.slice(0, 5), width: 320, height: 180 });
  media = await serveFiles({ 'talk.mp4': talk.videoPath });
  await cluster.startAgent({ TRANSCRIBE_MAX_CHUNK_SEC: '6' });
});

test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

/** The contract's words for each job progress value at which a stage starts (section 2.3). */
const WORDS_AT: Array<[number, string]> = [
  [5, 'initiating services'],
  [15, 'downloading video'],
  [30, 'transcribing'],
  [60, 'generating shorts'],
  [80, 'active speaker detection'],
];

needs.serial('a ranged job names its stage at every poll while it processes, on the API and on its task, never going back', async (t) => {
  t.timeout(10 * 60_000);
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('talk.mp4') } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const jobId = created.body.id as string;

  const polls: Array<{ stage?: string; progress: number; taskStage: string | null; taskState: string; children: string }> = [];
  const job = await waitFor(
    async () => {
      // The task first: the job's progress read after it is never behind it.
      const { task, children } = await showTask(cluster.app.db, jobId);
      const r = await cluster.api('GET', `/api/jobs/${jobId}`, { key });
      if (r.body.status !== 'PROCESSING') return r.body;
      polls.push({
        stage: r.body.stage,
        progress: r.body.progress,
        taskStage: task.stage,
        taskState: task.state,
        children: children.map((c) => `${c.state}:${c.stage ?? '-'}`).join(' '),
      });
      return undefined;
    },
    8 * 60_000,
    'the job settled',
    50,
  );
  t.is(job.status, 'COMPLETED', job.message);
  const shown = polls.map((p) => JSON.stringify(p)).join('\n');
  t.true(
    polls.some((p) => p.taskState === 'waiting' && p.children.includes('leased:transcribing')),
    `some polls while the ranges transcribe:\n${shown}`,
  );
  for (const [i, p] of polls.entries()) {
    const words = WORDS_AT.filter(([at]) => p.progress >= at).at(-1)![1];
    t.is(p.stage, words, `poll ${i}: the API names the stage of its progress\n${shown}`);
    // A task not yet leased has had no report: its state says where it is.
    if (p.taskState === 'queued' && p.taskStage === null) continue;
    t.true(p.taskStage !== null && isAnalyzeStage(p.taskStage), `poll ${i}: the job's task names its stage\n${shown}`);
    // The task's stage is never ahead of the job's, nor behind an earlier poll's.
    const taskAt = ANALYZE_STAGES[p.taskStage as AnalyzeStage].jobProgress;
    t.true(taskAt <= p.progress, `poll ${i}: task stage ${p.taskStage} at job progress ${p.progress}\n${shown}`);
    const before = polls[i - 1]?.taskStage;
    if (before && isAnalyzeStage(before))
      t.true(taskAt >= ANALYZE_STAGES[before].jobProgress, `poll ${i}: the task's stage went back\n${shown}`);
  }
  // While the ranges ran the job moved, and said it was transcribing.
  t.true(
    polls.some((p) => p.taskState === 'waiting' && p.taskStage === 'transcribing' && p.progress > 30 && p.progress < 60),
    shown,
  );
});
