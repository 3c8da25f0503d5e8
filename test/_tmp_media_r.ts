import { prepareRender } from '../node-agent/src/media/render-args.js';
import { runFfmpeg, ffprobe } from '../node-agent/src/media/ffmpeg.js';
import { resolveCaptionStyle } from '../common/src/render/presets.js';
import { FFMPEG, makeTestVideo } from './helpers/media.js';
import sharp from 'sharp';
const dir = '/tmp/fftest/r1';
await makeTestVideo('/tmp/fftest/src1280.mp4', { seconds: 6, width: 1280, height: 720 });
await sharp({ create: { width: 200, height: 100, channels: 4, background: { r: 255, g: 0, b: 0, alpha: 1 } } }).png().toFile('/tmp/fftest/logo.png');
const words = 'Hello there {friend} how are you doing today? I am fine.'.split(' ').map((t, i) => ({ text: t, start: 1 + i * 0.35, end: 1 + i * 0.35 + 0.3 }));
const args = await prepareRender({
  sourcePath: '/tmp/fftest/src1280.mp4', startTime: 1, endTime: 4, words,
  output: { width: 360, height: 640, path: '/tmp/fftest/out.mp4' },
  crop: process.argv[2] === 'crop' ? [{ t: 0, x: 0, y: 0, w: 405, h: 720 }, { t: 1, x: 800, y: 0, w: 405, h: 720 }, { t: 2, x: 100, y: 100, w: 200, h: 356 }] : undefined,
  caption: { style: resolveCaptionStyle(process.argv[3] ?? 'VIRAL', []), maxWordsInPage: 3 },
  watermark: { imagePath: '/tmp/fftest/logo.png', left: '10px', top: '10px', width: '80px', opacity: 0.7, blendMode: (process.argv[4] ?? 'multiply') as any },
  encoder: 'libx264', workDir: dir, sourceWidth: 1280, sourceHeight: 720,
});
console.log(args.join(' '));
const t0 = Date.now(); const prog: number[] = [];
await runFfmpeg(FFMPEG, args, { durationSec: 3, onProgress: (f) => prog.push(f) });
console.log('took', Date.now() - t0, 'ms', prog.map((p) => p.toFixed(2)).join(' '));
console.log(await ffprobe('/tmp/fftest/out.mp4'));
