// Captions drawn on a transparent strip once per change (caption-canvas.ts) must give the frames
// that drawing them into every frame gives: same pixels, same frames, nothing clipped.
import test from 'ava';
import { agentTools, makeTestVideo } from './helpers/media.js';
import { splitThenFit } from './helpers/reframe-fixtures.js';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isBundledFfmpeg } from '@shorts/common/media/tools';
import { resolveCaptionStyle, type StyleItem } from '@shorts/common/render/presets';
import { changeExpression, planCaptionCanvas } from '../node-agent/src/media/caption-canvas.js';
import type { Reframe } from '@shorts/common/reframe/types';
import { buildAssEvents, buildCaptionPages, type CaptionWord } from '../node-agent/src/media/captions.js';
import { prepareRender } from '../node-agent/src/media/render-args.js';

const run = promisify(execFile);
const FFMPEG = agentTools().ffmpegPath;
const W = 540;
const H = 960;
let dir: string;
let source: string;

test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'caption-canvas-'));
  // A moving, colourful backdrop: every frame differs, so a frame out of step shows.
  source = await makeTestVideo(path.join(dir, 'source.mp4'), {
    pattern: 'testsrc2',
    width: 960,
    height: 540,
    fps: 30,
    seconds: 3.5,
    toneHz: null,
  });
});

test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TEXTS = ['hello', 'wörld', 'ÉÅgy', 'INTERNATIONALIZATION', 'quick', 'brown', 'fox', 'jumps', 'over'];
// A word every 0.33 s, each popping: about half the frames change the caption.
const WORDS: CaptionWord[] = TEXTS.map((text, i) => ({ text, start: 0.3 + i * 0.33, end: 0.3 + i * 0.33 + 0.28 }));

/** The render's picture as raw 4:2:0 frames, and its filter graph. */
async function renderRaw(name: string, preset: string, items: StyleItem[], captionCanvas: boolean, reframe?: Reframe) {
  const out = path.join(dir, `${name}-${captionCanvas ? 'canvas' : 'frames'}.yuv`);
  const args = await prepareRender({
    sourcePath: source,
    startTime: 0.2,
    endTime: 3.3,
    words: WORDS,
    reframe,
    output: { width: W, height: H, path: path.join(dir, 'unused.mp4') },
    caption: { style: resolveCaptionStyle(preset, items), maxWordsInPage: 3 },
    captionCanvas,
    encoder: 'libx264',
    legacyFfmpeg: isBundledFfmpeg(FFMPEG),
    workDir: path.join(dir, `${name}-${captionCanvas}`),
    sourceWidth: 960,
    sourceHeight: 540,
  });
  const graph = args[args.indexOf('-filter_complex') + 1]!;
  await run(FFMPEG, [...args.slice(0, args.indexOf('-map')), '-map', '[vout]', '-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-y', out]);
  return { frames: await readFile(out), graph };
}

const FRAME = W * H * 1.5;

async function compare(name: string, preset: string, items: StyleItem[] = [], reframe?: Reframe) {
  const direct = await renderRaw(name, preset, items, false, reframe);
  const canvas = await renderRaw(name, preset, items, true, reframe);
  let lumaWorst = 0;
  let worstFrame = -1;
  let lumaOffMost = 0; // the most luma samples over 2 levels off in one frame
  let chromaOff = 0;
  let inked = 0;
  const n = direct.frames.length / FRAME;
  for (let f = 0; f < n; f++) {
    let off = 0;
    for (let i = f * FRAME; i < f * FRAME + W * H; i++) {
      const e = Math.abs(direct.frames[i]! - canvas.frames[i]!);
      if (e > lumaWorst) [lumaWorst, worstFrame] = [e, f];
      if (e > 2) off++;
    }
    lumaOffMost = Math.max(lumaOffMost, off);
    for (let i = f * FRAME + W * H; i < (f + 1) * FRAME; i++) if (Math.abs(direct.frames[i]! - canvas.frames[i]!) > 2) chromaOff++;
  }
  // The reference has captions at all: dark outline pixels in the caption area of some frame.
  for (let i = 0; i < W * H; i++) if (direct.frames[Math.floor(n / 2) * FRAME + i]! < 20) inked++;
  return {
    n,
    sameLength: direct.frames.length === canvas.frames.length,
    lumaWorst,
    worstFrame,
    lumaOffMost,
    chromaOffShare: chromaOff / (n * W * H * 0.5),
    inked,
    canvas,
    direct,
  };
}

// Two speakers side by side, then the whole frame: the picture comes from pieces trimmed and
// concatenated, so the frames' clock is concat's.
const SPLIT_THEN_FIT = splitThenFit({
  sourceWidth: 960,
  sourceHeight: 540,
  start: 0.2,
  at: 1.5,
  end: 3.3,
  panels: [
    { x: 400, y: 50, width: 400, height: 356 },
    { x: 30, y: 50, width: 400, height: 356 },
  ],
  tracks: [2, 1],
});

