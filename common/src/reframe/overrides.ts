// Framing by hand: spans of a short where the user held the window still, forced a layout, or pinned a
// face. Applied after the camera (planReframe) wherever a path is made: the coordinator when the
// overrides are saved or the short is trimmed, the agent when a render plans the path again for other
// director settings or another shape. Each span is spliced into the planned path with a cut at both
// ends, so the camera's own framing holds everywhere else.
import { followTrack, largestWindow, planReframe, splitTracks, stackTracks, windowAbout, type OutputSize } from './camera.js';
import { interpolate, segmentAt } from './window.js';
import { reframeQuality } from './quality.js';
import { invalidInput } from '../invalid-input.js';
import type { Box, DirectorSettings, FramingOverride, Reframe, ReframeKeyframe, ReframeSegment, ShortDetections } from './types.js';

/** The most spans one short may hold: each is a splice of the whole path. */
export const MAX_FRAMING_OVERRIDES = 100;
/** Within this of the short's ends a span counts as inside it (times are stored to the ms). */
const EDGE_SEC = 0.001;

export interface OverrideContext {
  /** The short's range on the source clock. */
  start: number;
  end: number;
  sourceWidth: number;
  sourceHeight: number;
  /** The short's stored detections (over its range), or null: faces cannot then be pinned or stacked. */
  detections: ShortDetections | null;
  director: DirectorSettings;
  output: OutputSize;
}

/** The tracks detection saw in [start, end), most seen first. */
function tracksIn(d: ShortDetections | null, start: number, end: number): number[] {
  if (!d) return [];
  return d.tracks
    .map((t) => ({ id: t.id, n: t.samples.filter((s) => s.time >= start - EDGE_SEC && s.time < end + EDGE_SEC).length }))
    .filter((t) => t.n > 0)
    .sort((a, b) => b.n - a.n || a.id - b.id)
    .map((t) => t.id);
}

const span = (o: FramingOverride) => `${o.start}–${o.end} s`;

/** Throws InvalidInput (a 400) naming the first override that cannot be applied to this short. */
export function checkOverrides(overrides: readonly FramingOverride[], ctx: OverrideContext): void {
  if (overrides.length > MAX_FRAMING_OVERRIDES)
    throw invalidInput(`A short holds at most ${MAX_FRAMING_OVERRIDES} framing overrides (got ${overrides.length})`);
  overrides.forEach((o, i) => {
    const name = `overrides[${i}] (${o.kind}, ${span(o)})`;
    if (!(o.end > o.start)) throw invalidInput(`${name}: end must be greater than start`);
    if (o.start < ctx.start - EDGE_SEC || o.end > ctx.end + EDGE_SEC) {
      throw invalidInput(`${name} reaches outside the short (${ctx.start}–${ctx.end} s)`);
    }
    if (o.kind === 'window') {
      const w = o.window;
      if (w.x < 0 || w.y < 0 || w.x + w.width > ctx.sourceWidth + 0.5 || w.y + w.height > ctx.sourceHeight + 0.5) {
        throw invalidInput(`${name}: the window must lie inside the ${ctx.sourceWidth}x${ctx.sourceHeight} source`);
      }
    }
    if (o.kind === 'face' && !tracksIn(ctx.detections, o.start, o.end).includes(o.trackId)) {
      const seen = tracksIn(ctx.detections, o.start, o.end);
      throw invalidInput(
        `${name}: face ${o.trackId} is not one detection saw in that span (${seen.length ? `faces seen: ${seen.join(', ')}` : 'no face was seen there'})`,
      );
    }
    if (o.kind === 'layout' && o.layout === 'stack' && !tracksIn(ctx.detections, o.start, o.end).length) {
      throw invalidInput(`${name}: a stack puts a face on top, and no face was seen in that span`);
    }
  });
}

/** The path without the overrides' effect: what `applyOverrides` starts from when no detections can
 *  re-plan it. The centre crop stands for a short without a path. */
export function centreCropPath(ctx: Pick<OverrideContext, 'start' | 'end' | 'sourceWidth' | 'sourceHeight' | 'output'>): Reframe {
  const size = largestWindow(ctx.sourceWidth, ctx.sourceHeight, ctx.output.width / ctx.output.height);
  return {
    sourceWidth: ctx.sourceWidth,
    sourceHeight: ctx.sourceHeight,
    keyframes: [
      {
        time: ctx.start,
        x: Math.floor((ctx.sourceWidth - size.width) / 2),
        y: Math.floor((ctx.sourceHeight - size.height) / 2),
        ...size,
      },
    ],
    segments: [{ start: ctx.start, end: ctx.end, layout: 'single', tracks: [] }],
  };
}

/** `base` with each override spliced in, in order (a later one wins where two overlap); `overrides`
 *  recorded on the path. Call checkOverrides first: this throws the same errors. */
export function applyOverrides(base: Reframe, overrides: readonly FramingOverride[], ctx: OverrideContext): Reframe {
  const { overrides: _previous, ...planned } = base;
  if (!overrides.length) return planned;
  checkOverrides(overrides, ctx);
  let path: Reframe = planned;
  for (const o of overrides) {
    const s = Math.max(ctx.start, o.start);
    const e = Math.min(ctx.end, o.end);
    path = splice(path, s, e, ctx.end, framingOf(o, s, e, path, ctx));
  }
  const quality = ctx.detections && path.quality ? { quality: reframeQuality(ctx.detections, path) } : {};
  return { ...path, ...quality, overrides: overrides.map((o) => ({ ...o })) };
}

