// Where the source was edited: hard cuts (to the exact frame) and dissolves or fades (as a span), found
// in the frames the analysis samples anyway, plus per shot what of the picture is content (black
// borders baked in) and where it moves. The camera plans each shot on its own: no track, no smoothing
// and no pan crosses a shot boundary, and a framing change a cut causes lands on the cut's first frame.
//
// Two signals, both from the one ffmpeg that samples the frames:
//  - every sampled frame (8 a second) as a 32x18 thumbnail: a cut is a large change between two
//    samples that persists (a flash returns to what it was), a dissolve a run of moderate changes whose
//    middle is a blend of its two ends;
//  - ffmpeg's scene score of EVERY decoded frame (frames.ts): the cut is the frame where it spikes,
//    between the two samples that saw the change.
import { MOTION_GRID_COLS, MOTION_GRID_ROWS, type Box, type DetectedShot } from '@shorts/common/reframe/types';
import type { RgbImage } from './image.js';

const THUMB_W = 32;
const THUMB_H = 18;
/** Change between two samples (mean absolute difference of their thumbnails, 0-1) that can be a cut. */
const CUT_MIN_CHANGE = 0.07;
/** ...and that stands this many times above the shot's usual change between samples. */
const CUT_OVER_BASELINE = 4;
/** A cut's new picture persists: the sample after it differs from the one before it at least this
 *  share of the cut's own change (a flash, a camera flash or a white frame, comes back). */
const CUT_PERSISTS = 0.6;
/** The cut frame's scene score (ffmpeg, 0-1) must stand this far above every other frame between the
 *  two samples; otherwise the change was gradual (a dissolve, a fast pan). */
const SPIKE_OVER_REST = 3;
const SPIKE_MIN_SCORE = 0.03;
/** The frame beside the spike that takes at least this share of its score is part of the cut. */
const PAIR_SHARE = 0.2;
/** Out of a still picture, frames this close to the spike (seconds, either side) are the cut's own: a
 *  flash frame the editor left at the join and a new picture that changes fast in its first frames
 *  raise the score on three frames in a row at 50-60 fps (at 24-30 fps, the frame either side). */
const SPIKE_SPREAD_SEC = 0.05;
/** Between two cuts the picture settles: some step between samples falls under this. A whip pan
 *  changes every sample until it lands, and is one cut (on its first frame), not one per sample. */
const SETTLED_CHANGE = 0.5 * CUT_MIN_CHANGE;
/** A dissolve: a run of samples each changing at least this much, and this many times the usual
 *  change around them, between 0.375 s and 3 s long... */
const DISSOLVE_STEP_MIN = 0.01;
const DISSOLVE_OVER_BASELINE = 1.6;
const DISSOLVE_MAX_SEC = 3;
/** ...whose ends differ at least this much, and whose middle is a blend of its ends within this share
 *  of that difference (a pan or someone walking is not a blend of where it started and ended). */
const DISSOLVE_MIN_CHANGE = 0.08;
const DISSOLVE_BLEND_RESIDUAL = 0.5;
/** A fade through black: the run's darkest sample under this mean level splits it into two blends. */
const BLACK_LEVEL = 0.08;
/** Rows or columns this dark everywhere, in every sample of a shot, are a baked-in border. */
const BORDER_MEAN = 20 / 255;
const BORDER_MAX = 48 / 255;
/** A border thinner than this share of the frame is a dark edge, not letterboxing. */
const BORDER_MIN_FRACTION = 0.03;
/** Shots shorter than this are merged into a neighbour: nothing can be framed in two frames. */
const MIN_SHOT_SEC = 0.2;

/** One decoded frame's scene score, as ffmpeg's select filter computes it (frames.ts). */
export interface SceneScore {
  time: number;
  score: number;
}

interface Sample {
  time: number;
  thumb: Float32Array;
  /** Mean level of the thumbnail, 0-1. */
  level: number;
  /** Per row and per column of the analysis frame: mean and max luma (0-1), every other sample. */
  rows?: { mean: Float32Array; max: Float32Array };
  cols?: { mean: Float32Array; max: Float32Array };
}