for (const [preset, items, why, reframe] of [
  ['VIRAL', [], 'bottom, translucent shadow, a pop on every word'],
  ['VIRAL', [], 'over a split-then-fit reframe', SPLIT_THEN_FIT],
  ['HORMOZI', [], 'centred'],
  [
    'VIRAL',
    [
      { property: 'top', value: '120px' },
      { property: 'text-transform', value: 'none' },
    ],
    'top, lower case with accents and tails, a word that takes its own line',
  ],
] as Array<[string, StyleItem[], string, Reframe?]>) {
  test(`${preset} (${why}): the caption canvas gives the frames of captions drawn on every frame`, async (t) => {
    const r = await compare(`${preset}-${items.length}-${reframe ? 'reframed' : 'crop'}`, preset, items, reframe);
    t.true(r.canvas.graph.includes(':alpha=1'), 'this style is drawn on a canvas');
    t.false(r.direct.graph.includes(':alpha=1'));
    t.true(r.sameLength && r.n >= 90, `${r.n} frames`);
    t.true(r.inked > 500, `the reference shows captions (${r.inked} outline pixels)`);
    // Luma the same to rounding in every frame: a missed change (a stale pop, a late word) or a
    // clipped glyph would put hundreds of pixels tens of levels off. The few allowed: where two
    // words' translucent shadows overlap, the canvas's alpha comes out a little lighter.
    t.true(
      r.lumaOffMost <= 6 && r.lumaWorst <= 16,
      `up to ${r.lumaOffMost} luma samples a frame over 2 levels off; worst ${r.lumaWorst} levels in frame ${r.worstFrame}`,
    );
    // overlay weighs 4:2:0 chroma on outline edges a little differently from libass's own blend.
    t.true(r.chromaOffShare < 0.001, `${(r.chromaOffShare * 100).toFixed(3)} % of chroma samples over 2 levels off`);
  });
}

test("a word's pop shows in the render as it does in the preview: 100 %, then its two steps, at the frames popSteps puts them", async (t) => {
  // A flat grey backdrop: the word's ink (white fill, black outline) is what differs from it.
  const grey = await makeTestVideo(path.join(dir, 'grey.mp4'), {
    colour: 'gray',
    width: 960,
    height: 540,
    fps: 30,
    seconds: 1.5,
    toneHz: null,
  });
  const out = path.join(dir, 'pop.mp4');
  const style = resolveCaptionStyle('VIRAL', []);
  const args = await prepareRender({
    sourcePath: grey,
    startTime: 0.4,
    endTime: 1.2,
    // Starts 0.1 s into the clip: frame 3 at 30 fps.
    words: [{ text: 'pop', start: 0.5, end: 1.1 }],
    output: { width: W, height: H, path: out },
    caption: { style, maxWordsInPage: 3 },
    encoder: 'libx264',
    workDir: path.join(dir, 'pop'),
    sourceWidth: 960,
    sourceHeight: 540,
  });
  t.true(args[args.indexOf('-filter_complex') + 1]!.includes(':alpha=1'), 'drawn on the caption canvas');
  await run(FFMPEG, args);
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', out, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], {
    encoding: 'buffer',
    maxBuffer: 64 << 20,
  });
  // Each frame's inked width: the columns with a pixel far from the grey.
  const widths: number[] = [];
  for (let f = 0; f * W * H < stdout.length; f++) {
    let left = W;
    let right = -1;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        if (Math.abs(stdout[f * W * H + y * W + x]! - 128) > 60) [left, right] = [Math.min(left, x), Math.max(right, x)];
    widths.push(right >= left ? right - left + 1 : 0);
  }
  const [w0, w1, w2] = [widths[3]!, widths[4]!, widths[6]!];
  t.is(widths[2], 0, 'no caption before the word');
  // 0.1 s: at rest; 0.133 s: the first step (at 0.13); 0.2 s: the second (at 0.19), held.
  t.deepEqual(widths.slice(3, 10), [w0, w1, w1, w2, w2, w2, w2], `inked widths ${widths.slice(3, 10).join(' ')}`);
  t.true(w0 < w1 && w1 < w2, `${w0} < ${w1} < ${w2}`);
  // The steps are the ramp's: half of the 25 % more width, then all of it (the outline does not scale).
  t.true(Math.abs(w2 / w0 - 1.25) < 0.05, `full pop ${(w2 / w0).toFixed(3)}`);
  t.true(Math.abs((w1 - w0) / (w2 - w0) - 0.5) < 0.15, `first step ${((w1 - w0) / (w2 - w0)).toFixed(2)} of the way`);
});

