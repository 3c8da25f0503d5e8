import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { FfmpegError, ffprobe, runFfmpeg } from '../node-agent/src/media/ffmpeg.js';
import { buildRenderArgs, clipWords, filterArg, prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { FFMPEG, FFPROBE, makeHalvesVideo, makeTestVideo } from './helpers/media.js';
import { splitThenFit } from './helpers/reframe-fixtures.js';
import { grabThumbnail } from '../node-agent/src/media/clips.js';
import { inputGuard } from '@shorts/common/media/input-guard';

const run = promisify(execFile);

const base = (over: Partial<RenderSpec> = {}): RenderSpec => ({
  sourcePath: '/media/source.mp4',
  startTime: 10,
  endTime: 40,
  words: [],
  output: { width: 720, height: 1280, path: '/out/short.mp4' },
  caption: null,
  encoder: 'libx264',
  workDir: '/work/r1',
  sourceWidth: 1920,
  sourceHeight: 1080,
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
  t.deepEqual(
    args.filter((_, i) => args[i - 1] === '-map'),
    ['[vout]', '0:a:0?'],
  );
  t.is(args[args.length - 1], 'file:/out/short.mp4');
  // Centred 9:16 crop of 1920x1080: 606x1080 at x 657, then the output size.
  t.is(
    graphOf(args),
    '[0:v]crop=606:1080:657:0:exact=1,scale=720:1280:flags=bicubic,setsar=1,format=yuv420p[reframed];[reframed]null[vout]',
  );
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

test('watermark: a single-frame second input, whitelisted; none when absent, invisible or transparent', (t) => {
  const wm = {
    imagePath: '/work/r1/logo.png',
    imageWidth: 200,
    imageHeight: 100,
    left: '20px',
    top: '20px',
    width: '25%',
    opacity: 0.8,
    blendMode: 'screen' as const,
  };
  const args = buildRenderArgs(base({ watermark: wm }));
  t.is(args.filter((a) => a === '-i').length, 2);
  const second = args.lastIndexOf('-i');
  t.deepEqual(args.slice(second - 8, second + 2), [
    ...inputGuard('image'),
    '-f',
    'image2',
    '-pattern_type',
    'none',
    '-i',
    'file:/work/r1/logo.png',
  ]);
  t.regex(graphOf(args), /\[1:v\]scale=180:90,/);
  t.is(buildRenderArgs(base({ watermark: { ...wm, left: '100%' } })).filter((a) => a === '-i').length, 1);
  t.is(buildRenderArgs(base({ watermark: { ...wm, opacity: 0 } })).filter((a) => a === '-i').length, 1);
  // Non-separable modes: lookup tables over YUV planes, or geq where the bundled 2018 ffmpeg renders.
  const hue = graphOf(buildRenderArgs(base({ watermark: { ...wm, blendMode: 'hue' } })));
  t.regex(hue, /mergeplanes=0x00102030:yuva420p/);
  t.notRegex(hue, /geq=/);
  t.regex(graphOf(buildRenderArgs(base({ watermark: { ...wm, blendMode: 'hue' }, legacyFfmpeg: true }))), /hstack=inputs=4,geq=/);
  t.throws(() => buildRenderArgs(base({ watermark: { ...wm, imageWidth: undefined } })), { message: /imageWidth/ });
});

/** A path of single-layout keyframes over the whole clip (10..40 s on the source clock). */
const path1 = (...keys: Array<[number, number, number, number, number]>) => ({
  sourceWidth: 1920,
  sourceHeight: 1080,
  keyframes: keys.map(([time, x, y, width, height]) => ({ time, x, y, width, height })),
  segments: [{ start: 10, end: 40, layout: 'single' as const, tracks: [1] }],
});

test('crop path: x/y follow the keyframes on the clip clock; a size change is a cut', (t) => {
  const pan = graphOf(buildRenderArgs(base({ reframe: path1([10, 0, 0, 606, 1080], [12, 1000, 0, 606, 1080]) })));
  t.is(
    pan,
    "[0:v]crop=606:1080:x='0+1000*clip((t-0)/2,0,1)':y='0':exact=1,scale=720:1280:flags=bicubic,setsar=1,format=yuv420p[reframed];[reframed]null[vout]",
  );
  // Boxes of another shape are fitted to 9:16 around their centre and kept inside the source.
  const fitted = graphOf(buildRenderArgs(base({ reframe: path1([10, 1800, -50, 500, 500]) })));
  t.true(fitted.startsWith('[0:v]crop=280:500:1640:0:exact=1,'), fitted);
  // Two keyframes at one time with one size: a step in the expression, no second crop.
  const jump = graphOf(buildRenderArgs(base({ reframe: path1([10, 0, 0, 606, 1080], [15, 0, 0, 606, 1080], [15, 800, 0, 606, 1080]) })));
  t.regex(jump, /^\[0:v\]crop=606:1080:x='0\+800\*gte\(t,5\)':y='0':exact=1,/);
  const cut = graphOf(
    buildRenderArgs(base({ reframe: path1([10, 0, 0, 606, 1080], [13.5, 0, 0, 606, 1080], [13.5, 100, 100, 360, 640]) })),
  );
  t.regex(
    cut,
    /^\[0:v\]split=2\[rf0in\]\[rf1in\];\[rf0in\]trim=start=0:end=3\.5,crop=606:1080:0:0:exact=1,setpts=PTS-STARTPTS,.*\[rf1in\]trim=start=3\.5,crop=360:640:100:100:exact=1,setpts=PTS-STARTPTS,.*concat=n=2:v=1:a=0\[reframed\]/,
  );
  // A size change after the clip ends, or one that would last a few frames, is not a cut.
  const late = graphOf(buildRenderArgs(base({ reframe: path1([10, 0, 0, 606, 1080], [41, 0, 0, 360, 640]) })));
  t.true(late.startsWith('[0:v]crop=606:1080:'));
  const blip = graphOf(buildRenderArgs(base({ reframe: path1([10, 0, 0, 606, 1080], [15, 0, 0, 360, 640], [15.1, 0, 0, 606, 1080]) })));
  t.false(blip.includes('split'), blip);
});

test('split and fit segments: two stacked scaled crops, a fitted frame over a blurred copy, concatenated', (t) => {
  const reframe = splitThenFit({
    sourceWidth: 1920,
    sourceHeight: 1080,
    start: 10,
    at: 20,
    end: 40,
    panels: [
      { x: 100, y: 100, width: 540, height: 480 },
      { x: 1200, y: 120, width: 540, height: 480 },
    ],
    tracks: [1, 2],
  });
  const g = graphOf(buildRenderArgs(base({ reframe })));
  t.regex(
    g,
    /\[rf0in\]trim=start=0:end=10,setpts=PTS-STARTPTS,split=2\[rf0ain\]\[rf0bin\];\[rf0ain\]crop=540:480:100:100,scale=720:640:.*\[rf0bin\]crop=540:480:1200:120,scale=720:640:.*\[rf0a\]\[rf0b\]vstack=inputs=2/,
  );
  t.regex(
    g,
    /\[rf1in\]trim=start=10,setpts=PTS-STARTPTS,crop=1920:1080:0:0,split=2\[rf1bgin\]\[rf1fgin\];.*boxblur.*\[rf1fgin\]scale=720:406:.*overlay=0:437/,
  );
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
    { text: 'before', start: 9, end: 9.5 },
    { text: 'straddles', start: 9.8, end: 10.3 },
    { text: 'inside', start: 12, end: 12.5 },
    { text: 'end', start: 39.5, end: 41 },
    { text: 'after', start: 41, end: 42 },
  ];
  const got = clipWords(words, 10, 40).map((w) => ({ ...w, start: +w.start.toFixed(6), end: +w.end.toFixed(6) }));
  t.deepEqual(got, [
    { text: 'straddles', start: 0, end: 0.3 },
    { text: 'inside', start: 2, end: 2.5 },
    { text: 'end', start: 29.5, end: 30 },
  ]);
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
  await sharp({ create: { width: 120, height: 60, channels: 4, background: { r: 250, g: 40, b: 40, alpha: 0.9 } } })
    .png()
    .toFile(logo);
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
    sourcePath: source,
    startTime: 0.5,
    endTime: 3.5,
    words,
    output: { width: 360, height: 640, path: out },
    caption: { style: resolveCaptionStyle('VIRAL', []), maxWordsInPage: 3 },
    watermark: { imagePath: logo, left: 'calc(100% - 70px)', top: '10px', width: '60px', opacity: 0.8, blendMode: 'multiply' },
    encoder: 'libx264',
    workDir: path.join(dir, 'work'),
    sourceWidth: 1280,
    sourceHeight: 720,
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
  const probe = await run(FFPROBE, ['-v', 'error', '-print_format', 'json', '-show_streams', out]);
  const streams = JSON.parse(probe.stdout).streams as Array<{ codec_type: string; duration: string }>;
  const [v, a] = ['video', 'audio'].map((k) => Number(streams.find((s) => s.codec_type === k)!.duration));
  t.true(Math.abs(v! - a!) < 0.1, `video ${v} s, audio ${a} s`);

  t.true(progress.length >= 1);
  t.true(
    progress.every((p, i) => p >= 0 && p <= 1 && (i === 0 || p >= progress[i - 1]!)),
    'monotone in 0..1',
  );
  t.is(progress[progress.length - 1], 1);

  // The watermark (red, multiplied) sits in the top-right corner; the frame centre does not have it.
  const { stdout: frame } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', '1', '-i', out, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 1 << 22 },
  );
  const px = (x: number, y: number) => [...frame.subarray((y * 360 + x) * 3, (y * 360 + x) * 3 + 3)];
  const [r, g, b] = px(320, 25); // inside the logo box (x 290..349, y 10..39)
  t.true(r! > g! + 40 && r! > b! + 40, `watermark pixel ${[r, g, b]}`);
});

test("the thumbnail is the short's own frame at half a second, captions and logo in, written by the render's ffmpeg", async (t) => {
  const out = path.join(dir, 'thumbed.mp4');
  const thumb = path.join(dir, 'thumbed.jpg');
  const words = ['one', 'two', 'three'].map((text, i) => ({ text, start: 0.3 + i * 0.4, end: 0.6 + i * 0.4 }));
  const spec: RenderSpec = {
    sourcePath: source,
    startTime: 1,
    endTime: 2.5,
    words: words.map((w) => ({ ...w, start: w.start + 1, end: w.end + 1 })),
    output: { width: 360, height: 640, path: out },
    caption: { style: resolveCaptionStyle('VIRAL', []), maxWordsInPage: 3 },
    watermark: { imagePath: logo, left: '10px', top: '10px', width: '60px', opacity: 1, blendMode: 'normal' },
    encoder: 'libx264',
    workDir: path.join(dir, 'work-thumb'),
    sourceWidth: 1280,
    sourceHeight: 720,
    thumbnail: { path: thumb, atSec: 0.5 },
  };
  await runFfmpeg(FFMPEG, await prepareRender(spec), { durationSec: 1.5 });
  const meta = await sharp(thumb).metadata();
  t.is(meta.format, 'jpeg');
  t.deepEqual([meta.width, meta.height], [270, 480]);
  // Against thumbnails taken from the output as they used to be (grabThumbnail, a second ffmpeg):
  // the one at 0.5 s is the same picture (up to one more encode), one at 1.4 s is not.
  const grey = async (file: string) => sharp(file).greyscale().raw().toBuffer();
  const grab = async (at: number) => {
    const file = path.join(dir, `grab-${at}.jpg`);
    await grabThumbnail(FFMPEG, out, file, at);
    return grey(file);
  };
  const mine = await grey(thumb);
  const diff = (a: Buffer, b: Buffer) => a.reduce((s, v, i) => s + Math.abs(v - b[i]!), 0) / a.length;
  const same = diff(mine, await grab(0.5));
  const other = diff(mine, await grab(1.4));
  t.true(same < 3 && other > 3 * same, `mean difference ${same.toFixed(2)} to the frame at 0.5 s, ${other.toFixed(2)} to 1.4 s`);
  t.is((await ffprobe(out)).durationSec > 1.4, true, 'the video goes on past the thumbnail');

  // An output that ends before the thumbnail's time: the render still succeeds, with no picture
  // written (the task then takes one from the output, as a joined render's).
  const late = path.join(dir, 'late.jpg');
  await runFfmpeg(FFMPEG, await prepareRender({ ...spec, thumbnail: { path: late, atSec: 5 } }), { durationSec: 1.5 });
  await t.throwsAsync(readFile(late), { code: 'ENOENT' });
  t.true(Math.abs((await ffprobe(out)).durationSec - 1.5) < 0.1);
});

test('a watermark far larger than the frame is cut to the frame before anything is scaled', async (t) => {
  const out = path.join(dir, 'huge-watermark.mp4');
  const args = await prepareRender({
    sourcePath: source,
    startTime: 0.5,
    endTime: 1.5,
    words: [],
    caption: null,
    output: { width: 180, height: 320, path: out },
    watermark: { imagePath: logo, left: '-200px', top: '-100px', width: '16000px', opacity: 1, blendMode: 'normal' },
    encoder: 'libx264',
    workDir: path.join(dir, 'huge-wm'),
    sourceWidth: 1280,
    sourceHeight: 720,
  });
  const graph = args[args.indexOf('-filter_complex') + 1]!;
  const scales = [...graph.matchAll(/scale=(\d+):(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
  t.true(scales.length > 0);
  for (const [w, h] of scales) t.true(w! <= 180 && h! <= 320, `scale to ${w}x${h} in ${graph}`);
  await runFfmpeg(FFMPEG, args, { durationSec: 1 });
  // The enlarged logo covers the whole frame: its colour is everywhere.
  const { stdout: frame } = await run(
    FFMPEG,
    ['-v', 'error', '-ss', '0.5', '-i', out, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    { encoding: 'buffer', maxBuffer: 1 << 22 },
  );
  for (const [x, y] of [
    [5, 5],
    [90, 160],
    [175, 315],
  ] as const) {
    const o = (y * 180 + x) * 3;
    const [r, g, b] = [frame[o]!, frame[o + 1]!, frame[o + 2]!];
    t.true(r > g + 40 && r > b + 40, `pixel ${x},${y} is the logo's: ${[r, g, b]}`);
  }
});

test('a camera path pans across the source and cuts to a new size', async (t) => {
  // Left half red, right half blue: the crop's position shows in the output colour.
  const halves = path.join(dir, 'halves.mp4');
  await makeHalvesVideo(halves, { seconds: 3, toneHz: null });
  const out = path.join(dir, 'pan.mp4');
  const args = await prepareRender({
    sourcePath: halves,
    startTime: 0,
    endTime: 3,
    words: [],
    caption: null,
    output: { width: 180, height: 320, path: out },
    reframe: {
      sourceWidth: 1280,
      sourceHeight: 720,
      keyframes: [
        { time: 0, x: 0, y: 0, width: 404, height: 720 },
        { time: 1.5, x: 876, y: 0, width: 404, height: 720 },
        { time: 2, x: 876, y: 0, width: 404, height: 720 },
        { time: 2, x: 200, y: 200, width: 180, height: 320 },
      ],
      segments: [{ start: 0, end: 3, layout: 'single', tracks: [1] }],
    },
    encoder: 'libx264',
    workDir: path.join(dir, 'pan'),
    sourceWidth: 1280,
    sourceHeight: 720,
  });
  await runFfmpeg(FFMPEG, args, { durationSec: 3 });
  const centre = async (time: number) => {
    const { stdout } = await run(
      FFMPEG,
      ['-v', 'error', '-ss', String(time), '-i', out, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
      { encoding: 'buffer' },
    );
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

test('split and fit segments render for real: stacked halves, then the whole frame over a blurred copy', async (t) => {
  const halves = path.join(dir, 'halves-split.mp4');
  await makeHalvesVideo(halves, { seconds: 4, toneHz: null });
  const out = path.join(dir, 'split-fit.mp4');
  const args = await prepareRender({
    sourcePath: halves,
    startTime: 0.5,
    endTime: 3.5,
    words: [],
    caption: null,
    output: { width: 180, height: 320, path: out },
    reframe: splitThenFit({
      sourceWidth: 1280,
      sourceHeight: 720,
      start: 0.5,
      at: 2,
      end: 3.5,
      panels: [
        { x: 700, y: 100, width: 540, height: 480 },
        { x: 40, y: 100, width: 540, height: 480 },
      ],
      tracks: [2, 1],
    }),
    encoder: 'libx264',
    workDir: path.join(dir, 'split-fit'),
    sourceWidth: 1280,
    sourceHeight: 720,
  });
  await runFfmpeg(FFMPEG, args, { durationSec: 3 });
  const at = async (time: number, x: number, y: number) => {
    const { stdout } = await run(
      FFMPEG,
      ['-v', 'error', '-ss', String(time), '-i', out, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
      { encoding: 'buffer' },
    );
    const o = (y * 180 + x) * 3;
    return [stdout[o]!, stdout[o + 1]!, stdout[o + 2]!];
  };
  const isRed = ([r, g, b]: number[]) => r! > 180 && g! < 80 && b! < 80;
  const isBlue = ([r, g, b]: number[]) => b! > 180 && r! < 80 && g! < 80;
  t.true(isBlue(await at(0.5, 90, 80)), 'top panel: the right half (blue)');
  t.true(isRed(await at(0.5, 90, 240)), 'bottom panel: the left half (red)');
  // Fit: the 16:9 frame fills the width, 180x102 in the middle, red then blue; above and below it
  // the blurred copy, not black bars.
  t.true(isRed(await at(2.5, 40, 160)) && isBlue(await at(2.5, 140, 160)), 'the whole frame in the middle');
  const [r, g, b] = await at(2.5, 90, 10);
  t.true(r! + g! + b! > 120, `blurred background, not black: ${[r, g, b]}`);
  const info = await ffprobe(out);
  t.deepEqual([info.width, info.height], [180, 320]);
  t.true(Math.abs(info.durationSec - 3) <= 0.1, `duration ${info.durationSec}`);
});

test('a small source falls back to fit without tripping the blur (320x180 into 102x180)', async (t) => {
  const small = await makeTestVideo(path.join(dir, 'small.mp4'), { seconds: 1, width: 320, height: 180 });
  const out = path.join(dir, 'small-fit.mp4');
  const args = await prepareRender({
    sourcePath: small,
    startTime: 0,
    endTime: 1,
    words: [],
    caption: null,
    output: { width: 102, height: 180, path: out },
    reframe: {
      sourceWidth: 320,
      sourceHeight: 180,
      keyframes: [{ time: 0, x: 0, y: 0, width: 320, height: 180 }],
      segments: [{ start: 0, end: 1, layout: 'fit', tracks: [] }],
    },
    encoder: 'libx264',
    workDir: path.join(dir, 'small-fit'),
    sourceWidth: 320,
    sourceHeight: 180,
  });
  await runFfmpeg(FFMPEG, args, { durationSec: 1 });
  const info = await ffprobe(out);
  t.deepEqual([info.width, info.height], [102, 180]);
});

// ---- the executor -----------------------------------------------------------------------------------

test("ffmpeg failures reject with ffmpeg's last stderr lines", async (t) => {
  const err = await t.throwsAsync(
    runFfmpeg(FFMPEG, ['-hide_banner', '-i', path.join(dir, 'missing.mp4'), '-f', 'null', '-'], { durationSec: 1 }),
    { instanceOf: FfmpegError },
  );
  t.is(err.exitCode, 1);
  t.true(err.stderrTail.length > 0 && err.stderrTail.length <= 20);
  t.regex(err.message, /No such file or directory/);
});

test('abort kills ffmpeg promptly', async (t) => {
  const ac = new AbortController();
  const args = [
    '-hide_banner',
    '-nostats',
    '-progress',
    'pipe:1',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=1280x720:r=30:d=600',
    '-c:v',
    'libx264',
    '-preset',
    'veryslow',
    '-f',
    'null',
    '-',
  ];
  const p = runFfmpeg(FFMPEG, args, { durationSec: 600, signal: ac.signal });
  setTimeout(() => ac.abort(new Error('cancelled by test')), 1200);
  const started = Date.now();
  await t.throwsAsync(p, { message: 'cancelled by test' });
  t.true(Date.now() - started < 5000);
  await t.throwsAsync(runFfmpeg(FFMPEG, args, { durationSec: 1, signal: ac.signal }), { message: 'cancelled by test' });
});
