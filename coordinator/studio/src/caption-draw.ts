// The preview's captions: laid out by the render's own layout (common/src/render/caption-layout.ts)
// from the font file the render uses (fetched from /studio/fonts/), and drawn on a canvas in output
// pixels with that same file, so lines, sizes and places are the burned-in captions'.
import { useEffect, useState } from 'preact/hooks';
import { captionFace, captionFontUrl } from '@shorts/common/render/caption-fonts';
import type { CaptionLayout } from '@shorts/common/render/caption-layout';
import { readFontMetrics, type FontMetrics } from '@shorts/common/render/font-metrics';
import type { ResolvedCaptionStyle, Rgba } from '@shorts/common/render/presets';

export interface LoadedFont {
  /** The name the file is registered under in document.fonts (one per file, never a system font). */
  family: string;
  metrics: FontMetrics;
}

const loading = new Map<string, Promise<LoadedFont>>();

function loadFont(style: ResolvedCaptionStyle): Promise<LoadedFont> {
  const face = captionFace(style.fontFamily, style.fontWeight, style.italic);
  let p = loading.get(face.fileName);
  if (!p) {
    p = (async () => {
      const res = await fetch(captionFontUrl(face));
      if (!res.ok) throw new Error(`caption font ${face.fileName}: ${res.status}`);
      const bytes = await res.arrayBuffer();
      const family = `caption-${face.fileName.replace(/\.ttf$/, '')}`;
      const font = new FontFace(family, bytes);
      await font.load();
      document.fonts.add(font);
      return { family, metrics: readFontMetrics(bytes) };
    })();
    p.catch(() => loading.delete(face.fileName));
    loading.set(face.fileName, p);
  }
  return p;
}

/** The style's font once loaded (null until then). */
export function useCaptionFont(style: ResolvedCaptionStyle): LoadedFont | null {
  const key = captionFace(style.fontFamily, style.fontWeight, style.italic).fileName;
  const [font, setFont] = useState<{ key: string; font: LoadedFont } | null>(null);
  useEffect(() => {
    let live = true;
    loadFont(style).then(
      (f) => live && setFont({ key, font: f }),
      () => undefined, // no font, no captions drawn: the render still has them
    );
    return () => {
      live = false;
    };
  }, [key]);
  return font?.key === key ? font.font : null;
}

const css = (c: Rgba) => `rgba(${c.r},${c.g},${c.b},${c.a})`;

/**
 * Draws a laid-out caption as libass draws the script: per line a box (BorderStyle 3: the line's
 * cell grown by the padding), the shadow (text and outline moved by the offset), the outline (a
 * border of its width outside the glyphs) and the fill. `k` is canvas px per output px.
 */
export function drawCaption(
  ctx: CanvasRenderingContext2D,
  layout: CaptionLayout,
  style: ResolvedCaptionStyle,
  font: LoadedFont,
  k: number,
  designK: number,
) {
  ctx.save();
  ctx.scale(k, k);
  if (style.backgroundColor) {
    const pad = style.boxPaddingPx * designK;
    ctx.fillStyle = css(style.backgroundColor);
    for (const l of layout.lines) ctx.fillRect(l.x - pad, l.top - pad, l.width + 2 * pad, l.height + 2 * pad);
  }
  const outline = style.outlineWidthPx * designK;
  ctx.lineJoin = 'round';
  ctx.textBaseline = 'alphabetic';
  ctx.letterSpacing = `${style.letterSpacingPx * designK}px`;
  const pass = (dx: number, dy: number, fill: (c: Rgba) => string, stroke: string | null, blurPx: number) => {
    ctx.filter = blurPx > 0 ? `blur(${blurPx}px)` : 'none';
    for (const w of layout.words) {
      const line = layout.lines[w.line]!;
      ctx.font = `${layout.emPx * w.scale}px "${font.family}"`;
      if (stroke && outline > 0) {
        ctx.strokeStyle = stroke;
        ctx.lineWidth = 2 * outline;
        ctx.strokeText(w.text, w.x + dx, line.baseline + dy);
      }
      ctx.fillStyle = fill(w.color);
      ctx.fillText(w.text, w.x + dx, line.baseline + dy);
    }
  };
  if (style.shadow) {
    const s = style.shadow;
    const shadow = css(s.color);
    pass(s.offsetXPx * designK, s.offsetYPx * designK, () => shadow, shadow, (s.blurPx * designK) / 2);
  }
  pass(0, 0, css, outline > 0 ? css(style.outlineColor) : null, 0);
  ctx.restore();
}
