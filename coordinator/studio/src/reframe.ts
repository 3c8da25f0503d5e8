import type { Box, Reframe, ReframeLayout, ReframeQuality } from '@shorts/common/reframe/types';
import { stackedPanels } from '@shorts/common/reframe/panels';

export type { Reframe };

/** The reframe of a short as served, or null; the older keyframe-list form ({t, x, y, w, h}) is read too. */
export function readReframe(raw: unknown, sourceWidth: number, sourceHeight: number): Reframe | null {
  if (Array.isArray(raw)) {
    if (!raw.length) return null;
    return {
      sourceWidth,
      sourceHeight,
      segments: [],
      keyframes: raw.map((k: { t: number; x: number; y: number; w: number; h: number }) => ({
        time: k.t,
        x: k.x,
        y: k.y,
        width: k.w,
        height: k.h,
      })),
    };
  }
  const r = raw as Reframe | null | undefined;
  return r?.keyframes?.length ? r : null;
}

export interface Crop extends Box {
  panels?: Box[];
}

/** How the segment at time t is framed: one window, stacked panels, or the whole frame fitted. */
export function layoutAt(reframe: Reframe | null, t: number): ReframeLayout {
  return reframe?.segments?.find((s) => t >= s.start && t < s.end)?.layout ?? reframe?.segments?.at(-1)?.layout ?? 'single';
}

/** The crop window at source time `t`: linear between the keyframes around it, held before the first and after the last. */
export function cropAt(reframe: Reframe, t: number): Crop | null {
  const k = reframe.keyframes;
  if (!k?.length) return null;
  if (t <= k[0]!.time) return k[0]!;
  const last = k[k.length - 1]!;
  if (t >= last.time) return last;
  let i = 0;
  while (i < k.length - 2 && k[i + 1]!.time <= t) i++;
  const a = k[i]!;
  const b = k[i + 1]!;
  const f = b.time > a.time ? (t - a.time) / (b.time - a.time) : 0;
  const mix = (x: number, y: number) => x + (y - x) * f;
  return {
    x: mix(a.x, b.x),
    y: mix(a.y, b.y),
    width: mix(a.width, b.width),
    height: mix(a.height, b.height),
    ...(a.panels ? { panels: a.panels } : {}),
  };
}

export { stackedPanels, type PanelPlacement } from '@shorts/common/reframe/panels';

/** The part of a 2D canvas context drawCrop uses, so the geometry runs against a stand-in outside a browser. */
export interface FrameCanvas<Image> {
  fillStyle: unknown;
  /** CSS filter applied to what is drawn next ('none' or e.g. 'blur(8px)'). */
  filter: string;
  fillRect(x: number, y: number, width: number, height: number): void;
  drawImage(image: Image, sx: number, sy: number, sw: number, sh: number, dx: number, dy: number, dw: number, dh: number): void;
}

/** Draws the output frame: the window filling it, the panels stacked (split, stack), or the window fitted over a blurred fill of itself (fit). */
export function drawCrop<Image>(
  ctx: FrameCanvas<Image>,
  video: Image,
  crop: Crop,
  layout: ReframeLayout,
  width: number,
  height: number,
): void {
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, width, height);
  const panels = stackedPanels(layout, crop, width, height);
  if (panels) {
    for (const { source: p, top, height: h } of panels) ctx.drawImage(video, p.x, p.y, p.width, p.height, 0, top, width, h);
  } else if (layout === 'fit') {
    // Under the fitted picture, as in the render: the same picture covering the frame, blurred (the
    // render's box blur at 1/8 scale spreads about 4 % of the frame's width).
    const cover = Math.max(width / crop.width, height / crop.height);
    const cw = crop.width * cover;
    const ch = crop.height * cover;
    ctx.filter = `blur(${Math.max(1, Math.round(0.04 * width))}px)`;
    ctx.drawImage(video, crop.x, crop.y, crop.width, crop.height, (width - cw) / 2, (height - ch) / 2, cw, ch);
    ctx.filter = 'none';
    const scale = Math.min(width / crop.width, height / crop.height);
    const w = crop.width * scale;
    const h = crop.height * scale;
    ctx.drawImage(video, crop.x, crop.y, crop.width, crop.height, (width - w) / 2, (height - h) / 2, w, h);
  } else {
    ctx.drawImage(video, crop.x, crop.y, crop.width, crop.height, 0, 0, width, height);
  }
}

/** Without a reframe path: the centred window of the output's aspect, as a plain crop would take. */
export function centredCrop(sourceWidth: number, sourceHeight: number, aspect = 9 / 16): Box {
  const width = Math.min(sourceWidth, sourceHeight * aspect);
  const height = width / aspect;
  return { x: (sourceWidth - width) / 2, y: (sourceHeight - height) / 2, width, height };
}

/** `crop` widened or narrowed to `aspect` (width / height) about its centre, inside the source: the
 *  window a render of another shape (square, landscape) takes around the same subject. */
export function cropOfAspect(crop: Crop, aspect: number, sourceWidth: number, sourceHeight: number): Crop {
  if (Math.abs(crop.width / crop.height - aspect) < 0.01 || !(sourceWidth > 0 && sourceHeight > 0)) return crop;
  let height = crop.height;
  let width = height * aspect;
  if (width > sourceWidth) {
    width = sourceWidth;
    height = width / aspect;
  }
  if (height > sourceHeight) {
    height = sourceHeight;
    width = height * aspect;
  }
  const clamp = (v: number, max: number) => Math.min(Math.max(v, 0), Math.max(0, max));
  return {
    x: clamp(crop.x + crop.width / 2 - width / 2, sourceWidth - width),
    y: clamp(crop.y + crop.height / 2 - height / 2, sourceHeight - height),
    width,
    height,
  };
}

/** Below this share of its speech with the speaker on screen, a short's framing asks for a look. */
export const SPEAKER_ON_SCREEN_WARN_BELOW = 0.8;

/** A short's reframe.quality as one compact line beside it in the list, and whether it warns. */
export function qualityLine(q: ReframeQuality): { text: string; warn: boolean } {
  // Whole percents rounded down, so a share under the warning's 80 % never reads as 80 %.
  const percent = (share: number) => `${Math.floor(share * 100 + 1e-9)} %`;
  const parts = [`Speaker on screen ${percent(q.speakerOnScreenShare)}`, `face in frame ${percent(q.faceInWindowShare)}`];
  const span = q.lowestConfidenceSpan;
  if (span) parts.push(`least sure ${span.start.toFixed(1)}–${span.end.toFixed(1)} s (${span.confidence.toFixed(2)})`);
  return { text: parts.join(' · '), warn: q.speakerOnScreenShare < SPEAKER_ON_SCREEN_WARN_BELOW };
}
