import { useEffect, useRef, useState } from 'preact/hooks';
import type { ResolvedCaptionStyle } from '@shorts/common/render/presets';
import type { ReframeLayout } from '@shorts/common/reframe/types';
import {
  boxPercent,
  placeWatermark,
  placementFromBox,
  type WatermarkBox,
  type WatermarkPlacement,
} from '@shorts/common/render/watermark-geometry';
import type { Word } from '../captions.js';
import { CaptionLayer } from '../CaptionLayer.js';
import { cropOfAspect, drawCrop, type Crop } from '../reframe.js';
import { NumberInput } from '../ui.js';

/** The three caption bands the render offers, as the `position` style item names them. */
export const CAPTION_POSITIONS = [
  { value: 'top', label: 'Top' },
  { value: 'center', label: 'Middle' },
  { value: 'bottom', label: 'Lower third' },
] as const;
export type CaptionPosition = (typeof CAPTION_POSITIONS)[number]['value'];

export interface PreviewWatermark {
  /** What the image is shown from (the stored file's URL or the preset's waterMarkUrl). */
  src: string;
  placement: WatermarkPlacement;
  opacity: number;
  blendMode: string;
}

/**
 * The live 9:16 preview: the cropped source frame, the caption page, and the watermark where the
 * render will put it (placeWatermark, the agent's own geometry), which the user drags and resizes.
 * Positions are output-frame pixels, so what is shown and stored is what the render reads.
 */
export function RenderPreview({
  short,
  source,
  time,
  crop,
  layout,
  layoutLabel,
  style,
  page,
  frame,
  watermark,
  onWatermark,
  captionPosition,
  autoLabel,
  onCaptionPosition,
}: {
  short: { startTime: number; endTime: number };
  source: { current: HTMLVideoElement | null };
  time: number;
  crop: Crop | null;
  layout: ReframeLayout;
  layoutLabel: preact.ComponentChildren;
  style: ResolvedCaptionStyle;
  page: { words: Word[]; active: number; elapsed: number } | null;
  /** The output frame in pixels, e.g. 1080x1920. */
  frame: { width: number; height: number };
  watermark: PreviewWatermark | null;
  onWatermark: (placement: WatermarkPlacement) => void;
  /** 'auto': the render's own choice (named by autoLabel), which the preview shows. */
  captionPosition: CaptionPosition | 'auto';
  autoLabel: string;
  onCaptionPosition: (position: CaptionPosition | 'auto') => void;
}) {
  // The cropped source frame, drawn from the player whenever it shows a new frame (a seek lands
  // after the playhead moved, so the frame events matter, not only the clock).
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

  // Open on the short's first frame, not the source's 0:00 (the panel is remounted per short).
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

  const frameName = `${frame.width}x${frame.height}`;
  const field = (id: string, label: string, value: number, set: (n: number) => void) => (
    <div>
      <label for={id}>{label}</label>
      <NumberInput id={id} step={1} value={value} style={{ width: '80px' }} onCommit={set} /> px
    </div>
  );
  const pct = box ? boxPercent(box, frame.width, frame.height) : null;
  // The preview's short side is 240 px.
  const previewWidth = 240;
  // The preview takes the output's shape: its short side 240 px, its canvas 480 px on the long side.
  const portrait = frame.height >= frame.width;
  const previewCss = {
    aspectRatio: `${frame.width} / ${frame.height}`,
    width: `${portrait ? previewWidth : Math.round((previewWidth * frame.width) / frame.height)}px`,
  };
  const canvasSize = portrait
    ? { width: Math.round((480 * frame.width) / frame.height), height: 480 }
    : { width: 480, height: Math.round((480 * frame.height) / frame.width) };

  return (
    <>
      <label for="caption-position">Caption position</label>
      <select
        id="caption-position"
        value={captionPosition}
        onChange={(e) => onCaptionPosition((e.target as HTMLSelectElement).value as CaptionPosition | 'auto')}
      >
        <option value="auto">{autoLabel}</option>
        {CAPTION_POSITIONS.map((p) => (
          <option key={p.value} value={p.value}>
            {p.label}
          </option>
        ))}
      </select>
      <h3>Live preview</h3>
      {/* Badges sit above the frame, never on it: a logo at (40, 40) stays in view. */}
      <div class="preview-badges" data-testid="preview-badges">
        {layoutLabel}
      </div>
      <div
        class="preview"
        ref={previewEl}
        data-testid="caption-preview"
        data-frame={frameName}
        style={previewCss}
        data-caption-anchor={style.position.anchor}
        aria-label="Preview of the captions and watermark on the cropped frame"
      >
        <canvas ref={canvas} width={canvasSize.width} height={canvasSize.height} />
        <CaptionLayer style={style} page={page} frame={frame} />
        {watermark ? (
          <div
            class="watermark"
            data-testid="preview-watermark"
            title="Drag to move; drag the corner to resize"
            style={
              pct
                ? {
                    left: `${pct.left}%`,
                    top: `${pct.top}%`,
                    width: `${pct.width}%`,
                    height: `${pct.height}%`,
                    opacity: watermark.opacity,
                    mixBlendMode: watermark.blendMode,
                  }
                : { visibility: 'hidden' }
            }
            onPointerDown={drag('move')}
          >
            <img
              src={watermark.src}
              alt="Watermark"
              draggable={false}
              ref={readImage}
              onLoad={(e) => readImage(e.target as HTMLImageElement)}
            />
            <div class="resize" data-testid="watermark-resize" aria-hidden="true" onPointerDown={drag('resize')} />
          </div>
        ) : null}
      </div>
      {watermark && box ? (
        <fieldset class="watermark-fields" data-testid="watermark-fields">
          <legend>Watermark, in pixels of the {frameName} output frame</legend>
          <div class="row">
            {field('wm-x', 'x', box.x, (x) => setBox({ ...box!, x }))}
            {field('wm-y', 'y', box.y, (y) => setBox({ ...box!, y }))}
            {field('wm-width', 'width', box.w, (w) => setBox({ ...box!, w: Math.max(1, w) }))}
          </div>
          <p class="muted" data-testid="watermark-summary">
            x {box.x} px, y {box.y} px, {box.w}x{box.h} px of {frameName}
          </p>
        </fieldset>
      ) : null}
    </>
  );
}
