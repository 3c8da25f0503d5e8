// The stacked panels of a split or stack frame, shared by the studio's preview and the caption band
// (caption-band.ts), placed as the render (node-agent/src/media/reframe-graph.ts) places them.
import type { Box, ReframeLayout } from './types.js';

/** Where a source window lands in the output frame: the window, and the output rows it fills (full width). */
export interface PanelPlacement {
  source: Box;
  top: number;
  height: number;
}

/**
 * The stacked panels of a split or stack frame, as the render (node-agent/src/media/reframe-graph.ts)
 * places them: split gives two equal halves; stack gives the top panel (the facecam) the height its
 * window has when scaled to the frame's width, kept inside the frame, and the bottom panel the rest.
 * Null when the layout does not stack or the crop lacks two panels (then the frame is one window).
 */
export function stackedPanels(
  layout: ReframeLayout,
  crop: Box & { panels?: Box[] },
  width: number,
  height: number,
): PanelPlacement[] | null {
  const [top, bottom] = crop.panels ?? [];
  if (!top || !bottom) return null;
  if (layout === 'split') {
    const half = height / 2;
    return [
      { source: top, top: 0, height: half },
      { source: bottom, top: half, height: height - half },
    ];
  }
  if (layout === 'stack') {
    const topHeight = Math.round(Math.min(height - 2, Math.max(2, (width * top.height) / top.width)));
    return [
      { source: top, top: 0, height: topHeight },
      { source: bottom, top: topHeight, height: height - topHeight },
    ];
  }
  return null;
}
