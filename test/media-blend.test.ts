// Watermark blend modes against the W3C Compositing and Blending Level 1 formulas, computed here,
// on pixels read straight out of ffmpeg's filter graph (rgb24, no lossy encode in between).
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { BLEND_MODES, type BlendMode } from '@shorts/common/render/options';
import { buildWatermarkFilter, placeWatermark, type WatermarkFilterOptions } from '../node-agent/src/media/blend.js';
import { NON_SEPARABLE_MODES } from '../node-agent/src/media/non-separable.js';
import { chooseMediaTools, isBundledFfmpeg } from '@shorts/common/media/tools';
import { FFMPEG as BUNDLED_FFMPEG } from './helpers/media.js';
import { needing } from './helpers/requirements.js';

const run = promisify(execFile);
// The ffmpeg an agent on this host renders with, and whether blend.ts must take the old build's path.
const AGENT_FFMPEG = chooseMediaTools({ PATH: process.env.PATH }).ffmpegPath;
const LEGACY = isBundledFfmpeg(AGENT_FFMPEG);
type RGB = [number, number, number];

// ---- reference: https://www.w3.org/TR/compositing-1/ --------------------------------------------

const separable: Partial<Record<BlendMode, (cb: number, cs: number) => number>> = {
  normal: (_cb, cs) => cs,
  multiply: (cb, cs) => cb * cs,
  screen: (cb, cs) => cb + cs - cb * cs,
  overlay: (cb, cs) => hardLight(cs, cb),
  darken: (cb, cs) => Math.min(cb, cs),
  lighten: (cb, cs) => Math.max(cb, cs),
  'color-dodge': (cb, cs) => (cb === 0 ? 0 : cs === 1 ? 1 : Math.min(1, cb / (1 - cs))),
  'color-burn': (cb, cs) => (cb === 1 ? 1 : cs === 0 ? 0 : 1 - Math.min(1, (1 - cb) / cs)),
  'hard-light': (cb, cs) => hardLight(cb, cs),
  'soft-light': (cb, cs) => {
    if (cs <= 0.5) return cb - (1 - 2 * cs) * cb * (1 - cb);
    const d = cb <= 0.25 ? ((16 * cb - 12) * cb + 4) * cb : Math.sqrt(cb);
    return cb + (2 * cs - 1) * (d - cb);
  },
  difference: (cb, cs) => Math.abs(cb - cs),
  exclusion: (cb, cs) => cb + cs - 2 * cb * cs,
};

function hardLight(cb: number, cs: number): number {
  return cs <= 0.5 ? cb * 2 * cs : cb + (2 * cs - 1) - cb * (2 * cs - 1); // multiply / screen
}

const lum = (c: RGB) => 0.3 * c[0] + 0.59 * c[1] + 0.11 * c[2];
const sat = (c: RGB) => Math.max(...c) - Math.min(...c);

function clipColor(c: RGB): RGB {
  const l = lum(c);
  const n = Math.min(...c);
  const x = Math.max(...c);
  let out = c;
  if (n < 0) out = out.map((v) => l + ((v - l) * l) / (l - n)) as RGB;
  if (x > 1) out = out.map((v) => l + ((v - l) * (1 - l)) / (x - l)) as RGB;
  return out;
}

function setLum(c: RGB, l: number): RGB {
  const d = l - lum(c);
  return clipColor(c.map((v) => v + d) as RGB);
}

function setSat(c: RGB, s: number): RGB {
  // The spec's max/mid/min bookkeeping, done on sorted indices.
  const idx = [0, 1, 2].sort((a, b) => c[a]! - c[b]!);
  const [mn, mid, mx] = idx as [number, number, number];
  const out: RGB = [0, 0, 0];
  if (c[mx] > c[mn]) {
    out[mid] = ((c[mid] - c[mn]) * s) / (c[mx] - c[mn]);
    out[mx] = s;
  }
  out[mn] = 0;
  return out;
}

const nonSeparable: Partial<Record<BlendMode, (cb: RGB, cs: RGB) => RGB>> = {
  hue: (cb, cs) => setLum(setSat(cs, sat(cb)), lum(cb)),
  saturation: (cb, cs) => setLum(setSat(cb, sat(cs)), lum(cb)),
  color: (cb, cs) => setLum(cs, lum(cb)),
  luminosity: (cb, cs) => setLum(cb, lum(cs)),
};