/** A boundary between sample `index - 1` and sample `index`. */
export interface ShotBoundary {
  index: number;
  /** When the framing changes: the cut's first frame, or a dissolve's middle. */
  time: number;
  transition: 'cut' | 'dissolve';
  /** The dissolve's span; for a cut both are `time`. */
  spanStart: number;
  spanEnd: number;
}

/**
 * Collects what shot detection needs from each sampled frame, in order, as the frames stream past;
 * `changedFromPrevious` says whether a frame may start a new shot, so face detection can run on both
 * sides of it instead of interpolating faces across it.
 */
export class ShotTracker {
  private readonly samples: Sample[] = [];
  private width = 0;
  private height = 0;

  /** Adds the next sampled frame; true when it differs from the previous one enough to be a cut. */
  add(time: number, image: RgbImage): boolean {
    this.width = image.width;
    this.height = image.height;
    const thumb = thumbnail(image);
    const sample: Sample = { time, thumb, level: mean(thumb) };
    if (this.samples.length % 2 === 0) Object.assign(sample, lineStats(image));
    const prev = this.samples.at(-1);
    this.samples.push(sample);
    return !!prev && difference(prev.thumb, thumb) >= CUT_MIN_CHANGE;
  }

  /** The boundaries among the samples so far, cuts placed on the frame `scores` say they spike on. */
  boundaries(scores: SceneScore[]): ShotBoundary[] {
    const s = this.samples;
    const steps = s.map((x, i) => (i === 0 ? 0 : difference(s[i - 1]!.thumb, x.thumb)));
    const found: ShotBoundary[] = [];
    for (let i = 1; i < s.length; i++) {
      const step = steps[i]!;
      if (step < CUT_MIN_CHANGE || step < CUT_OVER_BASELINE * baseline(steps, i)) continue;
      // A flash comes back: the sample after the change still differs from the one before it, and the
      // changed sample differs from the one before the step (not the end of a flash).
      const after = s[i + 1];
      if (after && difference(s[i - 1]!.thumb, after.thumb) < CUT_PERSISTS * step) continue;
      if (i >= 2 && difference(s[i - 2]!.thumb, s[i]!.thumb) < CUT_PERSISTS * step) continue;
      const frame = spikeBetween(scores, s[i - 1]!.time, s[i]!.time, steps[i - 1]! < SETTLED_CHANGE);
      if (frame === undefined) continue; // gradual: a dissolve or a pan
      const previous = found.at(-1);
      if (previous && steps.slice(previous.index + 1, i).every((x) => x >= SETTLED_CHANGE)) continue; // still the same whip
      const time = frameStart(frame);
      found.push({ index: i, time, transition: 'cut', spanStart: time, spanEnd: time });
    }
    found.push(...this.dissolves(steps, found));
    return found.sort((a, b) => a.index - b.index).filter((b, k, all) => k === 0 || b.index !== all[k - 1]!.index);
  }

  /** Runs of raised change whose samples blend their two ends, in order (or a fade through black). */
  private dissolves(steps: number[], cuts: ShotBoundary[]): ShotBoundary[] {
    const s = this.samples;
    const isCut = new Set(cuts.map((c) => c.index));
    const raised = steps.map(
      (step, i) => i > 0 && !isCut.has(i) && step >= Math.max(DISSOLVE_STEP_MIN, DISSOLVE_OVER_BASELINE * baseline(steps, i, 24)),
    );
    const out: ShotBoundary[] = [];
    for (let i = 1; i < s.length; i++) {
      if (!raised[i]) continue;
      let j = i;
      while (j + 1 < s.length && raised[j + 1]) j++;
      const first = i - 1;
      const last = j;
      i = j;
      if (last - first < 3 || s[last]!.time - s[first]!.time > DISSOLVE_MAX_SEC + 1e-6) continue;
      // Changes that start on a cut's first sample are the new picture settling (a random pattern,
      // a camera finding its exposure): a dissolve starts from a shot already on screen.
      if (isCut.has(first)) continue;
      if (difference(s[first]!.thumb, s[last]!.thumb) < DISSOLVE_MIN_CHANGE) continue;
      // A fade out and in: two blends meeting at the darkest sample.
      let darkest = first + 1;
      for (let k = first + 1; k < last; k++) if (s[k]!.level < s[darkest]!.level) darkest = k;
      const throughBlack = s[darkest]!.level < BLACK_LEVEL && s[first]!.level > 1.5 * BLACK_LEVEL && s[last]!.level > 1.5 * BLACK_LEVEL;
      const blends = throughBlack ? isBlend(s, first, darkest) && isBlend(s, darkest, last) : isBlend(s, first, last);
      if (!blends) continue;
      // The framing changes at the middle of the span (for a fade, about where it is black).
      const time = (s[first]!.time + s[last]!.time) / 2;
      const index = s.findIndex((x) => x.time >= time - 1e-6);
      out.push({ index, time: r3(time), transition: 'dissolve', spanStart: r3(s[first]!.time), spanEnd: r3(s[last]!.time) });
    }
    return out;
  }

