import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';
import sharp from 'sharp';
import { resolveCaptionStyle } from '../common/src/render/presets.js';
import { FfmpegError, ffprobe, runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { buildRenderArgs, clipWords, filterArg, prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { FFMPEG, makeTestVideo } from './helpers/media.js';
import { inputGuard } from '../common/src/media/input-guard.js';

const run = promisify(execFile);

const base = (over: Partial<RenderSpec> = {}): RenderSpec => ({
  sourcePath: '/media/source.mp4', startTime: 10, endTime: 40, words: [],
  output: { width: 720, height: 1280, path: '/out/short.mp4' },
  caption: null, encoder: 'libx264', workDir: '/work/r1', sourceWidth: 1920, sourceHeight: 1080,
  ...over,
});

const after = (args: string[], flag: string) => args[args.indexOf(flag) + 1];
const graphOf = (args: string[]) => after(args, '-filter_complex')!;

// ---- argument shape ------------------------------------------------------------------------------

test('one invocation: accurate input seek, whitelist, yuv420p, faststart, machine-readable progress', (t) => {
  const args = buildRenderArgs(base());
  const input = args.indexOf('-i');
  t.deepEqual(args.slice(input - 8, input + 2), [...inputGuard('media'), '-ss', '10', '-to', '40', '-i', 'file:/media/source.mp4']);
  t.regex(after(args, '-format_whitelist'), /^mov,mp4/, 'containers only: no playlist demuxer');
  t.is(args.filter((a) => a === '-i').length, 1);
  t.is(after(args, '-pix_fmt'), 'yuv420p');
  t.is(after(args, '-movflags'), '+faststart');
  t.is(after(args, '-progress'), 'pipe:1');
  t.true(args.includes('-nostats'));
  t.is(after(args, '-c:a'), 'aac');
  t.deepEqual(args.filter((_, i) => args[i - 1] === '-map'), ['[vout]', '0:a:0?']);
  t.is(args[args.length - 1], 'file:/out/short.mp4');
  // Centred 9:16 crop of 1920x1080: 606x1080 at x 657, then the output size.
  t.regex(graphOf(args), /^\[0:v\]crop=606:1080:657:0\[cropped\];\[cropped\]scale=720:1280:flags=bicubic,setsar=1,format=yuv420p\[vout\]$/);
});

test('encoders: libx264 veryfast/crf 20, or NVENC p4 with constant quality', (t) => {
  const x264 = buildRenderArgs(base());
  t.is(after(x264, '-c:v'), 'libx264');
  t.is(after(x264, '-preset'), 'veryfast');
  t.is(after(x264, '-crf'), '20');
  const nvenc = buildRenderArgs(base({ encoder: 'h264_nvenc' }));
  t.is(after(nvenc, '-c:v'), 'h264_nvenc');
  t.is(after(nvenc, '-preset'), 'p4');
  t.is(after(nvenc, '-cq'), '21');
  t.is(after(nvenc, '-rc'), 'vbr');
  t.is(after(nvenc, '-b:v'), '0'); // without it NVENC caps the bitrate and -cq is not the target
  t.false(nvenc.includes('-crf'));
});

test('watermark: a looped second input, whitelisted; none when absent, invisible or transparent', (t) => {
  const wm = { imagePath: '/work/r1/logo.png', imageWidth: 200, imageHeight: 100, left: '20px', top: '20px', width: '25%', opacity: 0.8, blendMode: 'screen' as const };
  const args = buildRenderArgs(base({ watermark: wm }));
  t.is(args.filter((a) => a === '-i').length, 2);
  const second = args.lastIndexOf('-i');
  t.deepEqual(args.slice(second - 10, second + 2), [...inputGuard('image'), '-loop', '1', '-framerate', '1', '-pattern_type', 'none', '-i', 'file:/work/r1/logo.png']);
  t.regex(graphOf(args), /\[1:v\]scale=180:90,/);
  t.is(buildRenderArgs(base({ watermark: { ...wm, left: '100%' } })).filter((a) => a === '-i').length, 1);
  t.is(buildRenderArgs(base({ watermark: { ...wm, opacity: 0 } })).filter((a) => a === '-i').length, 1);
  t.regex(graphOf(buildRenderArgs(base({ watermark: { ...wm, blendMode: 'hue' } }))), /hstack=inputs=4:shortest=1,geq=/);
  t.throws(() => buildRenderArgs(base({ watermark: { ...wm, imageWidth: undefined } })), { message: /imageWidth/ });
});

test('crop path: x/y follow the keyframes; a size change is a cut', (t) => {
  const pan = graphOf(buildRenderArgs(base({ crop: [{ t: 0, x: 0, y: 0, w: 606, h: 1080 }, { t: 2, x: 1000, y: 0, w: 606, h: 1080 }] })));
  t.is(pan, "[0:v]crop=606:1080:x='0+1000*clip((t-0)/2,0,1)':y='0'[cropped];[cropped]scale=720:1280:flags=bicubic,setsar=1,format=yuv420p[vout]");
  // Boxes are fitted to 9:16 around their centre and kept inside the source.
  const fitted = graphOf(buildRenderArgs(base({ crop: [{ t: 0, x: 1800, y: -50, w: 500, h: 500 }] })));
  t.true(fitted.startsWith("[0:v]crop=280:500:x='1640':y='0'"));
  const cut = graphOf(buildRenderArgs(base({ crop: [{ t: 0, x: 0, y: 0, w: 606, h: 1080 }, { t: 3.5, x: 100, y: 100, w: 360, h: 640 }] })));
  // A size change after the clip ends, or one that would last a few frames, is not a cut.
  const late = graphOf(buildRenderArgs(base({ crop: [{ t: 0, x: 0, y: 0, w: 606, h: 1080 }, { t: 31, x: 0, y: 0, w: 360, h: 640 }] })));
  t.true(late.startsWith('[0:v]crop=606:1080:'));
  const blip = graphOf(buildRenderArgs(base({ crop: [{ t: 0, x: 0, y: 0, w: 606, h: 1080 }, { t: 5, x: 0, y: 0, w: 360, h: 640 }, { t: 5.1, x: 0, y: 0, w: 606, h: 1080 }] })));
  t.false(blip.includes('split'));
  t.regex(cut, /^\[0:v\]split=2\[cut0in\]\[cut1in\];\[cut0in\]trim=start=0:end=3\.5,crop=606:1080:.*\[cut1in\]trim=start=3\.5,crop=360:640:.*concat=n=2:v=1:a=0\[cropped\]/);
});

test('bad specs are refused before ffmpeg runs', (t) => {
  t.throws(() => buildRenderArgs(base({ output: { width: 721, height: 1280, path: '/o.mp4' } })), { message: /even/ });
  t.throws(() => buildRenderArgs(base({ startTime: 5, endTime: 5 })), { message: /clip range/ });
});

test('filter-graph escaping survives both parsers', (t) => {
  t.is(filterArg('/plain/path.ass'), '/plain/path.ass');
  t.is(filterArg("/a b/it's:x,[y];z\\w"), "/a b/it\\\\\\'s\\\\:x\\,\\[y\\]\\;z\\\\\\\\w");
});

test('caption words are shifted to clip time and clipped to the clip', (t) => {
  const words = [
    { text: 'before', start: 9, end: 9.5 }, { text: 'straddles', start: 9.8, end: 10.3 }, { text: 'inside', start: 12, end: 12.5 },
    { text: 'end', start: 39.5, end: 41 }, { text: 'after', start: 41, end: 42 },
  ];
  const got = clipWords(words, 10, 40).map((w) => ({ ...w, start: +w.start.toFixed(6), end: +w.end.toFixed(6) }));
  t.deepEqual(got, [{ text: 'straddles', start: 0, end: 0.3 }, { text: 'inside', start: 2, end: 2.5 }, { text: 'end', start: 29.5, end: 30 }]);
});

// ---- real renders ---------------------------------------------------------------------------------

let dir: string;
let source: string;
let logo: string;

test.before(async () => {
  // A directory name that breaks unescaped filter graphs and naive ffmpeg inputs: quote, colon,
  // comma, brackets, and a % that image2 would read as a frame-number pattern.
  dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'media-render-')), "it's: a, [weird] 100%d dir");
  await mkdir(dir, { recursive: true });
  source = await makeTestVideo(path.join(dir, 'source.mp4'), { seconds: 4, width: 1280, height: 720 });
  logo = path.join(dir, 'logo.png');
  await sharp({ create: { width: 120, height: 60, channels: 4, background: { r: 250, g: 40, b: 40, alpha: 0.9 } } }).png().toFile(logo);
});

