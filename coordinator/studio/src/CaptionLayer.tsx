import { useEffect, useMemo, useRef } from 'preact/hooks';
import { designScale, layoutCaption } from '@shorts/common/render/caption-layout';
import type { ResolvedCaptionStyle } from '@shorts/common/render/presets';
import type { Word } from './captions.js';
import { drawCaption, useCaptionFont } from './caption-draw.js';

/**
 * The preview's caption: a canvas of the output frame's pixels over the preview, drawn from the
 * shared layout, and an empty box where the layout puts the caption (`data-lines`: the words of
 * each line, which the browser tests compare with the render's).
 */
export function CaptionLayer({
  style,
  page,
  frame,
}: {
  style: ResolvedCaptionStyle;
  page: { words: Word[]; active: number; elapsed: number } | null;
  frame: { width: number; height: number };
}) {
  const font = useCaptionFont(style);
  const layout = useMemo(
    () =>
      page && font
        ? layoutCaption({
            words: page.words.map((w) => w.text),
            active: page.active,
            elapsed: page.elapsed,
            style,
            output: frame,
            font: font.metrics,
          })
        : null,
    [page?.words, page?.active, page?.elapsed, style, frame.width, frame.height, font],
  );
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const ctx = canvas.current?.getContext('2d');
    if (!ctx || !canvas.current) return;
    ctx.clearRect(0, 0, canvas.current.width, canvas.current.height);
    if (layout && font) drawCaption(ctx, layout, style, font, canvas.current.width / frame.width, designScale(frame));
  }, [layout]);
  const pct = (v: number, of: number) => `${(v / of) * 100}%`;
  return (
    <>
      <canvas ref={canvas} class="caption-layer" data-testid="preview-caption-canvas" width={frame.width} height={frame.height} />
      {layout && page ? (
        <div
          class="caption-box"
          data-testid="preview-caption"
          role="img"
          aria-label={page.words.map((w) => w.text).join(' ')}
          data-lines={JSON.stringify(layout.lines.map((l) => l.words.map((j) => layout.words[j]!.text)))}
          data-font-size={layout.fontSizePx}
          data-active={page.active}
          data-frame={`${frame.width}x${frame.height}`}
          style={{
            left: pct(layout.box.x, frame.width),
            top: pct(layout.box.y, frame.height),
            width: pct(layout.box.width, frame.width),
            height: pct(layout.box.height, frame.height),
          }}
        />
      ) : null}
    </>
  );
}