/** Source-over of the blended colour onto an opaque backdrop, in 0..255. */
function reference(mode: BlendMode, backdrop: RGB, source: RGB, sourceAlpha: number): RGB {
  const cb = backdrop.map((v) => v / 255) as RGB;
  const cs = source.map((v) => v / 255) as RGB;
  const sep = separable[mode];
  const mixed = sep ? (cb.map((v, i) => sep(v, cs[i]!)) as RGB) : nonSeparable[mode]!(cb, cs);
  return mixed.map((m, i) => Math.round(255 * (sourceAlpha * m + (1 - sourceAlpha) * cb[i]!))) as RGB;
}

// ---- fixture: five backdrop stripes, a two-colour watermark over all of them ---------------------

const STRIPES: RGB[] = [
  [200, 40, 90],
  [30, 180, 240],
  [255, 0, 128],
  [250, 220, 10],
  [90, 90, 90],
];
const FRAME = { w: 80, h: 16 };
const SOURCE_TOP: { rgb: RGB; alpha: number } = { rgb: [60, 200, 120], alpha: 255 };
const SOURCE_BOTTOM: { rgb: RGB; alpha: number } = { rgb: [255, 0, 200], alpha: 191 };
const OPACITY = 0.8;
const FLAT: RGB = [200, 40, 90];

let dir: string;
let bgPng: string;
let flatPng: string;
let wmFlatPng: string;
let wmPng: string;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'media-blend-'));
  bgPng = path.join(dir, 'bg.png');
  wmPng = path.join(dir, 'wm.png');
  const bg = Buffer.alloc(FRAME.w * FRAME.h * 3);
  for (let y = 0; y < FRAME.h; y++) for (let x = 0; x < FRAME.w; x++) bg.set(STRIPES[Math.floor(x / 16)]!, (y * FRAME.w + x) * 3);
  await sharp(bg, { raw: { width: FRAME.w, height: FRAME.h, channels: 3 } })
    .png()
    .toFile(bgPng);
  flatPng = path.join(dir, 'flat.png');
  await sharp({ create: { width: 96, height: 64, channels: 3, background: { r: FLAT[0], g: FLAT[1], b: FLAT[2] } } })
    .png()
    .toFile(flatPng);
  wmFlatPng = path.join(dir, 'wm-flat.png');
  await sharp({ create: { width: 64, height: 32, channels: 4, background: { r: 60, g: 200, b: 120, alpha: 1 } } })
    .png()
    .toFile(wmFlatPng);
  const wm = Buffer.alloc(64 * 8 * 4);
  for (let y = 0; y < 8; y++)
    for (let x = 0; x < 64; x++) {
      const s = y < 4 ? SOURCE_TOP : SOURCE_BOTTOM;
      wm.set([...s.rgb, s.alpha], (y * 64 + x) * 4);
    }
  await sharp(wm, { raw: { width: 64, height: 8, channels: 4 } })
    .png()
    .toFile(wmPng);
});

test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Placement = { left?: string; top?: string; bottom?: string; width?: string };

/** The filter on the small test frame (80x16, a 64x8 image, labels v/i/o); `o` overrides any of it. */
const smallFilter = (o: Partial<WatermarkFilterOptions>) =>
  buildWatermarkFilter({
    videoLabel: 'v',
    imageLabel: 'i',
    outLabel: 'o',
    frameWidth: 80,
    frameHeight: 16,
    imageWidth: 64,
    imageHeight: 8,
    opacity: 1,
    blendMode: 'normal',
    ...o,
  });

/** The render-path filter on a 96x64 4:2:0 frame with the 64x32 flat watermark at (9, 5). */
const renderPathFilter = (mode: BlendMode) =>
  buildWatermarkFilter({
    videoLabel: 'bg',
    imageLabel: '1:v',
    outLabel: 'out',
    frameWidth: 96,
    frameHeight: 64,
    imageWidth: 64,
    imageHeight: 32,
    opacity: OPACITY,
    blendMode: mode,
    left: '9px',
    top: '5px',
    legacyFfmpeg: LEGACY,
  });

