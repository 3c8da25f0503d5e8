import { execFile } from 'node:child_process'; import { promisify } from 'node:util';
import sharp from 'sharp';
import { FFMPEG } from './helpers/media.js';
import { buildWatermarkFilter } from '../node-agent/src/media/blend.js';
const run = promisify(execFile);
await sharp({ create: { width: 300, height: 300, channels: 4, background: { r: 200, g: 30, b: 90, alpha: 0.9 } } }).png().toFile('/tmp/fftest/wm300.png');
for (const mode of ['none', 'normal', 'multiply', 'soft-light', 'hue', 'luminosity'] as const) {
  const f = mode === 'none' ? { filter: '[0:v]null[out]', singleThreaded: false } : buildWatermarkFilter({ videoLabel: '0:v', imageLabel: '1:v', outLabel: 'out', frameWidth: 1080, frameHeight: 1920, imageWidth: 300, imageHeight: 300, left: '40px', top: '40px', opacity: 0.8, blendMode: mode });
  const t0 = Date.now();
  await run(FFMPEG, ['-v', 'error', ...(f.singleThreaded ? ['-filter_complex_threads', '1'] : []), '-f', 'lavfi', '-i', 'testsrc2=s=1080x1920:r=30:d=5', '-loop', '1', '-framerate', '1', '-i', '/tmp/fftest/wm300.png', '-filter_complex', f.filter.replace(/\[out\]$/, ',format=yuv420p[out]') , '-map', '[out]', '-f', 'null', '-']);
  console.log(mode, (Date.now() - t0) / 150, 'ms/frame');
}
