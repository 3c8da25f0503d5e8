// Small faces on large sources: recall of the reframing analysis (`detectShorts`, tracks included)
// on wide shots of three GRID people whose faces take 4-8 % of the frame's height, at 1080p and 4K,
// straight-on and turned; then what detection costs on a 10 s 1080p wide shot (detector runs, model
// runs per detected frame, wall and CPU time of `detectShorts`).
//   npx tsx bench/small-faces.ts [--cost-only] [--recall-only]
import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createLogger } from '@shorts/common/logger';
import { repoRoot } from '@shorts/common/paths';
import { detectShorts, type DetectTimings } from '../node-agent/src/reframe/detect-shorts.js';
import { BlazeFaceDetector } from '../node-agent/src/reframe/blazeface.js';
import { sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import type { FaceDetector } from '../node-agent/src/reframe/face-detector.js';
import { gridClips } from '../test/helpers/grid.js';
import { FFMPEG } from '../test/helpers/media.js';
import { composeWideShot, measureRecall, type WideShotOptions } from '../test/helpers/small-faces.js';

const log = createLogger({ bench: 'small-faces' }, 'warn');
if (!gridClips()) {
  console.log('skipped: ../shared/media (the GRID clips) absent');
  process.exit(0);
}
const cpuSeconds = () =>
  readFileSync('/proc/self/stat', 'utf8')
    .replace(/^.*\) /, '')
    .split(' ')
    .slice(11, 15)
    .reduce((s, v) => s + Number(v), 0) / 100;
const dir = path.join(repoRoot(), 'bench/out/small-faces');
await mkdir(dir, { recursive: true });
const shared = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);
// Model inputs (BlazeFace tiles) are what detection costs; count them whatever pass asks for them.
let modelInputs = 0;
const detector: FaceDetector = {
  name: shared.name,
  provider: shared.provider,
  detect(images, signal) {
    for (const img of images) modelInputs += shared instanceof BlazeFaceDetector ? shared.tilesFor(img.width, img.height) : 1;
    return shared.detect(images, signal);
  },
  release: () => shared.release(),
};

async function analyse(opts: WideShotOptions) {
  const shot = await composeWideShot(dir, opts);
  const timings: DetectTimings = { frames: 0, detections: 0, decodeAndDetectMs: 0, detectMs: 0, trackMs: 0, vadMs: 0 };
  modelInputs = 0;
  const t0 = performance.now();
  const c0 = cpuSeconds();
  const [result] = await detectShorts(
    {
      sourceFile: shot.videoPath,
      sourceWidth: shot.width,
      sourceHeight: shot.height,
      shorts: [{ start: 0, end: shot.durationSec }],
      wavPath: shot.wavPath,
      signal: new AbortController().signal,
    },
    { ffmpegPath: FFMPEG, detector, log },
    timings,
  );
  return { shot, result: result!, timings, wall: (performance.now() - t0) / 1000, cpu: cpuSeconds() - c0, inputs: modelInputs };
}

if (!process.argv.includes('--cost-only')) {
  const cases: Array<[string, WideShotOptions]> = [
    ['1080p 4/4/4 %', { width: 1920, height: 1080, fractions: [0.04, 0.04, 0.04] }],
    ['1080p 5/6.5/8 %', { width: 1920, height: 1080, fractions: [0.05, 0.065, 0.08] }],
    ['4K 4/4/4 %', { width: 3840, height: 2160, fractions: [0.04, 0.04, 0.04] }],
    ['4K 5/6.5/8 %', { width: 3840, height: 2160, fractions: [0.05, 0.065, 0.08] }],
    ['1080p turned 8/8/8 %', { width: 1920, height: 1080, fractions: [0.08, 0.08, 0.08], turned: true }],
    ['1080p turned 5/6.5/8 %', { width: 1920, height: 1080, fractions: [0.05, 0.065, 0.08], turned: true }],
    ['720p turned 15/15/15 %', { width: 1280, height: 720, fractions: [0.15, 0.15, 0.15], turned: true }],
  ];
  for (const [label, opts] of cases) {
    const { shot, result, timings, inputs } = await analyse(opts);
    const r = measureRecall(result, shot.faces);
    const per = r.found.map((n, k) => `${(100 * shot.faces[k]!.fraction).toFixed(1)}%: ${((100 * n) / r.frames).toFixed(0)}%`).join(', ');
    console.log(
      `${label.padEnd(24)} recall ${per}; false faces/frame ${r.falsePerFrame.toFixed(3)}; ${result.tracks.length} tracks; ${timings.detections} detector runs, ${(inputs / timings.detections).toFixed(1)} model inputs each`,
    );
  }
}

if (!process.argv.includes('--recall-only')) {
  // Cost: 10 s of a 1080p wide shot (three faces at 5-8 %), the whole stage's detection half.
  const { timings, wall, cpu, result, inputs } = await analyse({
    width: 1920,
    height: 1080,
    fractions: [0.05, 0.065, 0.08],
    seconds: 10,
    name: 'cost-1080p-10s',
  });
  console.log(
    `cost, 10 s 1080p wide shot: detectShorts ${wall.toFixed(2)} s wall, ${cpu.toFixed(2)} CPU-s (${(wall / 10).toFixed(3)} / ${(cpu / 10).toFixed(3)} of the source); ` +
      `${timings.frames} frames, ${timings.detections} detector runs (${(timings.detections / timings.frames).toFixed(2)} a frame), ${inputs} model inputs (${(inputs / timings.detections).toFixed(2)} a detector run, ${(inputs / timings.frames).toFixed(2)} a frame), detector ${(timings.detectMs / 1000).toFixed(2)} s (${(timings.detectMs / timings.detections).toFixed(1)} ms a run); ${result.tracks.length} tracks`,
  );
}
await detector.release();
