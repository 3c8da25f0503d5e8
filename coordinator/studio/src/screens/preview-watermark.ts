import { useRef, useState } from 'preact/hooks';
import { placeWatermark, placementFromBox, type WatermarkBox, type WatermarkPlacement } from '@shorts/common/render/watermark-geometry';

export interface PreviewWatermark {
  /** What the image is shown from (the stored file's URL or the preset's waterMarkUrl). */
  src: string;
  placement: WatermarkPlacement;
  opacity: number;
  blendMode: string;
}

/**
 * The watermark's box in the preview, in output-frame pixels (placeWatermark, the agent's own
 * geometry), and the pointer gestures that move and resize it.
 */
export function useWatermarkBox(
  watermark: PreviewWatermark | null,
  frame: { width: number; height: number },
  onWatermark: (placement: WatermarkPlacement) => void,
) {
  const previewEl = useRef<HTMLDivElement>(null);
  // The image's size, kept with the URL it was read from: a load that finishes before an effect
  // could reset it must not be lost, and a size read from an older image must not be used.
  const [loaded, setLoaded] = useState<{ src: string; width: number; height: number } | null>(null);
  const image = watermark && loaded?.src === watermark.src ? loaded : null;
  const readImage = (i: HTMLImageElement | null) => {
    if (i && watermark && i.complete && i.naturalWidth > 0 && loaded?.src !== watermark.src) {
      setLoaded({ src: watermark.src, width: i.naturalWidth, height: i.naturalHeight });
    }
  };
  let box: WatermarkBox | null = null;
  if (watermark && image) {
    try {
      box = placeWatermark(watermark.placement, frame.width, frame.height, image.width, image.height);
    } catch {
      box = null; // a placement the render would refuse: nothing to draw
    }
  }
  const setBox = (next: Pick<WatermarkBox, 'x' | 'y' | 'w'>) => onWatermark(placementFromBox(next));

  // One pointer gesture at a time: move the box, or resize it from its lower right corner (the
  // height follows the image's aspect ratio, as in the render).
  const drag = (mode: 'move' | 'resize') => (e: PointerEvent) => {
    if (!box || !previewEl.current) return;
    e.preventDefault();
    e.stopPropagation();
    const start = { x: e.clientX, y: e.clientY, box };
    const k = frame.width / previewEl.current.getBoundingClientRect().width;
    const move = (m: PointerEvent) => {
      const dx = (m.clientX - start.x) * k;
      const dy = (m.clientY - start.y) * k;
      if (mode === 'move') setBox({ x: start.box.x + dx, y: start.box.y + dy, w: start.box.w });
      else setBox({ x: start.box.x, y: start.box.y, w: Math.max(8, start.box.w + dx) });
    };
    const up = () => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
    };
    window.addEventListener('pointermove', move);
    window.addEventListener('pointerup', up);
  };
  return { previewEl, box, setBox, readImage, drag };
}