test.after.always(async () => {
  await rm(path.dirname(dir), { recursive: true, force: true });
});

/** Top-level MP4 boxes in file order. */
async function topLevelBoxes(file: string): Promise<string[]> {
  const buf = await readFile(file);
  const boxes: string[] = [];
  for (let off = 0; off + 8 <= buf.length;) {
    let size = buf.readUInt32BE(off);
    boxes.push(buf.toString('latin1', off + 4, off + 8));
    if (size === 1) size = Number(buf.readBigUInt64BE(off + 8));
    if (size === 0) break;
    off += size;
  }
  return boxes;
}

test('end to end: 3 s of a 1280x720 video with audio becomes a 360x640 H.264/AAC faststart short', async (t) => {
  const out = path.join(dir, 'short.mp4');
  const words = ['one', 'two', 'three', 'four', 'five'].map((text, i) => ({ text, start: 0.6 + i * 0.5, end: 1.0 + i * 0.5 }));
  const args = await prepareRender({
    sourcePath: source, startTime: 0.5, endTime: 3.5, words,
    output: { width: 360, height: 640, path: out },
    caption: { style: resolveCaptionStyle('VIRAL', []), maxWordsInPage: 3 },
    watermark: { imagePath: logo, left: 'calc(100% - 70px)', top: '10px', width: '60px', opacity: 0.8, blendMode: 'multiply' },
    encoder: 'libx264', workDir: path.join(dir, 'work'), sourceWidth: 1280, sourceHeight: 720,
  });
  const progress: number[] = [];
  const started = Date.now();
  await runFfmpeg(FFMPEG, args, { durationSec: 3, onProgress: (f) => progress.push(f) });
  t.log(`render took ${Date.now() - started} ms, progress ${progress.map((p) => p.toFixed(2)).join(' ')}`);

  const info = await ffprobe(out);
  t.is(info.width, 360);
  t.is(info.height, 640);
  t.true(Math.abs(info.durationSec - 3) <= 0.1, `duration ${info.durationSec}`);
  t.true(info.hasAudio);
  t.is(info.videoCodec, 'h264');
  t.is(info.audioCodec, 'aac');
  t.is(info.pixelFormat, 'yuv420p');
  const boxes = await topLevelBoxes(out);
  t.true(boxes.includes('moov') && boxes.includes('mdat'));
  t.true(boxes.indexOf('moov') < boxes.indexOf('mdat'), `boxes ${boxes.join(',')}`);

  // Audio and video cover the same span (the seek applied to both).
  const probe = await run(ffprobeInstaller.path, ['-v', 'error', '-print_format', 'json', '-show_streams', out]);
  const streams = JSON.parse(probe.stdout).streams as Array<{ codec_type: string; duration: string }>;
  const [v, a] = ['video', 'audio'].map((k) => Number(streams.find((s) => s.codec_type === k)!.duration));
  t.true(Math.abs(v! - a!) < 0.1, `video ${v} s, audio ${a} s`);

  t.true(progress.length >= 1);
  t.true(progress.every((p, i) => p >= 0 && p <= 1 && (i === 0 || p >= progress[i - 1]!)), 'monotone in 0..1');
  t.is(progress[progress.length - 1], 1);

  // The watermark (red, multiplied) sits in the top-right corner; the frame centre does not have it.
  const { stdout: frame } = await run(FFMPEG, ['-v', 'error', '-ss', '1', '-i', out, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { encoding: 'buffer', maxBuffer: 1 << 22 });
  const px = (x: number, y: number) => [...frame.subarray((y * 360 + x) * 3, (y * 360 + x) * 3 + 3)];
  const [r, g, b] = px(320, 25); // inside the logo box (x 290..349, y 10..39)
  t.true(r! > g! + 40 && r! > b! + 40, `watermark pixel ${[r, g, b]}`);
});

test('a camera path pans across the source and cuts to a new size', async (t) => {
  // Left half red, right half blue: the crop's position shows in the output colour.
  const halves = path.join(dir, 'halves.mp4');
  await run(FFMPEG, ['-v', 'error', '-f', 'lavfi', '-i', 'color=c=red:s=640x720:r=25:d=3', '-f', 'lavfi', '-i', 'color=c=blue:s=640x720:r=25:d=3',
    '-filter_complex', '[0:v][1:v]hstack', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', halves]);
  const out = path.join(dir, 'pan.mp4');
  const args = await prepareRender({
    sourcePath: halves, startTime: 0, endTime: 3, words: [], caption: null,
    output: { width: 180, height: 320, path: out },
    crop: [{ t: 0, x: 0, y: 0, w: 404, h: 720 }, { t: 1.5, x: 876, y: 0, w: 404, h: 720 }, { t: 2, x: 200, y: 200, w: 180, h: 320 }],
    encoder: 'libx264', workDir: path.join(dir, 'pan'), sourceWidth: 1280, sourceHeight: 720,
  });
  await runFfmpeg(FFMPEG, args, { durationSec: 3 });
  const centre = async (time: number) => {
    const { stdout } = await run(FFMPEG, ['-v', 'error', '-ss', String(time), '-i', out, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { encoding: 'buffer' });
    const o = (160 * 180 + 90) * 3;
    return [stdout[o]!, stdout[o + 1]!, stdout[o + 2]!];
  };
  const [start, end, zoomed] = [await centre(0.1), await centre(1.7), await centre(2.5)];
  t.true(start[0]! > 200 && start[2]! < 60, `start is red: ${start}`);
  t.true(end[2]! > 200 && end[0]! < 60, `after the pan it is blue: ${end}`);
  t.true(zoomed[0]! > 200 && zoomed[2]! < 60, `the cut to a box in the left half is red: ${zoomed}`);
  const info = await ffprobe(out);
  t.true(Math.abs(info.durationSec - 3) <= 0.1 && info.width === 180 && info.height === 320);
});

// ---- the executor -----------------------------------------------------------------------------------

test('ffmpeg failures reject with ffmpeg\'s last stderr lines', async (t) => {
  const err = await t.throwsAsync(runFfmpeg(FFMPEG, ['-hide_banner', '-i', path.join(dir, 'missing.mp4'), '-f', 'null', '-'], { durationSec: 1 }), { instanceOf: FfmpegError });
  t.is(err.exitCode, 1);
  t.true(err.stderrTail.length > 0 && err.stderrTail.length <= 20);
  t.regex(err.message, /No such file or directory/);
});

test('abort kills ffmpeg promptly', async (t) => {
  const ac = new AbortController();
  const args = ['-hide_banner', '-nostats', '-progress', 'pipe:1', '-f', 'lavfi', '-i', 'testsrc2=s=1280x720:r=30:d=600', '-c:v', 'libx264', '-preset', 'veryslow', '-f', 'null', '-'];
  const p = runFfmpeg(FFMPEG, args, { durationSec: 600, signal: ac.signal });
  setTimeout(() => ac.abort(new Error('cancelled by test')), 1200);
  const started = Date.now();
  await t.throwsAsync(p, { message: 'cancelled by test' });
  t.true(Date.now() - started < 5000);
  await t.throwsAsync(runFfmpeg(FFMPEG, args, { durationSec: 1, signal: ac.signal }), { message: 'cancelled by test' });
});
