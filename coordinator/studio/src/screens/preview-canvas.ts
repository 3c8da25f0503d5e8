import { useEffect, useRef } from 'preact/hooks';
import type { ReframeLayout } from '@shorts/common/reframe/types';
import { cropOfAspect, drawCrop, type Crop } from '../reframe.js';

/**
 * The preview's canvas: the cropped source frame, drawn from the player whenever it shows a new frame
 * (a seek lands after the playhead moved, so the frame events matter, not only the clock).
 */
export function usePreviewCanvas(
  source: { current: HTMLVideoElement | null },
  time: number,
  crop: Crop | null,
  layout: ReframeLayout,
  frame: { width: number; height: number },
) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const cropRef = useRef({ crop, layout });
  cropRef.current = { crop, layout };
  const draw = () => {
    const c = canvas.current;
    const v = source.current;
    const { crop: box, layout: how } = cropRef.current;
    const ctx = c?.getContext('2d');
    if (!c || !v || !box || !ctx || v.readyState < 2) return;
    // Another shape than the crop path's (square, landscape): the window of that shape about a single
    // window (a fit already fits the whole picture, stacked panels keep theirs).
    const shaped = how === 'single' ? cropOfAspect(box, c.width / c.height, v.videoWidth, v.videoHeight) : box;
    drawCrop(ctx, v, shaped, how, c.width, c.height);
  };
  useEffect(draw, [time, crop?.x, crop?.y, crop?.width, crop?.height, layout, frame.width, frame.height]);
  useEffect(() => {
    const v = source.current;
    if (!v) return;
    const events = ['seeked', 'loadeddata', 'timeupdate'];
    for (const e of events) v.addEventListener(e, draw);
    // And every frame the player presents: the events only say that a frame should be there, and a
    // preview drawn a moment too early would keep the old one until the next seek.
    let frameRequest = 0;
    const onFrame = () => {
      draw();
      frameRequest = v.requestVideoFrameCallback(onFrame);
    };
    if (typeof v.requestVideoFrameCallback === 'function') frameRequest = v.requestVideoFrameCallback(onFrame);
    return () => {
      for (const e of events) v.removeEventListener(e, draw);
      if (frameRequest) v.cancelVideoFrameCallback(frameRequest);
    };
  }, [source.current]);
  return canvas;
}

/** Open on the short's first frame, not the source's 0:00 (the panel is remounted per short). */
export function useOpenAtShortStart(source: { current: HTMLVideoElement | null }, short: { startTime: number; endTime: number }) {
  useEffect(() => {
    const v = source.current;
    if (!v) return;
    const toStart = () => {
      if (v.currentTime < short.startTime - 0.05 || v.currentTime > short.endTime) v.currentTime = short.startTime;
    };
    if (v.readyState >= 1) toStart();
    else v.addEventListener('loadedmetadata', toStart, { once: true });
    return () => v.removeEventListener('loadedmetadata', toStart);
  }, [source.current, short.startTime]);
}
