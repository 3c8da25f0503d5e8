import type { ResolvedCaptionStyle } from '@shorts/common/render/presets';
import type { ReframeLayout } from '@shorts/common/reframe/types';
import { boxPercent, type WatermarkPlacement } from '@shorts/common/render/watermark-geometry';
import type { Word } from '../captions.js';
import { CaptionLayer } from '../CaptionLayer.js';
import type { Crop } from '../reframe.js';
import { usePreviewCanvas, useOpenAtShortStart } from './preview-canvas.js';
import { useWatermarkBox, type PreviewWatermark } from './preview-watermark.js';
import { WatermarkFields } from './WatermarkFields.js';

export type { PreviewWatermark };

/** The three caption bands the render offers, as the `position` style item names them. */
export const CAPTION_POSITIONS = [
  { value: 'top', label: 'Top' },
  { value: 'center', label: 'Middle' },
  { value: 'bottom', label: 'Lower third' },
] as const;
export type CaptionPosition = (typeof CAPTION_POSITIONS)[number]['value'];

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
  const canvas = usePreviewCanvas(source, time, crop, layout, frame);
  useOpenAtShortStart(source, short);
  const { previewEl, box, setBox, readImage, drag } = useWatermarkBox(watermark, frame, onWatermark);

  const frameName = `${frame.width}x${frame.height}`;
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
      <CaptionPositionSelect value={captionPosition} autoLabel={autoLabel} onChange={onCaptionPosition} />
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
      {watermark && box ? <WatermarkFields box={box} frameName={frameName} setBox={setBox} /> : null}
    </>
  );
}

/** The caption band to render with: the render's own choice (named by autoLabel), or one of the three. */
function CaptionPositionSelect({
  value,
  autoLabel,
  onChange,
}: {
  value: CaptionPosition | 'auto';
  autoLabel: string;
  onChange: (position: CaptionPosition | 'auto') => void;
}) {
  return (
    <>
      <label for="caption-position">Caption position</label>
      <select
        id="caption-position"
        value={value}
        onChange={(e) => onChange((e.target as HTMLSelectElement).value as CaptionPosition | 'auto')}
      >
        <option value="auto">{autoLabel}</option>
        {CAPTION_POSITIONS.map((p) => (
          <option key={p.value} value={p.value}>
            {p.label}
          </option>
        ))}
      </select>
    </>
  );
}
