// The fixed cost of a chunk (issue 35), from which the default RENDER_CHUNK_MIN_SEC and RENDER_CHUNK_SEC
// are derived (docs/leasing.md, "Renders in chunks"): on one core (`taskset -c 0 npm run
// bench:chunk-cost`), a 1080x1920 VIRAL render of 1 s and of 6 s of the same 1080p source (the
// difference: the render's cost per second of short; the rest: ffmpeg's start and the graph's set-up,
// paid again by each chunk), the split's probe of a 30 s short's packets, and the join of two chunks.
// What a split adds besides (a lease, the second agent's copy of the source, the uploads) is in
// bench/README.md's farm rounds.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { makeTestVideo, agentTools } from '../test/helpers/media.js';
import { prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { gopFramesFor, joinChunks, probeFrameTimes } from '../node-agent/src/media/render-chunks.js';
import { resolveCaptionStyle } from '@shorts/common/render/presets';

const tools = agentTools();
const dir = await mkdtemp(path.join(os.tmpdir(), 'chunk-cost-'));
const source = await makeTestVideo(path.join(dir, 'source.mp4'), { seconds: 32, width: 1920, height: 1080, fps: 30, pattern: 'testsrc2' });
const words = Array.from({ length: 80 }, (_, i) => ({ text: `word${i}`, start: i * 0.4, end: i * 0.4 + 0.35 }));
const r2 = (n: number) => Math.round(n * 100) / 100;

async function render(seconds: number, name: string, startTime = 0): Promise<{ sec: number; file: string }> {
  const workDir = path.join(dir, name);
  await mkdir(workDir, { recursive: true });
  const out = path.join(dir, `${name}.mp4`);
  const spec: RenderSpec = {
    sourcePath: source,
    startTime,
    endTime: startTime + seconds,
    words,
    output: { width: 1080, height: 1920, path: out },
    caption: { style: resolveCaptionStyle('VIRAL', undefined), maxWordsInPage: 3 },
    encoder: 'libx264',
    workDir,
    sourceWidth: 1920,
    sourceHeight: 1080,
    gopFrames: gopFramesFor(30),
  };
  const started = performance.now();
  await runFfmpeg(tools.ffmpegPath, await prepareRender(spec), { durationSec: seconds });
  return { sec: (performance.now() - started) / 1000, file: out };
}

const runs = Number(process.argv[2] ?? 3);
const short: number[] = [];
const long: number[] = [];
for (let i = 0; i < runs; i++) {
  short.push((await render(1, `short-${i}`)).sec);
  long.push((await render(6, `long-${i}`)).sec);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perSec = (median(long) - median(short)) / 5;
const setUp = median(short) - perSec;

let started = performance.now();
await probeFrameTimes(tools.ffprobePath, source, 0, 30);
const probeSec = (performance.now() - started) / 1000;

const a = await render(2, 'chunk-a', 0);
const b = await render(2, 'chunk-b', 2);
started = performance.now();
await joinChunks(tools, { chunkPaths: [a.file, b.file], audioPath: null, out: path.join(dir, 'joined.mp4'), workDir: dir });
const joinSec = (performance.now() - started) / 1000;

console.log(
  JSON.stringify({
    renderSecPerShortSec: r2(perSec),
    graphSetUpSec: r2(setUp),
    splitProbeSec: r2(probeSec),
    joinSec: r2(joinSec),
    load: os.loadavg().map(r2),
  }),
);
await rm(dir, { recursive: true, force: true });
