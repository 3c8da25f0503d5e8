import test from 'ava';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { agentTools, serveFiles, zeroTimestampAudio, type MediaServer } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { measureMediaDuration } from '../node-agent/src/media/ffmpeg.js';
import { extractAnalysisAudio, lengthSlackSec } from '../node-agent/src/tasks/analyze-video.js';
import { TaskError } from '../node-agent/src/tasks/task-context.js';

// Real recordings rarely end every stream at the same instant, and ones joined from clips overlap
// their timestamps at each join, so their audio decodes a little longer than the streams say. Those
// are billed for what decodes; a file whose audio runs on far past its length is still refused.

const run = promisify(execFile);
// The agent's ffmpeg (a system 5+ build where there is one): the lengths are its readings.
const TOOLS = agentTools();
let cluster: TestCluster;
let media: MediaServer;
const files: Record<string, string> = {};

const ffmpeg = (...args: string[]) => run(TOOLS.ffmpegPath, ['-y', '-hide_banner', '-loglevel', 'error', ...args]);
const picture = (seconds: number) => ['-f', 'lavfi', '-i', `testsrc2=size=160x90:rate=25:duration=${seconds}`];
const tone = (seconds: number, hz = 440) => ['-f', 'lavfi', '-i', `sine=frequency=${hz}:sample_rate=44100:duration=${seconds}`];
const encode = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'];

/** Three 15.4 s takes joined by the concat demuxer, each placed 15 s after the last (as an editor
 *  trimming by video length does): 45.4 s of streams whose audio decodes to about 46.3 s. */
async function concatenatedRecording(dir: string): Promise<string> {
  const list: string[] = [];
  for (const take of [1, 2, 3]) {
    const clip = path.join(dir, `take-${take}.mp4`);
    await ffmpeg(...picture(15.4), ...tone(15.4, 200 * take), ...encode, '-shortest', clip);
    list.push(`file '${clip}'`, 'duration 15');
  }
  const listFile = path.join(dir, 'takes.txt');
  await writeFile(listFile, list.join('\n') + '\n');
  const out = path.join(dir, 'joined.mp4');
  await ffmpeg('-f', 'concat', '-safe', '0', '-i', listFile, '-c', 'copy', out);
  return out;
}

test.before(async () => {
  cluster = await startCluster('analysis_length');
  const dir = cluster.dataDir;
  files.concatenated = await concatenatedRecording(dir);
  files.audioLonger = path.join(dir, 'audio-longer.mp4');
  await ffmpeg(...picture(8), ...tone(10), ...encode, files.audioLonger);
  files.videoLonger = path.join(dir, 'video-longer.mp4');
  await ffmpeg(...picture(10), ...tone(8), ...encode, files.videoLonger);
  if (TOOLS.source === 'system') files.zeroTs = await zeroTimestampAudio(TOOLS.ffmpegPath, dir);
  media = await serveFiles({ 'joined.mp4': files.concatenated });
});
test.after.always(async () => {
  await media?.close();
  await cluster?.close();
});

/** What the agent bills for a file, as analyze-video reads it: the packets' end, then the decode. */
async function billedLength(file: string) {
  const measuredSec = await measureMediaDuration(TOOLS.ffmpegPath, file);
  const wav = `${file}.wav`;
  return { measuredSec, ...(await extractAnalysisAudio(TOOLS.ffmpegPath, file, wav, measuredSec)) };
}

const near = (value: number, want: number, within = 0.15) => Math.abs(value - want) <= within;

test('a recording joined from clips, whose audio decodes past its streams, is billed for what decodes', async (t) => {
  const { measuredSec, decodedSec, billedSec } = await billedLength(files.concatenated!);
  t.log(`streams end at ${measuredSec.toFixed(2)} s, the audio decodes to ${decodedSec.toFixed(2)} s`);
  t.true(near(measuredSec, 45.4, 0.3), `measured ${measuredSec}`);
  t.true(decodedSec > measuredSec + 0.5, 'the joins overlap: more audio than the timestamps span');
  t.is(billedSec, decodedSec);
});

test('audio longer than the video, and video longer than the audio: billed for the longer stream', async (t) => {
  const audioLonger = await billedLength(files.audioLonger!);
  t.true(near(audioLonger.billedSec, 10), `audio 10 s over 8 s of video: billed ${audioLonger.billedSec}`);
  const videoLonger = await billedLength(files.videoLonger!);
  t.true(near(videoLonger.billedSec, 10), `video 10 s over 8 s of audio: billed ${videoLonger.billedSec}`);
  t.true(near(videoLonger.decodedSec, 8), `decoded ${videoLonger.decodedSec}`);
});

needing({ tools: { 'a system ffmpeg 5+ with the setts filter (to craft the file)': TOOLS.source === 'system' } })(
  'audio that runs on far past its timestamps is still refused, having decoded only a little past the slack',
  async (t) => {
    const measuredSec = await measureMediaDuration(TOOLS.ffmpegPath, files.zeroTs!);
    t.true(measuredSec < 1.5, `read packet by packet the file ends at ${measuredSec} s`);
    const err = await t.throwsAsync(billedLength(files.zeroTs!), {
      instanceOf: TaskError,
      message: /a file whose length cannot be told is refused/,
    });
    t.is(err.code, 'LENGTH_MISMATCH');
    const decoded = Number(/decodes to at least (\d+\.\d) s/.exec(err.message)![1]);
    t.true(
      decoded > measuredSec + lengthSlackSec(measuredSec) && decoded < measuredSec + lengthSlackSec(measuredSec) + 2,
      `decoded ${decoded} s of 30`,
    );
  },
);

test('the slack is a few seconds, or a few percent of a long recording', (t) => {
  t.is(lengthSlackSec(10), 3);
  t.is(lengthSlackSec(45.1), 3);
  t.is(lengthSlackSec(3600), 108);
});

test.serial('a job on a joined recording completes, charged for the length that decodes', async (t) => {
  await cluster.startAgent({ FFMPEG_PATH: TOOLS.ffmpegPath, FFPROBE_PATH: TOOLS.ffprobePath });
  const { decodedSec } = await billedLength(files.concatenated!);
  const { key } = await cluster.org({ plan: 'pro', credits: 10 });
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: {
      functionName: 'VideoShorts',
      fileUrl: media.url('joined.mp4'),
      options: { predefinedShorts: [{ title: 'Opening', start: 0, end: 4 }] },
    },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const job = await cluster.settledJob(key, created.body.id);
  t.is(job.status, 'COMPLETED', job.message);
  const row = await cluster.app.db.one<{ durationSec: number }>('SELECT duration_sec AS "durationSec" FROM jobs WHERE id = $1', [job.id]);
  t.true(near(Number(row!.durationSec), decodedSec, 0.05), `billed ${row!.durationSec} s, decodes to ${decodedSec} s`);
});