/** `-loop 1` over two still images: the backdrop and the watermark. */
const stills = (backdrop: string, watermark: string) => ['-loop', '1', '-t', '0.2', '-i', backdrop, '-i', watermark];

/** Runs a graph whose output is [out] and reads its frames back as rgb24; `oneFrame` stops after the first. */
async function rgbFrames(ffmpeg: string, inputs: string[], graph: string, maxBuffer: number, oneFrame = true): Promise<Buffer> {
  const args = ['-hide_banner', '-loglevel', 'error', ...inputs, '-filter_complex', graph, '-map', '[out]'];
  if (oneFrame) args.push('-frames:v', '1');
  args.push('-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1');
  const { stdout } = await run(ffmpeg, args, { encoding: 'buffer', maxBuffer });
  return stdout;
}

/** One frame of the fragment's output as rgb24, the frame kept in RGB from end to end. */
async function renderFrame(
  mode: BlendMode,
  placement: Placement = { left: '8px', top: '4px' },
  opacity = OPACITY,
  ffmpeg = AGENT_FFMPEG,
): Promise<Buffer> {
  const f = buildWatermarkFilter({
    videoLabel: 'bg',
    imageLabel: '1:v',
    outLabel: 'out',
    frameWidth: FRAME.w,
    frameHeight: FRAME.h,
    imageWidth: 64,
    imageHeight: 8,
    opacity,
    blendMode: mode,
    frameFormat: 'gbrp',
    legacyFfmpeg: isBundledFfmpeg(ffmpeg),
    ...placement,
  });
  return rgbFrames(ffmpeg, stills(bgPng, wmPng), `[0:v]format=gbrp[bg];${f.filter}`, 1 << 20);
}

const pixel = (frame: Buffer, x: number, y: number): RGB => {
  const o = (y * FRAME.w + x) * 3;
  return [frame[o]!, frame[o + 1]!, frame[o + 2]!];
};

const SAMPLE_X = [12, 24, 40, 56, 68]; // one point per stripe, all under the watermark (x 8..71)

for (const mode of BLEND_MODES) {
  test(`blend mode ${mode} matches the W3C formula within 3 levels`, async (t) => {
    const frame = await renderFrame(mode);
    t.is(frame.length, FRAME.w * FRAME.h * 3);
    const misses: string[] = [];
    for (const [y, src] of [
      [5, SOURCE_TOP],
      [10, SOURCE_BOTTOM],
    ] as const) {
      SAMPLE_X.forEach((x, s) => {
        const want = reference(mode, STRIPES[s]!, src.rgb, (src.alpha / 255) * OPACITY);
        const got = pixel(frame, x, y);
        if (got.some((v, i) => Math.abs(v - want[i]!) > 3))
          misses.push(`(${x},${y}) backdrop ${STRIPES[s]} source ${src.rgb}: got ${got}, want ${want}`);
      });
    }
    t.deepEqual(misses, []);
    // Outside the watermark the frame is untouched.
    t.deepEqual(pixel(frame, 2, 1), STRIPES[0]);
    t.deepEqual(pixel(frame, 76, 14), STRIPES[4]);
  });
}

test('modes differ from each other on the same pixels (the test can tell them apart)', async (t) => {
  const seen = new Map<string, BlendMode>();
  for (const mode of ['multiply', 'screen', 'hue', 'luminosity', 'soft-light', 'color-burn'] as BlendMode[]) {
    const frame = await renderFrame(mode);
    const key = SAMPLE_X.map((x) => pixel(frame, x, 5).join(',')).join('|');
    t.false(seen.has(key), `${mode} renders like ${seen.get(key)}`);
    seen.set(key, mode);
  }
});

