import { execFile } from 'node:child_process'; import { promisify } from 'node:util';
import { FFMPEG } from './helpers/media.js';
import { buildWatermarkFilter } from '../node-agent/src/media/blend.js';
const run = promisify(execFile);
const f = buildWatermarkFilter({ videoLabel: '0:v', imageLabel: '1:v', outLabel: 'out', frameWidth: 1080, frameHeight: 1920, imageWidth: 300, imageHeight: 300, left: '40px', top: '40px', opacity: 0.8, blendMode: 'hue' });
const variants: Record<string, string> = {
  full: f.filter,
  constFinal: f.filter.replace(/,geq=r='[^']*':g='[^']*':b='[^']*':a='[^']*',crop/, ",geq=r='1':g='1':b='1':a='1',crop"),
};
for (const [name, graph] of Object.entries(variants)) for (const threads of ['1', '2']) {
  const t0 = Date.now();
  await run(FFMPEG, ['-v', 'error', '-filter_complex_threads', threads, '-f', 'lavfi', '-i', 'testsrc2=s=1080x1920:r=30:d=2', '-loop', '1', '-framerate', '1', '-i', '/tmp/fftest/wm300.png', '-filter_complex', graph, '-map', '[out]', '-f', 'null', '-']);
  console.log(name, 'threads', threads, ((Date.now() - t0) / 60).toFixed(1), 'ms/frame');
}
console.log(f.filter.length, 'chars');
