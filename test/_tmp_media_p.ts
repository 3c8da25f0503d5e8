import { execFile } from 'node:child_process'; import { promisify } from 'node:util';
import { FFMPEG } from './helpers/media.js';
import { buildWatermarkFilter } from '../node-agent/src/media/blend.js';
const run = promisify(execFile);
const size = Number(process.argv[2] ?? 300);
for (const mode of (process.argv[3] ?? 'none,normal,multiply,soft-light,hue,luminosity').split(',') as any[]) {
  const f = mode === 'none' ? { filter: '[0:v]null[out]', singleThreaded: false } : buildWatermarkFilter({ videoLabel: '0:v', imageLabel: '1:v', outLabel: 'out', frameWidth: 1080, frameHeight: 1920, imageWidth: 300, imageHeight: 300, left: '40px', top: '40px', width: `${size}px`, opacity: 0.8, blendMode: mode, frameFormat: 'yuv420p' });
  const t0 = Date.now();
  await run(FFMPEG, ['-v', 'error', ...(f.singleThreaded ? ['-filter_complex_threads', '1'] : []), '-f', 'lavfi', '-i', 'testsrc2=s=1080x1920:r=30:d=2', ...(mode === 'none' ? [] : ['-loop', '1', '-framerate', '1', '-i', '/tmp/fftest/wm300.png']), '-filter_complex', f.filter.replace(/\[out\]$/, ',format=yuv420p[out]') , '-map', '[out]', '-f', 'null', '-'], { timeout: 120000, killSignal: 'SIGKILL' });
  console.log(mode, size, (Date.now() - t0) / 60, 'ms/frame');
}