test('placement: percentages, calc(), bottom, width scaling and clipping at the frame edge', (t) => {
  t.deepEqual(placeWatermark({ left: '10%', top: '25%', width: '50%' }, 80, 16, 64, 8), { x: 8, y: 4, w: 40, h: 5 });
  t.deepEqual(placeWatermark({ left: 'calc(100% - 40px)', bottom: '2px', width: '32px' }, 80, 16, 64, 8), { x: 40, y: 10, w: 32, h: 4 });
  t.deepEqual(placeWatermark({}, 80, 16, 64, 8), { x: 0, y: 0, w: 64, h: 8 });
  t.deepEqual(smallFilter({ left: '-16px', top: '12px', blendMode: 'multiply' }).box, { x: 0, y: 12, w: 48, h: 4 });
  const off = smallFilter({ left: '100%' });
  t.is(off.box, null);
  t.deepEqual(off.inputs, ['v']);
});

test('a watermark hanging off the frame edge is cropped, and the visible part blended', async (t) => {
  const frame = await renderFrame('difference', { left: 'calc(100% - 20px)', bottom: '-4px' });
  // Box x 60..79 (of 60..123), y 12..15 (of 12..19): only the top half of the image (SOURCE_TOP) shows.
  const want = reference('difference', STRIPES[3]!, SOURCE_TOP.rgb, OPACITY);
  const got = pixel(frame, 62, 13);
  t.true(
    got.every((v, i) => Math.abs(v - want[i]!) <= 3),
    `got ${got}, want ${want}`,
  );
  t.deepEqual(pixel(frame, 58, 13), STRIPES[3]);
  t.deepEqual(pixel(frame, 62, 10), STRIPES[3]);
});

test('opacity 1 and 0: full source-over, and nothing at all', async (t) => {
  const full = await renderFrame('normal', { left: '8px', top: '4px' }, 1);
  t.deepEqual(pixel(full, 24, 5), SOURCE_TOP.rgb);
  t.is(smallFilter({ opacity: 0, blendMode: 'multiply' }).box, null);
});

test('on a 4:2:0 frame (the render path) the blend lands in place, close to the reference', async (t) => {
  // The frame is 4:2:0 as in a render, so the backdrop is read back from the output (outside the
  // watermark) and the tolerance is wider; flat colours keep chroma interpolation, which differs
  // between ffmpeg versions, away from the sampled points.
  for (const mode of ['normal', 'multiply', 'soft-light', 'hue', 'saturation', 'color', 'luminosity'] as BlendMode[]) {
    const f = renderPathFilter(mode);
    const frame = await rgbFrames(AGENT_FFMPEG, stills(flatPng, wmFlatPng), `[0:v]format=yuv420p[bg];${f.filter}`, 1 << 20);
    const at = (x: number, y: number): RGB => [frame[(y * 96 + x) * 3]!, frame[(y * 96 + x) * 3 + 1]!, frame[(y * 96 + x) * 3 + 2]!];
    const backdrop = at(90, 60);
    t.true(
      backdrop.every((v, i) => Math.abs(v - FLAT[i]!) <= 4),
      `backdrop ${backdrop}`,
    );
    const want = reference(mode, backdrop, SOURCE_TOP.rgb, OPACITY);
    for (const [x, y] of [
      [20, 12],
      [40, 20],
      [64, 30],
    ]) {
      const got = at(x, y);
      t.true(
        got.every((v, i) => Math.abs(v - want[i]!) <= 6),
        `${mode} at ${x},${y}: got ${got}, want ${want}`,
      );
    }
    // The patch is widened to even edges (x from 8, y from 4): those pixels share chroma with the
    // watermark's edge, but their luma must stay the backdrop's. Box: x 9..72, y 5..36.
    const luma = (c: RGB) => 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
    for (const [x, y] of [
      [8, 20],
      [40, 4],
      [73, 20],
      [40, 37],
    ]) {
      t.true(Math.abs(luma(at(x, y)) - luma(backdrop)) <= 2, `${mode}: ${x},${y} changed to ${at(x, y)}`);
    }
    t.true(Math.abs(luma(at(9, 20)) - luma(want)) <= 6, `${mode}: the first column is blended`);
  }
});

