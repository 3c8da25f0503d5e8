// One ffmpeg invocation per short: seek, crop (fixed or following a camera path), scale, burn in
// captions, composite the watermark, encode H.264 + AAC into a faststart MP4.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BlendMode } from '../../../common/src/render/options.js';
import type { ResolvedCaptionStyle } from '../../../common/src/render/presets.js';
import { buildWatermarkFilter } from './blend.js';
import { buildAssFile, buildCaptionPages, type CaptionWord } from './captions.js';
import { prepareFontsDir, resolveFontFace } from './fonts.js';

import type { CropKeyframe } from '../../../common/src/analyze-result.js';
import { inputGuard } from '../../../common/src/media/input-guard.js';
export type { CropKeyframe };

export interface RenderSpec {
  sourcePath: string;
  startTime: number; // seconds in the source
  endTime: number;
  words: CaptionWord[]; // source times; shifted to the clip here
  output: { width: number; height: number; path: string };
  /**
   * Camera path. x/y move linearly between keyframes of the same size; a keyframe with another
   * size is a cut (ffmpeg's crop cannot change size mid-stream). Boxes are widened or narrowed
   * around their centre to the output aspect and kept inside the source. None: a centred crop.
   */
  crop?: CropKeyframe[];
  caption: { style: ResolvedCaptionStyle; maxWordsInPage: number } | null;
  watermark?: {
    imagePath: string;
    imageWidth?: number; // read from the file by prepareRender when absent
    imageHeight?: number;
    left?: string;
    top?: string;
    bottom?: string;
    width?: string;
    opacity: number;
    blendMode: BlendMode;
  };
  encoder: 'libx264' | 'h264_nvenc';
  workDir: string;
  sourceWidth: number;
  sourceHeight: number;
}

export const assPathFor = (spec: Pick<RenderSpec, 'workDir'>) => path.join(spec.workDir, 'captions.ass');
export const fontsDirFor = (spec: Pick<RenderSpec, 'workDir'>) => path.join(spec.workDir, 'fonts');

/** The ffmpeg arguments (without the binary). Pure: prepareRender writes the files they name. */
export function buildRenderArgs(spec: RenderSpec): string[] {
  const { width: W, height: H } = spec.output;
  if (!(W > 0 && H > 0 && W % 2 === 0 && H % 2 === 0)) throw new Error(`output size ${W}x${H} must be positive and even`);
  if (!(spec.endTime > spec.startTime && spec.startTime >= 0)) throw new Error(`bad clip range ${spec.startTime}..${spec.endTime}`);
  const duration = spec.endTime - spec.startTime;

  const graph: string[] = [];
  const video = cropChain(spec, duration, graph);
  // 4:2:0 from here on whatever the source is (10-bit, 4:4:4): captions and the watermark patch
  // are drawn on the frame the encoder gets.
  let chain = `[${video}]scale=${W}:${H}:flags=bicubic,setsar=1,format=yuv420p`;
  if (spec.caption) chain += `,subtitles=filename=${filterArg(assPathFor(spec))}:fontsdir=${filterArg(fontsDirFor(spec))}`;

  // `file:` so a ':' in a path is never read as a protocol name (and a leading '-' never as an option).
  const inputs = [...inputGuard(), '-ss', sec(spec.startTime), '-to', sec(spec.endTime), '-i', fileUrl(spec.sourcePath)];
  const wm = spec.watermark;
  if (wm && wm.opacity > 0) {
    if (!wm.imageWidth || !wm.imageHeight) throw new Error('watermark imageWidth/imageHeight are needed (prepareRender reads them)');
    graph.push(`${chain}[captioned]`);
    const f = buildWatermarkFilter({
      ...wm, videoLabel: 'captioned', imageLabel: '1:v', outLabel: 'vout',
      frameWidth: W, frameHeight: H, imageWidth: wm.imageWidth, imageHeight: wm.imageHeight, frameFormat: 'yuv420p',
    });
    graph.push(f.filter);
    // A still image looped at 1 fps: the graph reuses the latest frame, so more would be wasted work.
    // No pattern: a '%' in the path is part of the name, not an image-sequence placeholder.
    if (f.box) inputs.push(...inputGuard('image'), '-loop', '1', '-framerate', '1', '-pattern_type', 'none', '-i', fileUrl(wm.imagePath));
  } else {
    graph.push(`${chain}[vout]`);
  }

  const encoder = spec.encoder === 'h264_nvenc'
    ? ['-c:v', 'h264_nvenc', '-preset', 'p4', '-rc', 'vbr', '-cq', '21', '-b:v', '0']
    : ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20'];
  return [
    '-hide_banner', '-nostdin', '-y', '-loglevel', 'error', '-nostats', '-progress', 'pipe:1',
    ...inputs,
    '-filter_complex', graph.join(';'),
    '-map', '[vout]', '-map', '0:a:0?',
    ...encoder, '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '160k',
    '-map_metadata', '-1', '-map_chapters', '-1',
    '-movflags', '+faststart', '-f', 'mp4', fileUrl(spec.output.path),
  ];
}

