// The edit of a short as an editor's timeline (issue 38; docs/exports.md, "Editor timelines"): what the
// three file formats (fcpxml.ts, otio.ts, edl.ts) write, computed here from what is stored. Pure.
//
// Everything is counted in whole frames of the sequence's rate. The record side is the short as the
// render makes it: its kept ranges (the whole short without jump cuts) back to back from frame 0.
// Clips are cut where a kept range ends and where the render's crop changes by a step (a new window
// size, a layout, a jump of the window at a camera cut), so that inside a clip the crop moves only
// linearly between keyframes, as the render's crop expressions move it.
//
// The crop maths. The render crops a window (x, y, w, h) out of the source (SW x SH pixels) and scales
// it to the output (W x H): sx = W / w, sy = H / h (equal up to the even-pixel rounding of the window:
// scale = 1920 / window.height). In an editor the same frame is the whole source, unconformed (1 source
// pixel = 1 sequence pixel before the transform), scaled by (sx, sy) about its centre and moved so that
// the window's centre lands on the frame's centre: the source's centre moves by
//   dx = -sx * (x + w / 2 - SW / 2),   dy = -sy * (y + h / 2 - SH / 2)
// output pixels (y down). Each format writes (sx, sy) and (dx, dy) in its own units: FCPXML's
// position is in hundredths of the frame height with y up (fcpxml.ts), the OTIO metadata keeps pixels.
import type { CropPiece, ReframeTarget } from '@shorts/common/reframe/crop-pieces';
import { cropPieces, remapReframe } from '@shorts/common/reframe/crop-pieces';
import type { Box, Reframe } from '@shorts/common/reframe/types';
import type { TimeRange } from '@shorts/common/time-ranges';

export interface FrameRate {
  /** Frames per second = num / den (30000/1001 for 29.97). */
  num: number;
  den: number;
}

export interface Transform {
  /** Frames from the clip's record start (0 = its first frame). */
  frame: number;
  /** The source window shown, in source pixels. */
  window: Box;
  scaleX: number;
  scaleY: number;
  /** Where the source's centre goes, in output pixels from the frame's centre, y down. */
  dx: number;
  dy: number;
}

export interface TimelineClip {
  /** Source frames [sourceIn, sourceOut) on the source's clock. */
  sourceIn: number;
  sourceOut: number;
  /** Where it sits in the sequence (frames from 0). */
  recordIn: number;
  recordOut: number;
  /** The layout of the render's crop here; only `single` is carried whole (docs/exports.md). */
  layout: CropPiece['layout'];
  /** At the clip's first and last frame and at each keyframe between: linear between them. */
  transforms: Transform[];
}

export interface TimelineTitle {
  recordIn: number;
  recordOut: number;
  text: string;
}

export interface Timeline {
  name: string;
  rate: FrameRate;
  width: number;
  height: number;
  source: { name: string; url: string; width: number; height: number; durationFrames: number };
  clips: TimelineClip[];
  titles: TimelineTitle[];
  watermark: { name: string; url: string } | null;
  durationFrames: number;
  /** What the render does that this timeline only approximates, one line each. */
  notes: string[];
}

export interface TimelineInput {
  name: string;
  fps: number | null;
  width: number;
  height: number;
  source: { name: string; url: string; width: number; height: number; durationSec: number };
  start: number;
  end: number;
  /** The render's kept ranges on the source's clock (null: the whole short). */
  keep: TimeRange[] | null;
  reframe: Reframe | null;
  /** Caption cues on the short's own (edited) clock, seconds. */
  cues: Array<{ start: number; end: number; text: string }>;
  watermark: { name: string; url: string } | null;
}

/** 29.97, 23.976 and 59.94 as the NTSC fractions editors expect; else whole frames a second (30 when unknown). */
export function frameRateOf(fps: number | null): FrameRate {
  if (!fps || !(fps > 0)) return { num: 30, den: 1 };
  for (const nominal of [24, 30, 48, 60, 120]) {
    if (Math.abs(fps - (nominal * 1000) / 1001) < 0.005) return { num: nominal * 1000, den: 1001 };
  }
  const whole = Math.round(fps);
  if (Math.abs(fps - whole) < 0.01) return { num: whole, den: 1 };
  return { num: Math.round(fps * 1000), den: 1000 };
}

export const fpsOf = (r: FrameRate) => r.num / r.den;