test('in a video every frame is blended with its own backdrop: none skipped, none a frame late', async (t) => {
  // The backdrop swaps between two colours on every frame, so a box pasted from the frame before, or
  // a frame the paste let through unblended, is tens of levels off.
  const colours: RGB[] = [FLAT, [30, 180, 240]];
  const [a, b] = colours as [RGB, RGB];
  const pick = (i: number) => `if(mod(N,2),${b[i]},${a[i]})`;
  const frames = 24;
  for (const mode of ['normal', 'multiply', 'hue', 'luminosity'] as BlendMode[]) {
    const f = renderPathFilter(mode);
    const stdout = await rgbFrames(
      AGENT_FFMPEG,
      ['-f', 'lavfi', '-i', `color=c=black:size=96x64:rate=30:duration=${frames / 30}`, '-i', wmFlatPng],
      `[0:v]format=gbrp,geq=r='${pick(0)}':g='${pick(1)}':b='${pick(2)}',format=yuv420p[bg];${f.filter}`,
      1 << 22,
      false,
    );
    const size = 96 * 64 * 3;
    t.is(stdout.length, frames * size, `${mode}: ${frames} frames`);
    const misses: string[] = [];
    for (let n = 0; n < frames; n++) {
      const at = (x: number, y: number): RGB => [0, 1, 2].map((c) => stdout[n * size + (y * 96 + x) * 3 + c]!) as RGB;
      const backdrop = at(90, 60);
      if (backdrop.some((v, i) => Math.abs(v - colours[n % 2]![i]!) > 4)) misses.push(`frame ${n}: backdrop ${backdrop}`);
      const want = reference(mode, colours[n % 2]!, SOURCE_TOP.rgb, OPACITY);
      const got = at(40, 20);
      if (got.some((v, i) => Math.abs(v - want[i]!) > 6)) misses.push(`frame ${n}: got ${got}, want ${want}`);
    }
    t.deepEqual(misses, [], mode);
  }
});

// ---- the non-separable modes' lookup-table program (non-separable.ts) ------------------------------

/** A seeded generator (mulberry32), so a failure names pixels that the next run has too. */
function bytes(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) & 255;
  };
}

needing({ tools: { 'a system ffmpeg 5+ (the agent renders these modes with it)': !LEGACY } })(
  'non-separable modes against the W3C formulas on 40,000 random pixel pairs',
  async (t) => {
    const N = 200;
    const next = bytes(2026);
    const bg = Buffer.alloc(N * N * 3);
    const wm = Buffer.alloc(N * N * 4);
    for (let i = 0; i < N * N; i++) {
      bg.set([next(), next(), next()], i * 3);
      wm.set([next(), next(), next(), 255], i * 4);
    }
    const bgFile = path.join(dir, 'random-bg.png');
    const wmFile = path.join(dir, 'random-wm.png');
    await sharp(bg, { raw: { width: N, height: N, channels: 3 } })
      .png()
      .toFile(bgFile);
    await sharp(wm, { raw: { width: N, height: N, channels: 4 } })
      .png()
      .toFile(wmFile);

    for (const mode of NON_SEPARABLE_MODES) {
      const f = buildWatermarkFilter({
        videoLabel: 'bg',
        imageLabel: '1:v',
        outLabel: 'out',
        frameWidth: N,
        frameHeight: N,
        imageWidth: N,
        imageHeight: N,
        opacity: 1,
        blendMode: mode,
        frameFormat: 'gbrp',
      });
      const out = await rgbFrames(AGENT_FFMPEG, stills(bgFile, wmFile), `[0:v]format=gbrp[bg];${f.filter}`, 1 << 24);
      t.is(out.length, N * N * 3);
      const errors: number[] = [];
      let worst = { error: -1, text: '' };
      for (let i = 0; i < N * N; i++) {
        const cb = [...bg.subarray(i * 3, i * 3 + 3)] as RGB;
        const cs = [...wm.subarray(i * 4, i * 4 + 3)] as RGB;
        // hue stretches the watermark's colour to the backdrop's saturation, saturation the
        // backdrop's to the watermark's: near grey, SetSat magnifies the rounding of 8-bit YUV (a
        // colour one level from grey becomes a whole hue). Pairs magnified more than 16 times are
        // left out (about 1 % of them).
        const stretched = mode === 'hue' ? cs : mode === 'saturation' ? cb : null;
        if (stretched && Math.max(...stretched) - Math.min(...stretched) < 16) continue;
        const want = reference(mode, cb, cs, 1);
        const got = [...out.subarray(i * 3, i * 3 + 3)];
        const error = Math.max(...got.map((v, k) => Math.abs(v - want[k]!)));
        errors.push(error);
        if (error > worst.error) worst = { error, text: `backdrop ${cb} source ${cs}: got ${got}, want ${want}` };
      }
      errors.sort((a, b) => a - b);
      const mean = errors.reduce((a, b) => a + b, 0) / errors.length;
      const p99 = errors[Math.floor(errors.length * 0.99)]!;
      t.log(`${mode}: ${errors.length} pairs, error in levels mean ${mean.toFixed(2)}, p99 ${p99}, max ${worst.error} (${worst.text})`);
      t.true(mean <= 1.5, `${mode}: mean error ${mean.toFixed(2)} levels`);
      t.true(p99 <= 5, `${mode}: p99 error ${p99} levels`);
      // The largest errors are where ClipColor scales by l / Lum of a saturated blue (Lum 0.11): half
      // a level of luma rounding becomes up to 5 levels there, and more with the stretching above.
      t.true(worst.error <= 16, `${mode}: worst ${worst.text}`);
    }
  },
);