/** Writes the caption script and fonts into workDir, fills in the watermark size, returns the args. */
export async function prepareRender(spec: RenderSpec): Promise<string[]> {
  await mkdir(spec.workDir, { recursive: true });
  let s = spec;
  if (spec.caption) {
    const words = clipWords(spec.words, spec.startTime, spec.endTime);
    const pages = buildCaptionPages(words, spec.caption.maxWordsInPage);
    await writeFile(assPathFor(spec), buildAssFile(pages, spec.caption.style, spec.output), 'utf8');
    const { fontFamily, fontWeight, italic } = spec.caption.style;
    await prepareFontsDir(spec.workDir, [resolveFontFace(fontFamily, fontWeight, italic)]);
  }
  if (spec.watermark && (!spec.watermark.imageWidth || !spec.watermark.imageHeight)) {
    const { default: sharp } = await import('sharp');
    const meta = await sharp(spec.watermark.imagePath).metadata();
    if (!meta.width || !meta.height) throw new Error('the watermark image has no size');
    s = { ...spec, watermark: { ...spec.watermark, imageWidth: meta.width, imageHeight: meta.height } };
  }
  return buildRenderArgs(s);
}

/** Words overlapping the clip, in clip time. */
export function clipWords(words: CaptionWord[], start: number, end: number): CaptionWord[] {
  return words
    .filter((w) => w.end > start && w.start < end)
    .map((w) => ({ text: w.text, start: Math.max(0, w.start - start), end: Math.min(end, w.end) - start }));
}

// ---- crop ---------------------------------------------------------------------------------------

const MIN_RUN_SEC = 0.25;

/** Adds the crop stage to `graph` and returns the label it ends in. */
function cropChain(spec: RenderSpec, duration: number, graph: string[]): string {
  const aspect = spec.output.width / spec.output.height;
  const keys = (spec.crop ?? [])
    .filter((k) => [k.t, k.x, k.y, k.w, k.h].every(Number.isFinite) && k.w > 0 && k.h > 0)
    .map((k) => fitBox(k, aspect, spec.sourceWidth, spec.sourceHeight))
    .sort((a, b) => a.t - b.t);
  if (keys.length === 0) {
    const c = fitBox({ t: 0, x: 0, y: 0, w: spec.sourceWidth, h: spec.sourceHeight }, aspect, spec.sourceWidth, spec.sourceHeight);
    graph.push(`[0:v]crop=${c.w}:${c.h}:${c.x}:${c.y}[cropped]`);
    return 'cropped';
  }
  const runs = sizeRuns(keys, duration);
  const crop = (run: CropKeyframe[]) =>
    `crop=${run[0]!.w}:${run[0]!.h}:x='${pathExpr(run.map((k) => [k.t, k.x]))}':y='${pathExpr(run.map((k) => [k.t, k.y]))}'`;
  if (runs.length === 1) {
    graph.push(`[0:v]${crop(runs[0]!)}[cropped]`);
    return 'cropped';
  }
  // Cuts: each run gets its own time range of the clip, cropped, scaled to one size, concatenated.
  const bounds = runs.map((r, i) => (i === 0 ? 0 : r[0]!.t)).concat(duration);
  const labels = runs.map((_, i) => `cut${i}`);
  graph.push(`[0:v]split=${runs.length}${labels.map((l) => `[${l}in]`).join('')}`);
  runs.forEach((run, i) => {
    const trim = i === runs.length - 1 ? `trim=start=${sec(bounds[i]!)}` : `trim=start=${sec(bounds[i]!)}:end=${sec(bounds[i + 1]!)}`;
    graph.push(`[${labels[i]}in]${trim},${crop(run)},scale=${spec.output.width}:${spec.output.height},setsar=1,setpts=PTS-STARTPTS[${labels[i]}]`);
  });
  graph.push(`${labels.map((l) => `[${l}]`).join('')}concat=n=${runs.length}:v=1:a=0[cropped]`);
  return 'cropped';
}

