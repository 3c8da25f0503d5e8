import { prepareRender } from '../node-agent/src/media/render-args.js';
import { runFfmpeg, ffprobe } from '../node-agent/src/media/ffmpeg.js';
import { resolveCaptionStyle } from '../common/src/render/presets.js';
for (const mode of ['normal', 'soft-light', 'hue', 'luminosity'] as const) {
  const args = await prepareRender({
    sourcePath: '/tmp/fftest/src1280.mp4', startTime: 1, endTime: 3, words: [{ text: 'hello', start: 1.2, end: 2 }],
    output: { width: 360, height: 640, path: `/tmp/fftest/new-${mode}.mp4` },
    crop: [{ t: 0, x: 0, y: 0, w: 405, h: 720 }, { t: 1, x: 800, y: 0, w: 200, h: 356 }],
    caption: { style: resolveCaptionStyle('MINIMAL', []), maxWordsInPage: 3 },
    watermark: { imagePath: '/tmp/fftest/logo.png', left: '10px', top: '10px', width: '80px', opacity: 0.7, blendMode: mode },
    encoder: 'libx264', workDir: '/tmp/fftest/new', sourceWidth: 1280, sourceHeight: 720,
  });
  try { await runFfmpeg('/usr/bin/ffmpeg', args, { durationSec: 2 }); const i = await ffprobe(`/tmp/fftest/new-${mode}.mp4`); console.log(mode, 'ok', i.durationSec, i.width, i.height); }
  catch (e) { console.log(mode, 'FAIL', (e as Error).message.slice(0, 800)); }
}
