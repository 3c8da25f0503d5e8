// The jump-cut row of bench:render (issue 24): a 60 s 1080x1920 short rendered with both removals
// (silences and fillers) against the same render without them, in pairs run back to back; the
// figure is the ratio of the time per output frame (goal ≤ 1.10), and the talk before and after
// (duration, words per minute).
//   npm run bench:render -- jumpcuts [seconds=60] [runs=1]
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { isBundledFfmpeg, processMediaTools, toolEnv } from '@shorts/common/media/tools';
import { editedDuration, editedWords, planJumpCuts } from '@shorts/common/render/jump-cuts';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { makeSourceVideo } from './source-video.js';

const run = promisify(execFile);
const FFMPEG = processMediaTools().ffmpegPath;
const FPS = 30;
const seconds = Number(process.argv[3] ?? 60);
const runs = Math.max(1, Number(process.argv[4] ?? 1));
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-jump-cuts-'));

/** A talk of someone thinking aloud: runs of words, a pause of 0.7-1.9 s after each, an "um" in every third. */
function talk(duration: number): Array<{ text: string; start: number; end: number }> {
  const words: Array<{ text: string; start: number; end: number }> = [];
  let t = 1.2;
  for (let group = 0; t < 1 + duration - 1; group++) {
    for (let i = 0; i < 5 + (group % 4) && t < duration; i++) {
      words.push({ text: `word${words.length % 23}`, start: t, end: t + 0.28 });
      t += 0.36;
    }
    const pause = 0.7 + (group % 5) * 0.3;
    if (group % 3 === 2) words.push({ text: 'um', start: t + pause / 2 - 0.15, end: t + pause / 2 + 0.15 });
    t += pause;
  }
  return words.filter((w) => w.end < 1 + duration - 0.2);
}

try {
  const source = path.join(dir, 'source.mp4');
  await makeSourceVideo(FFMPEG, source, seconds + 2, FPS);
  const words = talk(seconds);
  const [start, end] = [1, 1 + seconds];
  const edit = planJumpCuts({ start, end, words, editing: { removeSilences: true, removeFillers: true }, fps: FPS });
  const base: RenderSpec = {
    sourcePath: source,
    startTime: start,
    endTime: end,
    words,
    output: { width: 1080, height: 1920, path: path.join(dir, 'render.mp4') },
    caption: { style: resolveCaptionStyle('VIRAL', []), maxWordsInPage: 3 },
    encoder: 'libx264',
    legacyFfmpeg: isBundledFfmpeg(FFMPEG),
    workDir: dir,
    sourceWidth: 1920,
    sourceHeight: 1080,
  };
  const plainArgs = await prepareRender(base);
  const cutArgs = await prepareRender({ ...base, workDir: path.join(dir, 'cut'), edit, sourceFps: FPS, sourceHasAudio: true });
  const timed = async (args: string[]) => {
    const t0 = performance.now();
    const withBench = ['-benchmark', ...args.map((a, i) => (args[i - 1] === '-loglevel' ? 'info' : a))];
    const { stderr } = await run(FFMPEG, withBench, { maxBuffer: 64 * 1024 * 1024, env: toolEnv() });
    const m = /bench: utime=([\d.]+)s stime=([\d.]+)s/.exec(stderr);
    if (!m) throw new Error(`ffmpeg printed no -benchmark line:\n${stderr.slice(-2000)}`);
    return { wallSec: (performance.now() - t0) / 1000, cpuSec: Number(m[1]) + Number(m[2]) };
  };
  const plainFrames = seconds * FPS;
  const cutFrames = Math.round(editedDuration(edit) * FPS);
  const ratios: Array<{ wall: number; cpu: number }> = [];
  const times: Array<{ plain: { wallSec: number; cpuSec: number }; cut: { wallSec: number; cpuSec: number } }> = [];
  for (let i = 0; i < runs; i++) {
    const plain = await timed(plainArgs);
    const cut = await timed(cutArgs);
    times.push({ plain, cut });
    ratios.push({
      wall: cut.wallSec / cutFrames / (plain.wallSec / plainFrames),
      cpu: cut.cpuSec / cutFrames / (plain.cpuSec / plainFrames),
    });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const kept = editedWords(edit, words);
  const wpm = (n: number, sec: number) => Number(((n * 60) / sec).toFixed(0));
  console.log(
    JSON.stringify(
      {
        short: {
          seconds,
          size: '1080x1920',
          encoder: 'libx264 veryfast crf 20',
          captions: 'VIRAL',
          cores: os.cpus().length,
          ffmpeg: processMediaTools().version,
          runs,
          loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
        },
        talk: {
          before: { durationSec: seconds, words: words.length, wordsPerMinute: wpm(words.length, seconds) },
          after: {
            durationSec: Number(editedDuration(edit).toFixed(2)),
            words: kept.length,
            wordsPerMinute: wpm(kept.length, editedDuration(edit)),
            cuts: edit.cuts.length,
            fillersRemoved: edit.fillerWords.length,
          },
        },
        runs: times.map((r) => ({
          plain: { wallSec: Number(r.plain.wallSec.toFixed(1)), cpuSec: Number(r.plain.cpuSec.toFixed(1)) },
          cut: { wallSec: Number(r.cut.wallSec.toFixed(1)), cpuSec: Number(r.cut.cpuSec.toFixed(1)) },
        })),
        timePerOutputFrameRatio: {
          wall: Number(median(ratios.map((r) => r.wall)).toFixed(3)),
          cpu: Number(median(ratios.map((r) => r.cpu)).toFixed(3)),
          goal: '<= 1.10',
        },
      },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
