// Stage 80 of analysis as the agent runs it, on a 10-minute 1280x720 two-person source composed from
// the GRID clips: detection (frames, faces, VAD, tracks, turns), the camera path planned per short
// (`planReframe`), and the crop clip rendered per short (`cutCropClip` with the encoder the agent
// would pick here, plus its thumbnail). Prints frames analysed per second for detection, VAD and
// tracking, and each part's time as a fraction of the source's duration for a typical job (5 shorts
// of 30-60 s) and, extrapolated, for the whole source. Baseline in the same process: ffmpeg sampling
// the same ranges with no analysis.
//   npm run bench:reframe -- [minutes=10] [--whole]
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { createLogger } from '@shorts/common/logger';
import { processMediaTools } from '@shorts/common/media/tools';
import { repoRoot } from '@shorts/common/paths';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Reframe } from '@shorts/common/reframe/types';
import { probeHost } from '../node-agent/src/host/probe-host.js';
import { extractAudio } from '../node-agent/src/media/audio-extract.js';
import { cropClipSize, cutCropClip, grabThumbnail } from '../node-agent/src/media/clips.js';
import { encoderArgs } from '../node-agent/src/media/render-args.js';
import { planReframe } from '@shorts/common/reframe/camera';
import { detectShorts, DETECT_STRIDE, SAMPLE_FPS, type DetectTimings } from '../node-agent/src/reframe/detect-shorts.js';
import { BlazeFaceDetector } from '../node-agent/src/reframe/blazeface.js';
import { sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import { analysisSize, sampleFrames } from '../node-agent/src/reframe/frames.js';
import { composeConversation, gridClips } from '../test/helpers/grid.js';
import { FFMPEG } from '../test/helpers/media.js';

const run = promisify(execFile);

/** CPU seconds of this process and its finished children (ffmpeg), from /proc: on a shared machine
 *  wall time measures the neighbours too, CPU time only this work. */
function cpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // After the command name: utime, stime, cutime, cstime are fields 14-17 of stat, 12-15 here.
  return fields.slice(11, 15).reduce((s, v) => s + Number(v), 0) / 100;
}
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Wall and CPU seconds of `fn`. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const t0 = performance.now();
  const c0 = cpuSeconds();
  const value = await fn();
  return { value, wall: (performance.now() - t0) / 1000, cpu: cpuSeconds() - c0 };
}

const minutes = Number(process.argv.slice(2).find((a) => /^\d/.test(a)) ?? 10);
const whole = process.argv.includes('--whole');
const log = createLogger({ bench: 'reframe' }, 'warn');
const GOAL = 0.1;

if (!gridClips()) {
  console.log('skipped: ../shared/media (the GRID clips) absent');
  process.exit(0);
}
const loadBefore = loadAverage();
// The ffmpeg and encoder an agent on this host would use (system ffmpeg ≥ 5 before the bundled one;
// NVENC when it works, else libx264).
const ffmpegPath = processMediaTools().ffmpegPath;
const dir = path.join(repoRoot(), 'bench/out/reframe');
await mkdir(dir, { recursive: true });
const host = await probeHost({ ffmpegPath, workDir: dir }, log);
const encoder = host.nvencAvailable ? ('h264_nvenc' as const) : ('libx264' as const);

const source = path.join(dir, `conversation-${minutes}min.mp4`);
const wav = path.join(dir, `conversation-${minutes}min.wav`);
const durationSec = minutes * 60;
if (!existsSync(source) || !existsSync(wav)) {
  // 12 s of two people taking turns, looped without re-encoding.
  const unit = await composeConversation(dir, { turns: [0, 1, 0, 1], listener: 'drift' });
  const loops = Math.ceil(durationSec / unit.durationSec);
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-stream_loop',
    String(loops - 1),
    '-i',
    unit.videoPath,
    '-t',
    String(durationSec),
    '-c',
    'copy',
    source,
  ]);
  await extractAudio(FFMPEG, source, wav);
}

// A typical job: five shorts of 30-60 s spread over the source.
const lengths = [30, 45, 60, 40, 50];
const shorts = whole
  ? [{ start: 0, end: durationSec }]
  : lengths.map((len, i) => {
      const slot = durationSec / lengths.length;
      const length = Math.min(len, slot);
      const start = Math.round(i * slot + (slot - length) / 2);
      return { start, end: start + length };
    });
const analysedSec = shorts.reduce((s, x) => s + x.end - x.start, 0);

const detector = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);

// Baseline: ffmpeg sampling the same frames, nothing else.
const baseline = await timed(async () => {
  let n = 0;
  for (const s of shorts) {
    for await (const _ of sampleFrames(ffmpegPath, source, s, { fps: SAMPLE_FPS, size: analysisSize(1280, 720) })) n++;
  }
  return n;
});

const timings: DetectTimings = { frames: 0, detections: 0, decodeAndDetectMs: 0, detectMs: 0, trackMs: 0, vadMs: 0 };
const detection = await timed(() =>
  detectShorts(
    { sourceFile: source, sourceWidth: 1280, sourceHeight: 720, shorts, wavPath: wav, signal: new AbortController().signal },
    { ffmpegPath, detector, log },
    timings,
  ),
);
const results = detection.value;

