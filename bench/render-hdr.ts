// The HDR row of bench:render (issue 34): a 1080x1920 short rendered from a PQ 10-bit HEVC source
// (tone-mapped to BT.709 by colour.ts's chain) against the same render, same crop and captions, from
// an SDR H.264 source of the same picture, in pairs run back to back. The figure is the median of the
// pairs' ratios, wall and CPU (ffmpeg's own -benchmark), with the machine's load beside it. The HDR
// side pays for the 10-bit HEVC decode as well as the tone-mapping: both are what a phone's HDR clip
// costs a render; a third run per pair, the HDR source rendered without tone-mapping, splits them.
//   npm run bench:render -- hdr [seconds=10] [runs=2]
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { isBundledFfmpeg, processMediaTools, toolEnv } from '@shorts/common/media/tools';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { ffprobe } from '../node-agent/src/media/ffmpeg.js';
import { prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';

const run = promisify(execFile);
const tools = processMediaTools();
const FFMPEG = tools.ffmpegPath;
const FPS = 30;
const seconds = Number(process.argv[3] ?? 10);
const runs = Math.max(1, Number(process.argv[4] ?? 2));
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-render-hdr-'));

interface Cost {
  wallSec: number;
  cpuSec: number;
}

/** One ffmpeg run, wall time and the CPU time it reports for all its threads (-benchmark). */
async function timed(args: string[]): Promise<Cost> {
  const withBench = ['-benchmark', ...args.map((a, i) => (args[i - 1] === '-loglevel' ? 'info' : a))];
  const t0 = performance.now();
  const { stderr } = await run(FFMPEG, withBench, { maxBuffer: 64 * 1024 * 1024, env: toolEnv() });
  const wallSec = (performance.now() - t0) / 1000;
  const m = /bench: utime=([\d.]+)s stime=([\d.]+)s/.exec(stderr);
  if (!m) throw new Error(`ffmpeg printed no -benchmark line:\n${stderr.slice(-2000)}`);
  return { wallSec, cpuSec: Number(m[1]) + Number(m[2]) };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

try {
  const picture = `testsrc2=size=1920x1080:rate=${FPS}:duration=${seconds + 2}`;
  const sound = ['-f', 'lavfi', '-i', `sine=frequency=220:duration=${seconds + 2}`, '-c:a', 'aac', '-shortest'];
  const sdr = path.join(dir, 'sdr.mp4');
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', picture, ...sound],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', sdr],
  ]);
  // The same picture coded as a phone's HDR10: 10-bit HEVC tagged BT.2020 PQ, with mastering metadata.
  const hdr = path.join(dir, 'hdr.mp4');
  const x265 =
    'log-level=error:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc' +
    ':master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400';
  await run(FFMPEG, [
    ...['-y', '-v', 'error', '-f', 'lavfi', '-i', picture, ...sound],
    ...['-c:v', 'libx265', '-preset', 'ultrafast', '-x265-params', x265, '-pix_fmt', 'yuv420p10le'],
    ...['-color_primaries', 'bt2020', '-color_trc', 'smpte2084', '-colorspace', 'bt2020nc', '-tag:v', 'hvc1', hdr],
  ]);
  const words = Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({
    text: `word${i % 17}`,
    start: 1 + i * 0.4,
    end: 1 + i * 0.4 + 0.35,
  }));
  /** The render's arguments; `toneMap` false renders the HDR source as if it were SDR (what its decode alone costs). */
  const spec = async (source: string, name: string, toneMap = true): Promise<string[]> => {
    const probed = await ffprobe(source, { ffprobePath: tools.ffprobePath });
    const render: RenderSpec = {
      sourcePath: source,
      startTime: 1,
      endTime: 1 + seconds,
      words,
      output: { width: 1080, height: 1920, path: path.join(dir, `${name}-render.mp4`) },
      reframe: null,
      caption: { style: resolveCaptionStyle('VIRAL', []), maxWordsInPage: 3 },
      encoder: 'libx264',
      legacyFfmpeg: isBundledFfmpeg(FFMPEG),
      workDir: path.join(dir),
      sourceWidth: 1920,
      sourceHeight: 1080,
      ...(toneMap ? { sourceColour: probed.colour } : {}),
    };
    return prepareRender(render);
  };
  const sdrArgs = await spec(sdr, 'sdr');
  const hdrArgs = await spec(hdr, 'hdr');
  const decodeArgs = await spec(hdr, 'hdr-untoned', false);
  if (!hdrArgs.join(' ').includes('tonemap')) throw new Error('the HDR render has no tone-mapping in its graph');
  const fastest = (a: Cost, b: Cost): Cost => ({ wallSec: Math.min(a.wallSec, b.wallSec), cpuSec: Math.min(a.cpuSec, b.cpuSec) });
  const none: Cost = { wallSec: Infinity, cpuSec: Infinity };
  let best = { sdr: none, hdr: none, decode: none };
  const pairs: Cost[] = [];
  const decodeShare: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = await timed(sdrArgs);
    const h = await timed(hdrArgs);
    // The HDR source rendered untoned (wrong colours): how much of the difference is HEVC 10-bit decoding.
    const d = await timed(decodeArgs);
    pairs.push({ wallSec: h.wallSec / s.wallSec, cpuSec: h.cpuSec / s.cpuSec });
    decodeShare.push((d.cpuSec - s.cpuSec) / (h.cpuSec - s.cpuSec));
    best = { sdr: fastest(best.sdr, s), hdr: fastest(best.hdr, h), decode: fastest(best.decode, d) };
    console.error(`pair ${i + 1}: sdr ${s.cpuSec.toFixed(1)} cpu-s, hdr ${h.cpuSec.toFixed(1)}, hdr untoned ${d.cpuSec.toFixed(1)}`);
  }
  const frames = seconds * FPS;
  const row = (c: Cost) => ({
    wallSec: Number(c.wallSec.toFixed(1)),
    cpuSec: Number(c.cpuSec.toFixed(1)),
    cpuMsPerFrame: Number(((c.cpuSec * 1000) / frames).toFixed(1)),
  });
  console.log(
    JSON.stringify(
      {
        short: {
          seconds,
          size: '1080x1920',
          sources: '1920x1080 30 fps testsrc2: H.264 8-bit SDR vs HEVC 10-bit PQ (HDR10)',
          encoder: 'libx264 (the render’s settings)',
          captions: 'VIRAL',
          cores: os.cpus().length,
          ffmpeg: tools.version,
          runs,
          loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
        },
        sdrRender: row(best.sdr),
        hdrRender: row(best.hdr),
        hdrUntonedRender: row(best.decode),
        ratio: {
          wall: Number(median(pairs.map((p) => p.wallSec)).toFixed(3)),
          cpu: Number(median(pairs.map((p) => p.cpuSec)).toFixed(3)),
        },
        pairsCpuRatio: pairs.map((p) => Number(p.cpuSec.toFixed(3))),
        /** Of the HDR render's extra CPU, the share the 10-bit HEVC decode takes (the rest: tone-mapping). */
        decodeShareOfExtraCpu: Number(median(decodeShare).toFixed(2)),
      },
      null,
      2,
    ),
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
