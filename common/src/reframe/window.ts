// What a crop path shows at a moment, as the filter graph (node-agent/src/media/reframe-graph.ts)
// draws it. Its own module so that both the camera (camera.ts) and what measures the camera's path
// (quality.ts) read it without importing each other.
import type { Box, Reframe, ReframeKeyframe, ReframeLayout, ReframeSegment } from './types.js';

/** The window at `time` on a keyframe path (linear between keyframes; the later of two at one time). */
export function interpolate(keys: ReframeKeyframe[], time: number): Box {
  let i = 0;
  while (i + 1 < keys.length && keys[i + 1]!.time <= time) i++;
  const a = keys[i]!;
  const b = keys[i + 1];
  if (!b || time <= a.time) return { x: a.x, y: a.y, width: a.width, height: a.height };
  const f = (time - a.time) / (b.time - a.time);
  return { x: lerp(a.x, b.x, f), y: lerp(a.y, b.y, f), width: lerp(a.width, b.width, f), height: lerp(a.height, b.height, f) };
}

/** The segment in force at `time`: the render runs each segment up to the next one's start, and the
 *  first from the short's start. Undefined for a path without segments. */
export function segmentAt(r: Pick<Reframe, 'segments'>, time: number): ReframeSegment | undefined {
  let found = r.segments[0];
  for (const s of r.segments) if (s.start <= time + 1e-9) found = s;
  return found;
}

/**
 * The layout and the source boxes drawn at `time`: the panels of a split or stack segment, held as
 * its starting keyframe has them (the later of two at one time, as at a cut) for the whole segment;
 * a fit segment's window, held as it starts, shown whole; otherwise the window interpolated between
 * keyframes. A split or stack keyframe without two panels is drawn as one window, as the render does.
 */
export function shownAt(r: Pick<Reframe, 'keyframes' | 'segments'>, time: number): { layout: ReframeLayout; boxes: Box[] } {
  if (!r.keyframes.length) return { layout: 'single', boxes: [] };
  const segment = segmentAt(r, time);
  if (segment && segment.layout !== 'single') {
    if (segment.layout === 'fit') return { layout: 'fit', boxes: [interpolate(r.keyframes, segment.start)] };
    const key = r.keyframes.filter((k) => k.time <= segment.start + 1e-9).pop() ?? r.keyframes[0]!;
    if (key.panels && key.panels.length >= 2) {
      return { layout: segment.layout, boxes: key.panels.slice(0, 2).map(({ x, y, width, height }) => ({ x, y, width, height })) };
    }
  }
  return { layout: 'single', boxes: [interpolate(r.keyframes, time)] };
}

const lerp = (a: number, b: number, f: number) => a + (b - a) * f;