test('styles a straight-alpha canvas cannot show exactly are drawn on every frame', async (t) => {
  for (const [preset, items] of [
    ['KARAOKE', []], // translucent outline
    ['MINIMAL', []], // a box behind the words
    ['GRAPES', []], // blurred shadow wider than the outline
    ['VIRAL', [{ property: 'text-shadow', value: '0 6px 0 rgba(255,0,0,0.6)' }]], // shadow not the outline's colour
    ['VIRAL', [{ property: 'color', value: 'rgba(255,255,255,0.5)' }]], // translucent fill
  ] as Array<[string, StyleItem[]]>) {
    const args = await prepareRender({
      sourcePath: source,
      startTime: 0.2,
      endTime: 1,
      words: WORDS,
      output: { width: W, height: H, path: path.join(dir, 'unused.mp4') },
      caption: { style: resolveCaptionStyle(preset, items), maxWordsInPage: 3 },
      encoder: 'libx264',
      workDir: path.join(dir, `plain-${preset}-${items.length}`),
      sourceWidth: 960,
      sourceHeight: 540,
    });
    const graph = args[args.indexOf('-filter_complex') + 1]!;
    t.true(graph.includes('subtitles='), preset);
    t.false(graph.includes(':alpha=1'), `${preset} ${JSON.stringify(items)} must not use the canvas`);
  }
});

test("the strip is as tall as the page with the most lines: three short words on one line take one line's rows", (t) => {
  const style = resolveCaptionStyle('VIRAL', []);
  const frame = { width: 1080, height: 1920 };
  const strip = (texts: string[]) => {
    const pages = buildCaptionPages(
      texts.map((text, i) => ({ text, start: i * 0.4, end: i * 0.4 + 0.3 })),
      3,
    );
    return planCaptionCanvas(pages, buildAssEvents(pages, style, frame), style, frame)!;
  };
  const one = strip(['go']);
  const three = strip(['go', 'on', 'up']);
  const broken = strip(['go', 'INTERNATIONALIZATION', 'up']);
  t.is(three.height, one.height, 'a page of three short words is one line, as tall as a page of one');
  t.true(broken.height > one.height, `a word that takes its own line makes the page taller: ${broken.height} > ${one.height}`);
});

test("the frames selected for drawing: the first, each event's start, each of its changes, each end", (t) => {
  const expr = changeExpression([
    // a pops in two steps, at 30 and 90 ms; b's past colour fades over its first 0.1 s.
    {
      layer: 1,
      start: 0.5,
      end: 1,
      style: 'Caption',
      text: 'a',
      changes: [
        [0.03, 0.03],
        [0.09, 0.09],
      ],
    },
    { layer: 1, start: 1, end: 1.6, style: 'Caption', text: 'b', changes: [[0, 0.1]] },
  ]);
  // Evaluate the expression at 30 fps the way select does.
  const evaluate = (tNow: number, prev: number) => {
    const js = expr
      .replace(/isnan\(prev_t\)/g, String(Number.isNaN(prev) ? 1 : 0))
      .replace(/gte\(t,([-\d.]+)\)/g, (_m, v) => String(tNow >= Number(v) ? 1 : 0))
      .replace(/lt\(prev_t,([-\d.]+)\)/g, (_m, v) => String(prev < Number(v) ? 1 : 0));
    return Function(`return ${js}`)() > 0;
  };
  const selected: number[] = [];
  for (let i = 0; i < 60; i++) if (evaluate(i / 30, i ? (i - 1) / 30 : NaN)) selected.push(i);
  // 0: the first frame; 15: a appears at 0.5, 16 and 18 show its steps (0.53, 0.59); 30-33: b
  // replaces it at 1.0 and fades until 1.1; 48: b ends at 1.6. 34 and 49 too: a frame stamped
  // exactly on a change may reach libass a millisecond early (it truncates to whole ms), so the frame
  // after it is drawn as well (16 is, as a step's).
  t.deepEqual(selected, [0, 15, 16, 18, 30, 31, 32, 33, 34, 48, 49]);
});

test("a long clip's change expression is one ffmpeg accepts and selects by (its parser takes at most 100 terms in a sum)", async (t) => {
  // 400 words, one every 0.4 s with a 0.12 s pop: 160 s of captions.
  const events = Array.from({ length: 400 }, (_, i) => ({
    layer: 1,
    start: i * 0.4,
    end: (i + 1) * 0.4,
    style: 'Caption' as const,
    text: 'w',
    changes: [[0.03, 0.03] as [number, number], [0.09, 0.09] as [number, number]],
  }));
  const expr = changeExpression(events);
  const { stdout } = await run(
    FFMPEG,
    [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'color=c=gray:s=8x8:r=30:d=2',
      '-vf',
      `select='${expr}'`,
      '-vsync',
      '0',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'gray',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 1 << 20 },
  );
  // Per 0.4 s (12 frames): the word's first frame, the next (the start falls on a frame and may
  // reach libass a millisecond early; it is also the first step's), and the second step's, so 3 of
  // every 12.
  t.is(stdout.length / 64, 15);
});