// As analyze-video plans it: default director settings, the crop clip's own output size.
const output = cropClipSize(1280, 720);
const planning = await timed(async () => results.map((d) => planReframe(d, { ...DEFAULT_DIRECTOR }, output)));
const paths: Reframe[] = planning.value;

const clips = await timed(async () => {
  let encode = { wall: 0, cpu: 0 };
  for (const [i, s] of shorts.entries()) {
    const clip = path.join(dir, `short-${i}.mp4`);
    const one = await timed(() =>
      cutCropClip(ffmpegPath, {
        sourcePath: source,
        out: clip,
        start: s.start,
        end: s.end,
        sourceWidth: 1280,
        sourceHeight: 720,
        reframe: paths[i]!,
        encoder,
        workDir: path.join(dir, `short-${i}-work`),
      }),
    );
    encode = { wall: encode.wall + one.wall, cpu: encode.cpu + one.cpu };
    await grabThumbnail(ffmpegPath, clip, path.join(dir, `short-${i}.jpg`), 0.5);
  }
  return encode;
});
const loadAfter = loadAverage();

const stage = { wall: detection.wall + planning.wall + clips.wall, cpu: detection.cpu + planning.cpu + clips.cpu };
const vadSec = timings.vadMs / 1000;
const vadFrames = (analysedSec * 16_000) / 512;
const fmt = (v: number, d = 1) => v.toFixed(d);
const frac = (sec: number) => fmt(sec / durationSec, 3);
const share = (sec: number) => `${fmt((100 * sec) / stage.wall, 0)} %`;
console.log(
  `source: ${minutes} min 1280x720 (GRID conversation), ${fmt(analysedSec, 0)} s in ${shorts.length} short(s); ffmpeg ${ffmpegPath}`,
);
console.log(`load average before ${loadBefore}, after ${loadAfter}, on ${os.cpus().length} cores`);
console.log(
  `detector ${detector.name} on ${detector.provider}, ${SAMPLE_FPS} frames/s sampled, detector on 1 frame in ${DETECT_STRIDE} (${SAMPLE_FPS / DETECT_STRIDE} detections/s)`,
);
console.log(
  `  ${timings.frames} frames; tracks per short: ${results.map((r) => r.tracks.length).join(',')}; turns: ${results.reduce((n, r) => n + r.turns.length, 0)}; segments per short: ${paths.map((p) => p.segments.length).join(',')}`,
);
console.log(
  `detection: ${fmt(timings.frames / (timings.detectMs / 1000))} sampled frames/s of detector time (${timings.detections} detector runs, ${fmt(timings.detectMs / timings.detections)} ms each${detector instanceof BlazeFaceDetector ? `, ${detector.tilesFor(640, 360)} tiles of 256x256` : ''}); ${fmt(timings.frames / (timings.decodeAndDetectMs / 1000))} frames/s decoded + detected`,
);
console.log(
  `VAD: ${fmt(vadFrames / vadSec, 0)} frames/s of 32 ms, real-time factor ${fmt(vadSec / analysedSec, 4)} (${fmt(analysedSec / vadSec, 0)}x real time)`,
);
console.log(`tracking, mouth activity and turns: ${fmt(timings.frames / (timings.trackMs / 1000), 0)} frames/s`);
console.log(
  `bare sampling (baseline): ${fmt(baseline.wall)} s wall, ${fmt(baseline.cpu)} CPU-s for ${baseline.value} frames; detection is ${fmt(detection.wall / baseline.wall, 2)}x its wall time`,
);
console.log(
  `crop clips: ${encoder} (${encoderArgs(encoder).slice(2).join(' ')}), ${output.width}x${output.height}: ${fmt((analysedSec * 25) / clips.value.wall, 0)} output frames/s (25 fps source)`,
);
console.log('part                         wall s   CPU s   share   fraction of the source (wall, CPU)');
const row = (name: string, p: { wall: number; cpu: number }) =>
  console.log(
    `${name.padEnd(28)} ${fmt(p.wall).padStart(6)}  ${fmt(p.cpu).padStart(6)}  ${share(p.wall).padStart(6)}   ${frac(p.wall)}, ${frac(p.cpu)}`,
  );
row('detection', detection);
row('planning', planning);
row('crop clip encodes', clips.value);
row('crop clip thumbnails', { wall: clips.wall - clips.value.wall, cpu: clips.cpu - clips.value.cpu });
row('stage 80 (all of the above)', stage);
const verdict =
  stage.wall / durationSec <= GOAL
    ? 'goal met'
    : `goal missed by ${fmt(stage.wall / durationSec - GOAL, 3)} (${fmt(stage.wall / durationSec / GOAL, 2)}x the goal)`;
const label = whole ? 'whole source analysed' : `typical job (${analysedSec} s of shorts)`;
console.log(
  `${label}: stage 80 takes ${frac(stage.wall)} of the source's duration in wall time, ${frac(stage.cpu)} in CPU time (goal ≤ ${GOAL}: ${verdict}); detection alone ${frac(detection.wall)}`,
);
if (!whole) {
  console.log(
    `whole source, extrapolated per analysed second: stage ${fmt(stage.wall / analysedSec, 3)} wall (detection ${fmt(detection.wall / analysedSec, 3)}, crop clip ${fmt(clips.wall / analysedSec, 3)}), ${fmt(stage.cpu / analysedSec, 3)} CPU`,
  );
}
await detector.release();