/**
 * Runs of equal size; each becomes one crop whose x/y follow the path. A run that would start after
 * the clip, or last under MIN_RUN_SEC (concat needs a few frames to time a segment), is dropped and
 * the framing before it holds on.
 */
function sizeRuns(keys: CropKeyframe[], duration: number): CropKeyframe[][] {
  const group = (ks: CropKeyframe[]) => {
    const runs: CropKeyframe[][] = [];
    for (const k of ks) {
      const last = runs[runs.length - 1];
      if (last && last[0]!.w === k.w && last[0]!.h === k.h) last.push(k);
      else runs.push([k]);
    }
    return runs;
  };
  const runs = group(keys);
  const short = runs.filter((run, i) => i > 0 && (i + 1 < runs.length ? runs[i + 1]![0]!.t : duration) - run[0]!.t < MIN_RUN_SEC);
  return short.length ? group(keys.filter((k) => !short.some((run) => run.includes(k)))) : runs;
}

/** The box at the output aspect around the keyframe's centre, inside the source, even-sized. */
function fitBox(k: CropKeyframe, aspect: number, sw: number, sh: number): CropKeyframe {
  let h = Math.min(k.h, sh);
  let w = h * aspect;
  if (w > sw) {
    w = sw;
    h = w / aspect;
  }
  w = Math.max(2, Math.floor(w / 2) * 2);
  h = Math.max(2, Math.floor(h / 2) * 2);
  const cx = k.x + k.w / 2;
  const cy = k.y + k.h / 2;
  const x = Math.round(Math.min(Math.max(cx - w / 2, 0), sw - w));
  const y = Math.round(Math.min(Math.max(cy - h / 2, 0), sh - h));
  return { t: Math.max(0, k.t), x, y, w, h };
}

/** Piecewise-linear in t without nesting: v0 + sum of each segment's change times its progress. */
function pathExpr(points: Array<[number, number]>): string {
  let expr = String(points[0]![1]);
  for (let i = 1; i < points.length; i++) {
    const [t0, v0] = points[i - 1]!;
    const [t1, v1] = points[i]!;
    const dv = v1 - v0;
    if (dv === 0) continue;
    expr += t1 > t0 ? `+${dv}*clip((t-${sec(t0)})/${sec(t1 - t0)},0,1)` : `+${dv}*gte(t,${sec(t1)})`;
  }
  return expr;
}

// ---- escaping -----------------------------------------------------------------------------------

/**
 * A value inside a filter graph passes two parsers: the option parser (\ ' : are special) and the
 * graph parser (\ ' [ ] , ; are special). Escape for the first, then escape that for the second.
 */
export function filterArg(value: string): string {
  const option = value.replace(/[\\':]/g, (c) => `\\${c}`);
  return option.replace(/[\\'[\],;]/g, (c) => `\\${c}`);
}

const sec = (n: number) => String(Math.round(n * 1000) / 1000);
const fileUrl = (p: string) => `file:${path.resolve(p)}`;
