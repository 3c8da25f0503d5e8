// A 60 s 1080x1920 short: our render (crop, scale, captions, watermark, encode in one ffmpeg) against
// a bare ffmpeg encode of the same crop with the same encoder settings, in the same run.
//   npm run bench:render -- [seconds=60] [blendMode=normal]
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { FFMPEG } from '../test/helpers/media.js';
import { prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { centredPortraitCrop } from '../node-agent/src/media/clips.js';
import { resolveCaptionStyle } from '../common/src/render/presets.js';
import type { BlendMode } from '../common/src/render/options.js';

const run = promisify(execFile);
const seconds = Number(process.argv[2] ?? 60);
const blendMode = (process.argv[3] ?? 'normal') as BlendMode;
const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-render-'));

try {
  const source = path.join(dir, 'source.mp4');
  await run(FFMPEG, ['-y', '-v', 'error', '-f', 'lavfi', '-i', `testsrc2=size=1920x1080:rate=30:duration=${seconds + 2}`,
    '-f', 'lavfi', '-i', `sine=frequency=220:duration=${seconds + 2}`, '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', source]);
  const logo = path.join(dir, 'logo.png');
  await writeFile(logo, await sharp({ create: { width: 400, height: 200, channels: 4, background: { r: 240, g: 40, b: 90, alpha: 0.9 } } }).png().toBuffer());
  const words = Array.from({ length: Math.floor(seconds / 0.4) }, (_, i) => ({ text: `word${i % 17}`, start: 1 + i * 0.4, end: 1 + i * 0.4 + 0.35 }));

  const c = centredPortraitCrop(1920, 1080);
  const bareOut = path.join(dir, 'bare.mp4');
  const bareArgs = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-ss', '1', '-to', String(1 + seconds), '-i', source,
    '-vf', `crop=${c.w}:${c.h}:${c.x}:${c.y},scale=1080:1920:flags=bicubic,setsar=1,format=yuv420p`,
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-b:a', '160k', '-movflags', '+faststart', bareOut];
  let t0 = performance.now();
  await run(FFMPEG, bareArgs, { maxBuffer: 16 * 1024 * 1024 });
  const bareSec = (performance.now() - t0) / 1000;

  const spec: RenderSpec = {
    sourcePath: source, startTime: 1, endTime: 1 + seconds, words,
    output: { width: 1080, height: 1920, path: path.join(dir, 'render.mp4') },
    caption: { style: resolveCaptionStyle('VIRAL', []), maxWordsInPage: 3 },
    watermark: { imagePath: logo, left: '40px', top: '40px', width: '300px', opacity: 0.8, blendMode },
    encoder: 'libx264', workDir: dir, sourceWidth: 1920, sourceHeight: 1080,
  };
  const args = await prepareRender(spec);
  t0 = performance.now();
  await runFfmpeg(FFMPEG, args, { durationSec: seconds });
  const renderSec = (performance.now() - t0) / 1000;
  const frames = seconds * 30;
  console.log(JSON.stringify({
    short: { seconds, size: '1080x1920', encoder: 'libx264 veryfast crf 20', captions: 'VIRAL', watermark: blendMode, cores: os.cpus().length },
    bareEncode: { wallSec: Number(bareSec.toFixed(1)), fps: Number((frames / bareSec).toFixed(1)) },
    render: { wallSec: Number(renderSec.toFixed(1)), fps: Number((frames / renderSec).toFixed(1)) },
    overhead: `${(((renderSec / bareSec) - 1) * 100).toFixed(1)}%`,
  }, null, 2));
} finally {
  await rm(dir, { recursive: true, force: true });
}
