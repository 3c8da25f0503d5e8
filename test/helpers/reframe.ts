// What a crop path shows at a moment, as the filter graph (node-agent/src/media/reframe-graph.ts)
// draws it: in a split segment the panels of the keyframe the segment starts with, held still for the
// whole segment; elsewhere the window interpolated between keyframes. Face-cut checks run on these.
import type { Box, Reframe } from '../../common/src/reframe/types.js';
import { interpolate } from '../../node-agent/src/reframe/camera.js';

/** The source boxes drawn at `time` (one window, or each panel of a split). */
export function boxesShownAt(r: Reframe, time: number): Box[] {
  const segment = r.segments.find((s, i) => time >= s.start && (time < s.end || i === r.segments.length - 1));
  if (segment?.layout === 'split') {
    // The segment's starting keyframe: the later of two at one time, as at a cut.
    const key = r.keyframes.filter((k) => k.time <= segment.start + 1e-9).pop() ?? r.keyframes[0];
    if (key?.panels && key.panels.length >= 2) return key.panels.slice(0, 2);
  }
  return [interpolate(r.keyframes, time)];
}
