// Stage 80's detection half on a 10-minute 1280x720 two-person source composed from the GRID clips:
// frames analysed per second for detection, VAD and tracking, and the stage's time as a fraction of
// the source's duration for a typical job (5 shorts of 30-60 s) and, extrapolated, for the whole
// source. Baseline in the same process: ffmpeg sampling the same ranges with no analysis.
//   npm run bench:reframe -- [minutes=10] [--whole]
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { createLogger } from '../common/src/logger.js';
import { repoRoot } from '../common/src/paths.js';
import { extractAudio } from '../node-agent/src/media/audio.js';
import { detectShorts, SAMPLE_FPS, type DetectTimings } from '../node-agent/src/reframe/detect-shorts.js';
import { BlazeFaceDetector } from '../node-agent/src/reframe/blazeface.js';
import { sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import { analysisSize, sampleFrames } from '../node-agent/src/reframe/frames.js';
import { composeConversation, gridClips } from '../test/helpers/grid.js';
import { FFMPEG } from '../test/helpers/media.js';

const run = promisify(execFile);

/** CPU seconds of this process and its finished children (ffmpeg), from /proc: on a shared machine
 *  wall time measures the neighbours too, CPU time only this work. */
function cpuSeconds(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /, '').split(' ');
  // After the command name: utime, stime, cutime, cstime are fields 14-17 of stat, 12-15 here.
  return fields.slice(11, 15).reduce((s, v) => s + Number(v), 0) / 100;
}
const minutes = Number(process.argv.slice(2).find((a) => /^\d/.test(a)) ?? 10);
const whole = process.argv.includes('--whole');
const log = createLogger({ bench: 'reframe' }, 'warn');

if (!gridClips()) {
  console.log('skipped: ../shared/media (the GRID clips) absent');
  process.exit(0);
}
const dir = path.join(repoRoot(), 'bench/out/reframe');
await mkdir(dir, { recursive: true });
const source = path.join(dir, `conversation-${minutes}min.mp4`);
const wav = path.join(dir, `conversation-${minutes}min.wav`);
const durationSec = minutes * 60;
if (!existsSync(source) || !existsSync(wav)) {
  // 12 s of two people taking turns, looped without re-encoding.
  const unit = await composeConversation(dir, { turns: [0, 1, 0, 1], listener: 'drift' });
  const loops = Math.ceil(durationSec / unit.durationSec);
  await run(FFMPEG, ['-y', '-hide_banner', '-loglevel', 'error', '-stream_loop', String(loops - 1), '-i', unit.videoPath, '-t', String(durationSec), '-c', 'copy', source]);
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
const b0 = performance.now();
const bCpu0 = cpuSeconds();
let baselineFrames = 0;
for (const s of shorts) {
  for await (const _ of sampleFrames(FFMPEG, source, s, { fps: SAMPLE_FPS, size: analysisSize(1280, 720) })) baselineFrames++;
}
const baselineSec = (performance.now() - b0) / 1000;
const baselineCpu = cpuSeconds() - bCpu0;

const timings: DetectTimings = { frames: 0, detections: 0, decodeAndDetectMs: 0, detectMs: 0, trackMs: 0, vadMs: 0 };
const t0 = performance.now();
const cpu0 = cpuSeconds();
const results = await detectShorts({ sourceFile: source, sourceWidth: 1280, sourceHeight: 720, shorts, wavPath: wav, signal: new AbortController().signal }, { ffmpegPath: FFMPEG, detector, log }, timings);
const stageSec = (performance.now() - t0) / 1000;
const stageCpu = cpuSeconds() - cpu0;
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];

const perAnalysedSec = stageSec / analysedSec;
const vadFrames = (analysedSec * 16_000) / 512;
const fmt = (v: number, d = 1) => v.toFixed(d);
console.log(`source: ${minutes} min 1280x720 (GRID conversation), detector ${detector.name} on ${detector.provider}, ${SAMPLE_FPS} frames/s sampled`);
console.log(`analysed: ${shorts.length} short(s), ${analysedSec} s, ${timings.frames} frames; tracks per short: ${results.map((r) => r.tracks.length).join(',')}; turns: ${results.reduce((n, r) => n + r.turns.length, 0)}`);
console.log(`detection: ${fmt(timings.frames / (timings.detectMs / 1000))} sampled frames/s (the detector ran on ${timings.detections} of them, ${fmt(timings.detectMs / timings.detections, 1)} ms each${detector instanceof BlazeFaceDetector ? `: ${detector.tilesFor(640, 360)} tiles of 256x256` : ''})`);
console.log(`VAD: ${fmt(vadFrames / (timings.vadMs / 1000), 0)} frames/s of 32 ms (${fmt(analysedSec / (timings.vadMs / 1000), 0)}x real time)`);
console.log(`tracking, mouth activity and turns: ${fmt(timings.frames / (timings.trackMs / 1000), 0)} frames/s`);
console.log(`sampling with nothing else (baseline, same process): ${fmt(baselineSec)} s wall, ${fmt(baselineCpu)} CPU-s for ${baselineFrames} frames`);
console.log(`stage: ${fmt(stageSec)} s wall (${fmt(stageSec / baselineSec, 2)}x the bare sampling), ${fmt(stageCpu)} CPU-s (${fmt(stageCpu / baselineCpu, 2)}x); load average ${load} on ${os.cpus().length} cores`);
console.log(`per analysed second: ${fmt(perAnalysedSec, 3)} s wall, ${fmt(stageCpu / analysedSec, 3)} CPU-s`);
const label = whole ? 'whole source analysed' : `typical job (${analysedSec} s of shorts)`;
console.log(`${label}: ${fmt(stageSec / durationSec, 3)} of the source's duration in wall time, ${fmt(stageCpu / durationSec, 3)} in CPU time (goal ≤ 0.1)`);
if (!whole) console.log(`whole source, extrapolated from the per-analysed-second cost: ${fmt(perAnalysedSec, 3)} wall, ${fmt(stageCpu / analysedSec, 3)} CPU`);
await detector.release();