  /** The shots of [start, end) split at `boundaries`, each with its content box and motion grid (in
   *  the sampled frame's pixels scaled by `toSource`). */
  shots(
    start: number,
    end: number,
    boundaries: ShotBoundary[],
    toSource: { x: number; y: number },
  ): Array<DetectedShot & { firstSample: number }> {
    const kept: ShotBoundary[] = [];
    for (const b of boundaries) {
      const from = kept.at(-1)?.time ?? start;
      if (b.time - from >= MIN_SHOT_SEC && end - b.time >= MIN_SHOT_SEC) kept.push(b);
    }
    const edges = [{ index: 0, time: start, transition: 'start' as const, spanStart: start, spanEnd: start }, ...kept];
    return edges.map((b, k) => {
      const next = edges[k + 1];
      const samples = this.samples.slice(b.index, next ? next.index : this.samples.length);
      const shot: DetectedShot & { firstSample: number } = {
        start: r3(b.transition === 'dissolve' ? b.spanStart : b.time),
        end: r3(next ? (next.transition === 'dissolve' ? next.spanStart : next.time) : end),
        transition: b.transition,
        content: scaleBox(contentBox(samples, this.width, this.height), toSource),
        motion: motionGrid(samples),
        firstSample: b.index,
      };
      if (b.transition === 'dissolve') shot.transitionEnd = r3(b.spanEnd);
      return shot;
    });
  }
}

// ---- the signals ----------------------------------------------------------------------------------

/** A 32x18 RGB thumbnail (area average over whole cells), values 0-1. */
function thumbnail(img: RgbImage): Float32Array {
  const out = new Float32Array(THUMB_W * THUMB_H * 3);
  const counts = new Float32Array(THUMB_W * THUMB_H);
  const { width: W, height: H, data } = img;
  // Every second pixel of every second row: a quarter of the reads, the same averages.
  for (let y = 0; y < H; y += 2) {
    const ty = Math.min(THUMB_H - 1, Math.floor((y * THUMB_H) / H));
    for (let x = 0; x < W; x += 2) {
      const cell = ty * THUMB_W + Math.min(THUMB_W - 1, Math.floor((x * THUMB_W) / W));
      const p = (y * W + x) * 3;
      out[cell * 3] += data[p]!;
      out[cell * 3 + 1] += data[p + 1]!;
      out[cell * 3 + 2] += data[p + 2]!;
      counts[cell]++;
    }
  }
  for (let c = 0; c < counts.length; c++) {
    const n = Math.max(1, counts[c]!) * 255;
    out[c * 3] /= n;
    out[c * 3 + 1] /= n;
    out[c * 3 + 2] /= n;
  }
  return out;
}

