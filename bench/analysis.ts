// A whole VideoShorts job on a generated 10-minute talk: wall time per stage, real-time factor,
// and the overhead against the bare transcriber on the same audio in the same process; then the
// word error rate on the real recordings of ../shared/media when that folder is present.
//   npm run bench:analysis -- [minutes=10]
import { existsSync, readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { startCluster, waitFor } from '../test/helpers/cluster.js';
import { serveFiles, FFMPEG } from '../test/helpers/media.js';
import { makeTalkVideo, TALK } from '../test/helpers/talk-video.js';
import { createTranscriber, transcriberConfigFromEnv } from '../node-agent/src/transcribe/transcriber.js';
import { extractAudio } from '../node-agent/src/media/audio-extract.js';
import { wordErrorRate } from '@shorts/common/text/transcript';
import { repoRoot } from '@shorts/common/paths';

const run = promisify(execFile);
const minutes = Number(process.argv[2] ?? 10);
const SHARED_MEDIA = path.resolve(repoRoot(), '../shared/media');

const EXTRA = [
  'Let me tell you about the three mistakes every beginner makes.',
  'The first mistake is trying to learn everything at once.',
  'Why does that fail so often?',
  'Because attention is limited and memory needs repetition.',
  'The second mistake is skipping the basics for the exciting parts.',
  'Twenty percent of the effort gives eighty percent of the result.',
  'The third mistake is giving up after one bad week.',
  'Progress is never a straight line, and that is fine.',
];

const cluster = await startCluster('bench_analysis');
try {
  const phrases: typeof TALK = [];
  const pool = [...TALK, ...EXTRA.map((text) => ({ text, pauseAfter: 0.9 }))];
  // About 4 s per phrase with its pause.
  for (let i = 0; phrases.length < (minutes * 60) / 4; i++) phrases.push(pool[i % pool.length]!);
  const t0 = performance.now();
  const talk = await makeTalkVideo(cluster.dataDir, { phrases });
  console.error(`generated ${talk.durationSec.toFixed(1)} s talk in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const media = await serveFiles({ 'talk.mp4': talk.videoPath });
  const agent = await cluster.startAgent();
  const { key } = await cluster.org({ plan: 'business', credits: 100 });

  const jobStart = performance.now();
  const created = await cluster.api('POST', '/api/jobs', { key, body: { functionName: 'VideoShorts', fileUrl: media.url('talk.mp4') } });
  const job = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/jobs/${created.body.id}`, { key });
      return r.body.status === 'COMPLETED' || r.body.status === 'FAILED' ? r.body : undefined;
    },
    60 * 60_000,
    'job',
  );
  const jobSec = (performance.now() - jobStart) / 1000;
  if (job.status !== 'COMPLETED') throw new Error(`job failed: ${job.message}`);

  // Stage times from the agent's own log (each "task stage" line starts a stage).
  const stages = agent.logs
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return undefined;
      }
    })
    .filter((e) => e && (e.msg === 'task stage' || e.msg === 'task completed') && e.type === 'analyze-video');
  const perStage: Record<string, number> = {};
  for (let i = 0; i < stages.length - 1; i++)
    perStage[stages[i].stage] = (Date.parse(stages[i + 1].time) - Date.parse(stages[i].time)) / 1000;
  await media.close();

  // The bare transcriber on the same audio, in this process.
  const wav = path.join(cluster.dataDir, 'bench.wav');
  await extractAudio(FFMPEG, talk.videoPath, wav);
  const bareStart = performance.now();
  const transcript = await createTranscriber(transcriberConfigFromEnv(process.env, { workDir: cluster.dataDir })).transcribe(wav);
  const bareSec = (performance.now() - bareStart) / 1000;
  const refText = phrases.map((p) => p.text).join(' ');

  const report: Record<string, unknown> = {
    audioSec: Number(talk.durationSec.toFixed(1)),
    job: {
      wallSec: Number(jobSec.toFixed(1)),
      realTimeFactor: Number((jobSec / talk.durationSec).toFixed(3)),
      shorts: job.data.shorts.length,
    },
    stagesSec: Object.fromEntries(Object.entries(perStage).map(([k, v]) => [k, Number(v.toFixed(1))])),
    bareTranscriber: {
      backend: transcript.backend,
      wallSec: Number(bareSec.toFixed(1)),
      realTimeFactor: Number((bareSec / talk.durationSec).toFixed(3)),
      werOnSynthesised: Number(wordErrorRate(refText, transcript.text).toFixed(3)),
    },
    overheadRatio: Number((jobSec / bareSec).toFixed(2)),
  };

  if (existsSync(path.join(SHARED_MEDIA, 'jfk.wav'))) {
    const jfkWav = path.join(cluster.dataDir, 'jfk16k.wav');
    await run(FFMPEG, ['-y', '-v', 'error', '-i', path.join(SHARED_MEDIA, 'jfk.wav'), '-ac', '1', '-ar', '16000', jfkWav]);
    const jfk = await createTranscriber(transcriberConfigFromEnv(process.env, { workDir: cluster.dataDir })).transcribe(jfkWav);
    report.wer = {
      'jfk.wav': Number(wordErrorRate(readFileSync(path.join(SHARED_MEDIA, 'jfk.ref.txt'), 'utf8'), jfk.text).toFixed(3)),
      backend: jfk.backend,
    };
  } else {
    report.wer = 'skipped: ../shared/media is absent';
  }
  console.log(JSON.stringify(report, null, 2));
} finally {
  await cluster.close();
}
