// Where a watermark lands in the output frame. The agent composites with it (blend.ts) and the
// studio's live preview draws with it, so what the preview shows is where the render puts it.
import { parseLength, resolveLength } from './position.js';

export interface WatermarkPlacement {
  left?: string; // CSS lengths: Npx, N%, calc(); % of the frame width
  top?: string; // % of the frame height; wins over bottom
  bottom?: string;
  width?: string; // defaults to the image's own width
}

export interface WatermarkBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Where the watermark lands in a frame, in whole pixels (may extend past the edges). */
export function placeWatermark(
  p: WatermarkPlacement,
  frameWidth: number,
  frameHeight: number,
  imageWidth: number,
  imageHeight: number,
): WatermarkBox {
  const w = Math.max(
    1,
    Math.round(p.width !== undefined ? resolveLength(parseLength('waterMark.width', p.width), frameWidth) : imageWidth),
  );
  const h = Math.max(1, Math.round((w * imageHeight) / imageWidth));
  const x = Math.round(p.left !== undefined ? resolveLength(parseLength('waterMark.left', p.left), frameWidth) : 0);
  let y = 0;
  if (p.top !== undefined) y = Math.round(resolveLength(parseLength('waterMark.top', p.top), frameHeight));
  else if (p.bottom !== undefined) y = frameHeight - h - Math.round(resolveLength(parseLength('waterMark.bottom', p.bottom), frameHeight));
  return { x, y, w, h };
}

/**
 * The placement as the studio stores it after a drag or resize: whole output-frame pixels from the
 * top left, which the render reads back to the same box (placeWatermark of the result = the box).
 */
export function placementFromBox(box: Pick<WatermarkBox, 'x' | 'y' | 'w'>): Required<Pick<WatermarkPlacement, 'left' | 'top' | 'width'>> {
  return { left: `${Math.round(box.x)}px`, top: `${Math.round(box.y)}px`, width: `${Math.max(1, Math.round(box.w))}px` };
}

/** The box as percentages of the frame, for an element laid over a preview of any size. */
export function boxPercent(box: WatermarkBox, frameWidth: number, frameHeight: number) {
  return {
    left: (box.x / frameWidth) * 100,
    top: (box.y / frameHeight) * 100,
    width: (box.w / frameWidth) * 100,
    height: (box.h / frameHeight) * 100,
  };
}