/** The keyframes (the first at `s`) and the segment of one override over [s, e). */
function framingOf(
  o: FramingOverride,
  s: number,
  e: number,
  path: Reframe,
  ctx: OverrideContext,
): { keyframes: ReframeKeyframe[]; segment: ReframeSegment } {
  const { sourceWidth: W, sourceHeight: H, output, director, detections } = ctx;
  const aspect = output.width / output.height;
  const at = (box: Box, panels?: Box[]): ReframeKeyframe => ({ time: r3(s), ...box, ...(panels ? { panels } : {}) });
  const segment = (layout: ReframeSegment['layout'], tracks: number[]): ReframeSegment => ({ start: r3(s), end: r3(e), layout, tracks });
  if (o.kind === 'window') return { keyframes: [at(windowAbout(o.window, aspect, W, H))], segment: segment('single', []) };
  if (o.kind === 'face') {
    return { keyframes: followTrack(detections!, o.trackId, s, e, director, output), segment: segment('single', [o.trackId]) };
  }
  const seen = tracksIn(detections, s, e);
  // The speaker the camera showed there first, then whoever detection saw most.
  const shown = (segmentAt(path, s)?.tracks ?? []).filter((id) => seen.includes(id));
  const faces = [...new Set([...shown, ...seen])];
  switch (o.layout) {
    case 'single': {
      if (faces.length)
        return { keyframes: followTrack(detections!, faces[0]!, s, e, director, output), segment: segment('single', [faces[0]!]) };
      return { keyframes: [at(windowAbout(interpolate(path.keyframes, s), aspect, W, H))], segment: segment('single', []) };
    }
    case 'fit':
      return { keyframes: [at({ x: 0, y: 0, width: W, height: H })], segment: segment('fit', []) };
    case 'split': {
      if (faces.length >= 2) {
        return {
          keyframes: splitTracks(detections!, [faces[0]!, faces[1]!], s, e, director, output),
          segment: segment('split', faces.slice(0, 2)),
        };
      }
      // Fewer than two faces: the two halves of the picture, each at the panel's shape.
      const panelAspect = output.width / (output.height / 2);
      const h = Math.min(H, W / 2 / panelAspect);
      const left = windowAbout({ x: 0, y: (H - h) / 2, width: W / 2, height: h }, panelAspect, W, H);
      const right = windowAbout({ x: W / 2, y: (H - h) / 2, width: W / 2, height: h }, panelAspect, W, H);
      return { keyframes: [at(left, [left, right])], segment: segment('split', faces.slice(0, 1)) };
    }
    case 'stack': {
      const panels = stackTracks(detections!, faces[0]!, s, e, output);
      return { keyframes: [at(panels[0], panels)], segment: segment('stack', [faces[0]!]) };
    }
  }
}

/** The window and panels the path shows at `t` (the later of two keyframes at one time). */
function stateAt(path: Reframe, t: number): Omit<ReframeKeyframe, 'time'> {
  const box = interpolate(path.keyframes, t);
  const key = path.keyframes.filter((k) => k.time <= t + 1e-9).pop() ?? path.keyframes[0];
  return key?.panels ? { ...box, panels: key.panels } : box;
}

/** `path` with [s, e) replaced by `part`: a cut into it at `s` and back out of it at `e`. */
function splice(
  path: Reframe,
  s: number,
  e: number,
  end: number,
  part: { keyframes: ReframeKeyframe[]; segment: ReframeSegment },
): Reframe {
  const keys = path.keyframes;
  const partKeys = part.keyframes.length ? part.keyframes : [{ time: r3(s), ...stateAt(path, s) }];
  const out: ReframeKeyframe[] = keys.filter((k) => k.time < s - 1e-9);
  if (out.length) out.push({ time: r3(s), ...stateAt(path, s) });
  out.push(...partKeys.map((k, i) => (i === 0 ? { ...k, time: r3(s) } : k)).filter((k) => k.time < e - 1e-9));
  if (e < end - EDGE_SEC) {
    const last = out[out.length - 1]!;
    const held = { ...interpolate(partKeys, e), ...(last.panels ? { panels: last.panels } : {}) };
    out.push({ time: r3(e), ...held }, { time: r3(e), ...stateAt(path, e) });
    out.push(...keys.filter((k) => k.time > e + 1e-9));
  }
  const segments: ReframeSegment[] = [];
  for (const seg of path.segments) if (seg.start < s - 1e-9) segments.push({ ...seg, end: Math.min(seg.end, r3(s)) });
  segments.push(part.segment);
  if (e < end - EDGE_SEC) {
    const resumed = segmentAt(path, e);
    if (resumed) segments.push({ ...resumed, start: r3(e), end: Math.max(resumed.end, r3(e)) });
    for (const seg of path.segments) if (seg.start > e + 1e-9 && seg !== resumed) segments.push(seg);
  }
  return { ...path, keyframes: out, segments: segments.filter((x) => x.end > x.start) };
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;

/** The camera's path for a short's detections with its framing by hand applied: what a render that
 *  plans again for other director settings or another shape follows. */
export function planWithOverrides(
  detections: ShortDetections,
  director: DirectorSettings,
  output: OutputSize,
  overrides: readonly FramingOverride[] | undefined,
): Reframe {
  const planned = planReframe(detections, director, output);
  if (!overrides?.length) return planned;
  return applyOverrides(planned, overrides, {
    start: detections.start,
    end: detections.end,
    sourceWidth: detections.sourceWidth,
    sourceHeight: detections.sourceHeight,
    detections,
    director,
    output,
  });
}