function lineStats(img: RgbImage): { rows: { mean: Float32Array; max: Float32Array }; cols: { mean: Float32Array; max: Float32Array } } {
  const { width: W, height: H, data } = img;
  const rows = { mean: new Float32Array(H), max: new Float32Array(H) };
  const cols = { mean: new Float32Array(W), max: new Float32Array(W) };
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const p = (y * W + x) * 3;
      const luma = (0.299 * data[p]! + 0.587 * data[p + 1]! + 0.114 * data[p + 2]!) / 255;
      rows.mean[y] += luma;
      cols.mean[x] += luma;
      if (luma > rows.max[y]!) rows.max[y] = luma;
      if (luma > cols.max[x]!) cols.max[x] = luma;
    }
  }
  for (let y = 0; y < H; y++) rows.mean[y] /= W;
  for (let x = 0; x < W; x++) cols.mean[x] /= H;
  return { rows, cols };
}

function difference(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

const mean = (a: Float32Array) => a.reduce((s, v) => s + v, 0) / Math.max(1, a.length);

/** The usual change between samples around `i` (its own step and its neighbours' left out). */
function baseline(steps: number[], i: number, reach = 16): number {
  const near: number[] = [];
  for (let k = Math.max(1, i - reach); k <= Math.min(steps.length - 1, i + reach); k++) if (Math.abs(k - i) > 1) near.push(steps[k]!);
  return median(near);
}

/** Whether the samples strictly between `a` and `b` are each a mix of the two ends, moving from the
 *  first towards the second (a flash or a pan is not). */
function isBlend(s: Sample[], a: number, b: number): boolean {
  const A = s[a]!.thumb;
  const B = s[b]!.thumb;
  const span = difference(A, B);
  if (span <= 0) return false;
  const alphas: number[] = [];
  for (let k = a + 1; k < b; k++) {
    const M = s[k]!.thumb;
    // Least squares alpha for M = A + alpha (B - A), then the mean residual.
    let num = 0;
    let den = 0;
    for (let i = 0; i < M.length; i++) {
      num += (M[i]! - A[i]!) * (B[i]! - A[i]!);
      den += (B[i]! - A[i]!) ** 2;
    }
    const alpha = Math.min(1, Math.max(0, num / Math.max(1e-12, den)));
    let residual = 0;
    for (let i = 0; i < M.length; i++) residual += Math.abs(M[i]! - (A[i]! + alpha * (B[i]! - A[i]!)));
    if (residual / M.length > DISSOLVE_BLEND_RESIDUAL * span) return false;
    alphas.push(alpha);
  }
  if (!alphas.length) return true;
  const ordered = alphas.every((x, k) => k === 0 || x >= alphas[k - 1]! - 0.15);
  return ordered && alphas[0]! <= 0.5 && alphas.at(-1)! >= 0.5;
}

/** The frame between two sample times whose scene score spikes above all others there, if one does.
 *  A cut may take two frames (a blended frame at the join of a frame-rate conversion, or a new shot
 *  whose picture settles a frame late): the spike is then the pair, compared with the frames around
 *  it, and the cut is the pair's first frame. Out of a still picture (`fromStill`) it may take three
 *  (SPIKE_SPREAD_SEC); a shaking camera raises the frames beside its jolts too, so not out of a moving
 *  one. A dissolve or a pan raises every frame in the span. */
function spikeBetween(scores: SceneScore[], from: number, to: number, fromStill: boolean): SceneScore | undefined {
  // ffmpeg's fps filter hands each sample tick the frame its timestamp rounds to: the frame shown may
  // be up to half a sampling step later or earlier than the tick it is labelled with. A cut just after
  // a tick is seen in that tick's sample; looking no further than a source frame beyond it missed the
  // cut's spike, and cuts to slides went undetected.
  const reach = (to - from) / 2;
  const within = scores.filter((f) => f.time > from - reach + 0.005 && f.time <= to + reach + 0.005).sort((a, b) => a.time - b.time);
  if (!within.length) return undefined;
  let k = 0;
  within.forEach((f, i) => {
    if (f.score > within[k]!.score) k = i;
  });
  const top = within[k]!;
  if (top.score < SPIKE_MIN_SCORE) return undefined;
  const before = within[k - 1];
  const after = within[k + 1];
  const partner = (before?.score ?? 0) >= (after?.score ?? 0) ? before : after;
  const paired = partner !== undefined && partner.score >= PAIR_SHARE * top.score;
  const ownFrame = (f: SceneScore, i: number) =>
    i === k || (paired && f === partner) || (fromStill && Math.abs(f.time - top.time) <= SPIKE_SPREAD_SEC + 0.001);
  const rest = within.filter((f, i) => !ownFrame(f, i)).reduce((m, f) => Math.max(m, f.score), 0);
  if (top.score < SPIKE_OVER_REST * rest) return undefined;
  return paired && partner.time < top.time ? partner : top;
}

/** A frame's start as the shot boundary: a hair before its timestamp, so that rounding to
 *  milliseconds anywhere downstream still puts this frame, not the one before, on the new side. */
const frameStart = (f: SceneScore) => Math.floor((f.time - 0.0005) * 1000) / 1000;

/** The picture inside rows and columns that are black in every sample of the shot. */
function contentBox(samples: Sample[], W: number, H: number): Box {
  const withLines = samples.filter((s) => s.rows && s.cols);
  if (!withLines.length || !W || !H) return { x: 0, y: 0, width: W, height: H };
  const dark = (pick: (s: Sample) => { mean: Float32Array; max: Float32Array }, n: number) => {
    const out = new Uint8Array(n).fill(1);
    for (const s of withLines) {
      const l = pick(s);
      for (let i = 0; i < n; i++) if (l.mean[i]! > BORDER_MEAN || l.max[i]! > BORDER_MAX) out[i] = 0;
    }
    return out;
  };
  const rows = dark((s) => s.rows!, H);
  const cols = dark((s) => s.cols!, W);
  // Letterboxing and pillarboxing come in pairs of about equal bars; a dark side of the picture is content.
  const [top, bottom] = pairedBorders(rows, H);
  const [left, right] = pairedBorders(cols, W);
  // A frame black all over (a fade's bottom) has no content to find: the whole frame.
  if (top + bottom >= 0.7 * H || left + right >= 0.7 * W) return { x: 0, y: 0, width: W, height: H };
  return { x: left, y: top, width: W - left - right, height: H - top - bottom };
}

function pairedBorders(dark: Uint8Array, n: number): [number, number] {
  let lead = 0;
  while (lead < n && dark[lead]) lead++;
  let trail = 0;
  while (trail < n - lead && dark[n - 1 - trail]) trail++;
  const min = BORDER_MIN_FRACTION * n;
  const paired = Math.abs(lead - trail) <= Math.max(2, 0.25 * Math.max(lead, trail));
  return lead >= min && trail >= min && paired ? [lead, trail] : [0, 0];
}

/** Mean change per cell of the motion grid between consecutive samples of the shot. */
function motionGrid(samples: Sample[]): number[] {
  const grid = new Float64Array(MOTION_GRID_COLS * MOTION_GRID_ROWS);
  const counts = new Float64Array(grid.length);
  for (let k = 1; k < samples.length; k++) {
    const a = samples[k - 1]!.thumb;
    const b = samples[k]!.thumb;
    for (let y = 0; y < THUMB_H; y++) {
      const gy = Math.floor((y * MOTION_GRID_ROWS) / THUMB_H);
      for (let x = 0; x < THUMB_W; x++) {
        const g = gy * MOTION_GRID_COLS + Math.floor((x * MOTION_GRID_COLS) / THUMB_W);
        const p = (y * THUMB_W + x) * 3;
        grid[g] += (Math.abs(a[p]! - b[p]!) + Math.abs(a[p + 1]! - b[p + 1]!) + Math.abs(a[p + 2]! - b[p + 2]!)) / 3;
        counts[g]++;
      }
    }
  }
  return Array.from(grid, (v, g) => Math.round((v / Math.max(1, counts[g]!)) * 10_000) / 10_000);
}

function scaleBox(b: Box, k: { x: number; y: number }): Box {
  return { x: Math.round(b.x * k.x), y: Math.round(b.y * k.y), width: Math.round(b.width * k.x), height: Math.round(b.height * k.y) };
}

function median(xs: number[]): number {
  if (!xs.length) return 0;
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;