export function buildTimeline(input: TimelineInput): Timeline {
  const rate = frameRateOf(input.fps);
  const fps = fpsOf(rate);
  const toFrame = (sec: number) => Math.round(sec * fps + 1e-6);
  const { width: W, height: H } = input;
  const keep = input.keep?.length ? input.keep : [{ start: input.start, end: input.end }];

  // The kept ranges on both clocks, in frames.
  const ranges: Array<{ sourceIn: number; sourceOut: number; recordIn: number; recordOut: number }> = [];
  let record = 0;
  for (const k of keep) {
    const sourceIn = toFrame(k.start);
    const sourceOut = toFrame(k.end);
    if (sourceOut <= sourceIn) continue;
    ranges.push({ sourceIn, sourceOut, recordIn: record, recordOut: record + sourceOut - sourceIn });
    record += sourceOut - sourceIn;
  }
  const durationFrames = record;

  // The render's crop on its own clock (0 = the short's first kept frame), as render-args.ts asks it.
  const cut = input.keep?.length ? { keep } : null;
  const edited = keep.reduce((s, k) => s + (k.end - k.start), 0);
  const target: ReframeTarget = {
    start: cut ? 0 : input.start,
    end: cut ? edited : input.end,
    width: W,
    height: H,
    sourceWidth: input.source.width,
    sourceHeight: input.source.height,
  };
  const path = cut ? remapReframe(input.reframe, cut) : input.reframe;
  const pieces = cropPieces(path, target);

  // Steps: piece starts and, within a single piece, two path points at one time.
  const steps = new Set<number>();
  for (const p of pieces) {
    steps.add(toFrame(p.from));
    if (p.layout === 'single') p.path.forEach((k, i) => i > 0 && k.t === p.path[i - 1]!.t && steps.add(toFrame(k.t)));
  }
  const notes = new Set<string>();
  const clips: TimelineClip[] = [];
  for (const r of ranges) {
    const cutsAt = [...steps].filter((f) => f > r.recordIn && f < r.recordOut).sort((a, b) => a - b);
    const bounds = [r.recordIn, ...cutsAt, r.recordOut];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const recordIn = bounds[i]!;
      const recordOut = bounds[i + 1]!;
      const piece = pieceAt(pieces, recordIn / fps);
      if (piece.layout === 'split' || piece.layout === 'stack') {
        notes.add(`${piece.layout}: the render stacks two windows; this timeline shows the first (top) one filling the frame`);
      }
      if (piece.layout === 'fit')
        notes.add('fit: the render lays the whole picture over a blurred copy; this timeline shows it over black');
      clips.push({
        sourceIn: r.sourceIn + recordIn - r.recordIn,
        sourceOut: r.sourceIn + recordOut - r.recordIn,
        recordIn,
        recordOut,
        layout: piece.layout,
        transforms: transformsOf(piece, recordIn, recordOut, fps, W, H, input.source),
      });
    }
  }

  const titles = input.cues
    .map((c) => ({ recordIn: toFrame(c.start), recordOut: Math.min(durationFrames, toFrame(c.end)), text: c.text }))
    .map((c) => ({ ...c, recordOut: Math.max(c.recordOut, c.recordIn + 1) }))
    .filter((c) => c.recordIn < durationFrames);
  return {
    name: input.name,
    rate,
    width: W,
    height: H,
    source: {
      name: input.source.name,
      url: input.source.url,
      width: input.source.width,
      height: input.source.height,
      durationFrames: Math.max(toFrame(input.source.durationSec), ...ranges.map((r) => r.sourceOut)),
    },
    clips,
    titles,
    watermark: input.watermark,
    durationFrames,
    notes: [...notes],
  };
}

/** The piece drawn at `t` seconds of the short's clock (the later one at a boundary). */
function pieceAt(pieces: CropPiece[], t: number): CropPiece {
  let found = pieces[0]!;
  for (const p of pieces) if (p.from <= t + 1e-6) found = p;
  return found;
}

/** The transform at the clip's first and last frame and at each keyframe of the piece's path between. */
function transformsOf(
  piece: CropPiece,
  recordIn: number,
  recordOut: number,
  fps: number,
  W: number,
  H: number,
  source: { width: number; height: number },
): Transform[] {
  const at = (frame: number, window: Box, fill: 'crop' | 'fit' | 'width'): Transform => {
    let scaleX = W / window.width;
    let scaleY = H / window.height;
    if (fill === 'fit') scaleX = scaleY = Math.min(W / window.width, H / window.height);
    if (fill === 'width') scaleY = scaleX;
    const dx = -scaleX * (window.x + window.width / 2 - source.width / 2);
    const dy = -scaleY * (window.y + window.height / 2 - source.height / 2);
    return { frame: frame - recordIn, window, scaleX, scaleY, dx, dy };
  };
  const last = Math.max(recordIn, recordOut - 1);
  if (piece.layout === 'fit') return [at(recordIn, piece.box, 'fit')];
  if (piece.layout !== 'single') return [at(recordIn, piece.panels[0]!, 'width')];
  const size = piece.size;
  const t0 = recordIn / fps;
  const t1 = last / fps;
  // The path on the clip: its value where the clip starts (after a step there) and ends (before the
  // next step), the points strictly between.
  const points = piece.path;
  const valueAt = (t: number, after: boolean) => {
    let i = 0;
    while (i + 1 < points.length && (after ? points[i + 1]!.t <= t + 1e-6 : points[i + 1]!.t < t - 1e-6)) i++;
    const a = points[i]!;
    const b = points[i + 1];
    if (!b || t <= a.t || b.t === a.t) return { x: a.x, y: a.y };
    const f = Math.min(1, (t - a.t) / (b.t - a.t));
    return { x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f };
  };
  const keys: Array<{ frame: number; x: number; y: number }> = [{ frame: recordIn, ...valueAt(t0, true) }];
  for (const k of points) {
    const frame = Math.round(k.t * fps + 1e-6);
    if (k.t > t0 + 1e-6 && k.t < t1 - 1e-6 && frame > keys[keys.length - 1]!.frame) keys.push({ frame, x: k.x, y: k.y });
  }
  if (last > keys[keys.length - 1]!.frame) keys.push({ frame: last, ...valueAt(t1, false) });
  return keys.map((k) => at(k.frame, { x: k.x, y: k.y, width: size.width, height: size.height }, 'crop'));
}