test('the bundled 2018 ffmpeg, which stalls on the table program, renders these modes through geq', async (t) => {
  for (const mode of NON_SEPARABLE_MODES) {
    const frame = await renderFrame(mode, { left: '8px', top: '4px' }, OPACITY, BUNDLED_FFMPEG);
    const want = reference(mode, STRIPES[1]!, SOURCE_TOP.rgb, OPACITY);
    const got = pixel(frame, 24, 5);
    t.true(
      got.every((v, i) => Math.abs(v - want[i]!) <= 3),
      `${mode}: got ${got}, want ${want}`,
    );
  }
  t.regex(smallFilter({ blendMode: 'hue', legacyFfmpeg: true }).filter, /geq=/);
  t.notRegex(smallFilter({ blendMode: 'hue' }).filter, /geq=/);
});

test('a 5 s 1080x1920 render graph reaches its end in every non-separable mode', async (t) => {
  // The table program once stalled at end of stream (the 2018 build still does): a render that
  // never ends would hold an agent slot until its time limit.
  const logo = path.join(dir, 'logo.png');
  await sharp({ create: { width: 400, height: 200, channels: 4, background: { r: 240, g: 40, b: 90, alpha: 0.9 } } })
    .png()
    .toFile(logo);
  const cases: Array<[string, boolean, string]> = [[AGENT_FFMPEG, LEGACY, '300px']];
  // The old build through geq, with a small watermark: geq is slow.
  if (!LEGACY) cases.push([BUNDLED_FFMPEG, true, '40px']);
  for (const [ffmpeg, legacyFfmpeg, width] of cases) {
    for (const mode of NON_SEPARABLE_MODES) {
      const f = buildWatermarkFilter({
        videoLabel: 'v',
        imageLabel: '1:v',
        outLabel: 'out',
        frameWidth: 1080,
        frameHeight: 1920,
        imageWidth: 400,
        imageHeight: 200,
        opacity: 0.8,
        blendMode: mode,
        left: '40px',
        top: '40px',
        width,
        legacyFfmpeg,
      });
      const { stderr } = await run(
        ffmpeg,
        [
          '-hide_banner',
          '-loglevel',
          'error',
          '-nostats',
          '-progress',
          'pipe:2',
          '-f',
          'lavfi',
          '-i',
          'testsrc2=size=1080x1920:rate=30:duration=5',
          '-i',
          logo,
          '-filter_complex',
          `[0:v]format=yuv420p[v];${f.filter}`,
          '-map',
          '[out]',
          '-f',
          'null',
          '-',
        ],
        { timeout: 90_000, killSignal: 'SIGKILL', maxBuffer: 1 << 22 },
      );
      const frames = [...stderr.matchAll(/^frame=(\d+)/gm)].map((m) => Number(m[1])).pop();
      t.is(frames, 150, `${mode} with ${path.basename(path.dirname(ffmpeg))}/ffmpeg`);
    }
  }
});
