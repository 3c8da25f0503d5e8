// Chunk timestamps at NTSC rates (issue 36 item 11): a render in chunks joined as they are gives
// every frame the single pass's own timestamp, to the tick, at 29.97 fps with a start between two
// frames (the chunks after the first drifted 7-19 ticks). Real ffmpeg, the render's own graph
// (buildRenderArgs) for the single pass and each chunk, the agent's join.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { agentTools } from './helpers/media.js';
import { buildRenderArgs, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { gopFramesFor, joinChunks, keepFirstFrames, planChunkCuts, probeFrameTimes } from '../node-agent/src/media/render-chunks.js';

const run = promisify(execFile);
const TOOLS = agentTools();
let dir: string;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'render-chunks-ntsc-'));
});
test.after.always(() => rm(dir, { recursive: true, force: true }));

async function framePts(file: string): Promise<{ pts: number[]; timeBase: string; duration: string }> {
  const { stdout } = await run(
    TOOLS.ffprobePath,
    ['-v', 'error', '-of', 'json', '-select_streams', 'v:0', '-show_entries', 'packet=pts:stream=time_base,duration', file],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const json = JSON.parse(stdout) as { packets: Array<{ pts: number }>; streams: Array<{ time_base: string; duration: string }> };
  return {
    pts: json.packets.map((p) => p.pts).sort((a, b) => a - b),
    timeBase: json.streams[0]!.time_base,
    duration: json.streams[0]!.duration,
  };
}

for (const [name, rate] of [
  ['29.97', '30000/1001'],
  ['59.94', '60000/1001'],
] as const) {
  test.serial(`${name} fps, a start between two frames: every chunk's frames at the single pass's timestamps, to the tick`, async (t) => {
    t.timeout(5 * 60_000);
    const source = path.join(dir, `source-${name}.mp4`);
    await run(TOOLS.ffmpegPath, [
      ...['-y', '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=320x180:rate=${rate}:duration=16`],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', source],
    ]);
    const fps = name === '29.97' ? 30000 / 1001 : 60000 / 1001;
    // 1.217 s: between frames 36 and 37 at 29.97 fps (1.2012 and 1.2346 s).
    const [start, end] = [1.217, 13.4];
    const frames = await probeFrameTimes(TOOLS.ffprobePath, source, start, end);
    const gopFrames = gopFramesFor(fps)!;
    const base: Omit<RenderSpec, 'output'> = {
      sourcePath: source,
      startTime: start,
      endTime: end,
      words: [],
      caption: null,
      encoder: 'libx264',
      workDir: dir,
      sourceWidth: 320,
      sourceHeight: 180,
      gopFrames,
    };
    const render = (spec: RenderSpec) => run(TOOLS.ffmpegPath, buildRenderArgs(spec), { maxBuffer: 64 * 1024 * 1024 });
    const single = path.join(dir, `single-${name}.mp4`);
    await render({ ...base, output: { width: 180, height: 320, path: single } });
    const cuts = planChunkCuts(frames, { start, end, chunks: 3, gopFrames });
    t.truthy(cuts);
    const chunkPaths = cuts!.map((_, k) => path.join(dir, `chunk-${name}-${k}.mp4`));
    // As the agent does (render-chunk.ts): a chunk planned to render past its end keeps its own frames.
    for (const [k, cut] of cuts!.entries()) {
      const rendering = cut.keepFrames ? `${chunkPaths[k]!}.overrun.mp4` : chunkPaths[k]!;
      await render({ ...base, output: { width: 180, height: 320, path: rendering }, chunk: { ...cut, last: k === cuts!.length - 1 } });
      if (cut.keepFrames) await keepFirstFrames(TOOLS.ffmpegPath, { input: rendering, out: chunkPaths[k]!, frames: cut.keepFrames });
    }
    const joined = path.join(dir, `joined-${name}.mp4`);
    await joinChunks(TOOLS, { chunkPaths, audioPath: null, out: joined, workDir: dir });

    const [a, b] = await Promise.all([framePts(single), framePts(joined)]);
    t.log(`single: ${a.timeBase}, ${a.pts.length} frames; joined: ${b.timeBase}, ${b.pts.length} frames`);
    t.is(b.timeBase, a.timeBase);
    t.is(b.pts.length, a.pts.length, 'the same frames');
    const off = b.pts.map((p, i) => p - a.pts[i]!).filter((d, i, all) => i === 0 || d !== all[i - 1]);
    t.deepEqual(b.pts, a.pts, `every frame at the single pass's timestamp (offsets met: ${off.join(', ')})`);
    t.is(b.duration, a.duration);
  });
}
