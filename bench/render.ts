// A 60 s 1080x1920 short: our render (crop, scale, captions, watermark, encode in one ffmpeg) against
// a bare ffmpeg encode of the same crop with the same encoder settings, in the same run.
//   npm run bench:render -- [seconds=60] [blendMode=normal | mode,mode,... | all] [runs=1]
//   npm run bench:render -- jumpcuts [seconds=60] [runs=1]   (bench/render-jump-cuts.ts)
//   npm run bench:render -- hdr [seconds=10] [runs=2]         (bench/render-hdr.ts)
//   npm run bench:render -- api [seconds=45] [pairs=3]        (bench/render-api.ts: through the API, by stage)
// `all` renders the watermark in each of the 16 blend modes. Each mode is timed in `runs` pairs: a
// bare encode, then the render, one right after the other. Each run is measured twice: wall time,
// and the CPU time ffmpeg itself reports (-benchmark: user + system over all its threads). The
// figure per mode is the median of the pairs' ratios: on a shared virtual machine the speed of the
// same encode drifts by 10-20 % from one minute to the next, which a pair's two runs share and a
// median of pairs sets aside (the ratio of the fastest runs is printed too). On a shared machine the
// wall ratio also follows whatever else runs; the CPU ratio is what the render costs a dedicated host.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { isBundledFfmpeg, processMediaTools, toolEnv } from '@shorts/common/media/tools';
import { prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { gopFramesFor } from '../node-agent/src/media/render-chunks.js';
import { makeLogo, makeSourceVideo } from './source-video.js';
import { largestWindow } from '@shorts/common/reframe/camera';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { BLEND_MODES, type BlendMode } from '@shorts/common/render/options';

if (process.argv[2] === 'jumpcuts') {
  await import('./render-jump-cuts.js');
  process.exit(0);
}
if (process.argv[2] === 'api') {
  await import('./render-api.js');
  process.exit(0);
}
if (process.argv[2] === 'hdr') {
  await import('./render-hdr.js');
  process.exit(0);
}

const run = promisify(execFile);
// The ffmpeg an agent would run: FFMPEG_PATH, else a system ffmpeg >= 5, else the bundled build.
const FFMPEG = processMediaTools().ffmpegPath;
const seconds = Number(process.argv[2] ?? 60);
const modeArg = process.argv[3] ?? 'normal';
const modes: BlendMode[] =
  modeArg === 'all'
    ? [...BLEND_MODES]
    : modeArg.split(',').map((m) => {
        if (!(BLEND_MODES as readonly string[]).includes(m))
          throw new Error(`unknown blend mode ${m}; one of ${BLEND_MODES.join(', ')}, or all`);
        return m as BlendMode;
      });
const runs = Math.max(1, Number(process.argv[4] ?? 1));
interface Cost {
  wallSec: number;
  cpuSec: number;
}
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-render-'));

try {
  const source = path.join(dir, 'source.mp4');
  await makeSourceVideo(FFMPEG, source, seconds + 2, 30);
  const logo = await makeLogo(path.join(dir, 'logo.png'));

  const words = Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({
    text: `word${i % 17}`,
    start: 1 + i * 0.4,
    end: 1 + i * 0.4 + 0.35,
  }));

  const window = largestWindow(1920, 1080, 9 / 16);
  const c = { w: window.width, h: window.height, x: (1920 - window.width) / 2, y: 0 };
  const bareOut = path.join(dir, 'bare.mp4');
  const bareArgs = [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-loglevel',
    'error',
    '-ss',
    '1',
    '-to',
    String(1 + seconds),
    '-i',
    source,
    '-vf',
    `crop=${c.w}:${c.h}:${c.x}:${c.y},scale=1080:1920:flags=bicubic,setsar=1,format=yuv420p`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '160k',
    '-movflags',
    '+faststart',
    bareOut,
  ];
  // -benchmark prints "bench: utime=…s stime=…s rtime=…s" at info level, for all of ffmpeg's threads.
  const timed = async (args: string[]): Promise<Cost> => {
    const withBench = ['-benchmark', ...args.map((a, i) => (args[i - 1] === '-loglevel' ? 'info' : a))];
    const t0 = performance.now();
    // The environment an agent gives ffmpeg (toolEnv: its malloc settings among them), for the bare
    // encode too, so the ratio is what the render's own filters cost.
    const { stderr } = await run(FFMPEG, withBench, { maxBuffer: 64 * 1024 * 1024, env: toolEnv() });
    const wallSec = (performance.now() - t0) / 1000;
    const m = /bench: utime=([\d.]+)s stime=([\d.]+)s/.exec(stderr);
    if (!m) throw new Error(`ffmpeg printed no -benchmark line:\n${stderr.slice(-2000)}`);
    return { wallSec, cpuSec: Number(m[1]) + Number(m[2]) };
  };
  const fastest = (a: Cost, b: Cost): Cost => ({ wallSec: Math.min(a.wallSec, b.wallSec), cpuSec: Math.min(a.cpuSec, b.cpuSec) });
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  const frames = seconds * 30;
  // bare and render: the fastest run of each; ratio: the median of the pairs' ratios.
  const rows: Array<{ mode: BlendMode; bare: Cost; render: Cost; ratio: Cost }> = [];
  for (const blendMode of modes) {
    const spec: RenderSpec = {
      sourcePath: source,
      startTime: 1,
      endTime: 1 + seconds,
      words,
      output: { width: 1080, height: 1920, path: path.join(dir, 'render.mp4') },
      caption: { style: resolveCaptionStyle('VIRAL', []), maxWordsInPage: 3 },
      watermark: { imagePath: logo, left: '40px', top: '40px', width: '300px', opacity: 0.8, blendMode },
      encoder: 'libx264',
      legacyFfmpeg: isBundledFfmpeg(FFMPEG),
      workDir: dir,
      sourceWidth: 1920,
      sourceHeight: 1080,
      // As the agent renders every short: keyframes where a chunk could start (render-chunks.ts).
      gopFrames: gopFramesFor(30),
    };
    const args = await prepareRender(spec);
    let bare: Cost = { wallSec: Infinity, cpuSec: Infinity };
    let render: Cost = { wallSec: Infinity, cpuSec: Infinity };
    const pairs: Cost[] = [];
    for (let i = 0; i < runs; i++) {
      const b = await timed(bareArgs);
      const r = await timed(args);
      pairs.push({ wallSec: r.wallSec / b.wallSec, cpuSec: r.cpuSec / b.cpuSec });
      bare = fastest(bare, b);
      render = fastest(render, r);
    }
    const ratio = { wallSec: median(pairs.map((p) => p.wallSec)), cpuSec: median(pairs.map((p) => p.cpuSec)) };
    rows.push({ mode: blendMode, bare, render, ratio });
    if (modes.length > 1) {
      console.error(
        `${blendMode}: wall ${ratio.wallSec.toFixed(3)}, cpu ${ratio.cpuSec.toFixed(3)} x bare (pairs' cpu ratios ${pairs.map((p) => p.cpuSec.toFixed(3)).join(' ')})`,
      );
    }
  }
  const info = {
    seconds,
    size: '1080x1920',
    encoder: 'libx264 veryfast crf 20',
    captions: 'VIRAL',
    cores: os.cpus().length,
    ffmpeg: processMediaTools().version,
    runs,
    loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
  const ratio = (r: (typeof rows)[0], k: keyof Cost) => r.ratio[k];
  const fastestRatio = (r: (typeof rows)[0], k: keyof Cost) => r.render[k] / r.bare[k];
  if (rows.length === 1) {
    const [row] = rows as [(typeof rows)[0]];
    console.log(
      JSON.stringify(
        {
          short: { ...info, watermark: row.mode },
          bareEncode: {
            wallSec: Number(row.bare.wallSec.toFixed(1)),
            cpuSec: Number(row.bare.cpuSec.toFixed(1)),
            fps: Number((frames / row.bare.wallSec).toFixed(1)),
          },
          render: {
            wallSec: Number(row.render.wallSec.toFixed(1)),
            cpuSec: Number(row.render.cpuSec.toFixed(1)),
            fps: Number((frames / row.render.wallSec).toFixed(1)),
          },
          overhead: {
            wall: `${((ratio(row, 'wallSec') - 1) * 100).toFixed(1)}%`,
            cpu: `${((ratio(row, 'cpuSec') - 1) * 100).toFixed(1)}%`,
          },
          fastestRunsOverhead: {
            wall: `${((fastestRatio(row, 'wallSec') - 1) * 100).toFixed(1)}%`,
            cpu: `${((fastestRatio(row, 'cpuSec') - 1) * 100).toFixed(1)}%`,
          },
        },
        null,
        2,
      ),
    );
  } else {
    console.log(JSON.stringify(info));
    console.log(
      '| blend mode | bare wall s (fastest) | render wall s (fastest) | wall ratio (median of pairs) | bare cpu s | render cpu s | cpu ratio (median of pairs) | fastest runs: wall, cpu ratio |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    for (const r of rows) {
      console.log(
        `| ${r.mode} | ${r.bare.wallSec.toFixed(2)} | ${r.render.wallSec.toFixed(2)} | ${ratio(r, 'wallSec').toFixed(3)} | ${r.bare.cpuSec.toFixed(2)} | ${r.render.cpuSec.toFixed(2)} | ${ratio(r, 'cpuSec').toFixed(3)} | ${fastestRatio(r, 'wallSec').toFixed(3)}, ${fastestRatio(r, 'cpuSec').toFixed(3)} |`,
      );
    }
    for (const k of ['wallSec', 'cpuSec'] as const) {
      const worst = rows.reduce((a, b) => (ratio(b, k) > ratio(a, k) ? b : a));
      console.log(`worst ${k === 'wallSec' ? 'wall' : 'cpu'}: ${worst.mode} at ${ratio(worst, k).toFixed(3)} x bare (goal <= 1.15)`);
    }
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
