import { execFile } from 'node:child_process'; import { promisify } from 'node:util';
import { FFMPEG } from './helpers/media.js';
import { buildWatermarkFilter } from '../node-agent/src/media/blend.js';
const run = promisify(execFile);
const size = Number(process.argv[2] ?? 300);
const ff = process.argv[4] ?? FFMPEG;
for (const mode of (process.argv[3] ?? 'normal,multiply,soft-light,hue,luminosity').split(',') as any[]) {
  const f = buildWatermarkFilter({ videoLabel: '0:v', imageLabel: '1:v', outLabel: 'out', frameWidth: 1080, frameHeight: 1920, imageWidth: 300, imageHeight: 300, left: '40px', top: '40px', width: `${size}px`, opacity: 0.8, blendMode: mode });
  const t0 = Date.now();
  await run(ff, ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=1080x1920:r=30:d=2', '-loop', '1', '-framerate', '1', '-i', '/tmp/fftest/wm300.png', '-filter_complex', f.filter, '-map', '[out]', '-f', 'null', '-'], { timeout: 120000, killSignal: 'SIGKILL' });
  console.log(mode, size, ((Date.now() - t0) / 60).toFixed(1), 'ms/frame');
}
