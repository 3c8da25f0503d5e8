// One ffmpeg invocation per short: seek, crop (fixed or following a camera path), scale, burn in
// captions, composite the watermark, encode H.264 + AAC into a faststart MP4.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { BlendMode } from '@shorts/common/render/options';
import type { ResolvedCaptionStyle } from '@shorts/common/render/presets';
import { buildWatermarkFilter, placeWatermark } from './blend.js';
import { planCaptionCanvas, type CaptionCanvas } from './caption-canvas.js';
import { buildAssEvents, buildAssFile, buildCaptionPages, type CaptionPage, type CaptionWord } from './captions.js';
import { prepareFontsDir, resolveFontFace } from './fonts.js';

import type { Reframe } from '@shorts/common/reframe/types';
import { inputGuard } from '@shorts/common/media/input-guard';
import { buildReframeGraph, sec } from './reframe-graph.js';
import { editedDuration, type JumpCutPlan } from '@shorts/common/render/jump-cuts';
import { captionedWords } from '@shorts/common/render/caption-pages';
import { buildAudioCut, buildVideoCut, remapReframe } from './jump-cut-graph.js';
import { usToSec, type ChunkCut } from './render-chunks.js';
import { SOUND_OUTPUT_ARGS, soundFilter, type Loudness } from './sound.js';
import { BT709_OUTPUT_TAGS, toBt709Filter, type SourceColour } from './colour.js';
import { orientInputArgs } from './orientation.js';
import { ffmpegPreamble, fileUrl, mp4Output, sourceInput, THUMBNAIL_SCALE, thumbnailOutput } from './ffmpeg-args.js';

export interface RenderSpec {
  sourcePath: string;
  startTime: number; // seconds in the source
  endTime: number;
  words: CaptionWord[]; // source times; shifted to the clip here
  output: { width: number; height: number; path: string };
  /** The crop path (single, split, fit segments; see reframe-graph.ts). None: a centred crop. */
  reframe?: Reframe | null;
  caption: { style: ResolvedCaptionStyle; maxWordsInPage: number } | null;
  /** false: burn the captions into every frame even where a caption canvas would do (tests, benches). */
  captionCanvas?: boolean;
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
  /** The bundled 2018 ffmpeg runs the render (blend.ts picks what it can finish). */
  legacyFfmpeg?: boolean;
  workDir: string;
  sourceWidth: number;
  sourceHeight: number;
  /** The source's colour (colour.ts): HDR is tone-mapped, SD's matrix converted. Absent: BT.709 SDR. */
  sourceColour?: SourceColour;
  /** Coded as fields: deinterlaced (yadif, a frame per frame) before it is cropped and scaled, where
   *  the fields' comb would otherwise be scaled into the picture. */
  interlaced?: boolean;
  /** A source of variable frame rate (a phone's): its frames are put on this constant rate first,
   *  each held until the next is due. ffmpeg's own conversion at the muxer repeats the next frame
   *  into a gap instead, showing it up to the gap's length early, out of step with the sound. */
  constantRate?: number;
  /** Which sound stream to take (`0:a:<n>`): the one the analysis heard speech in. Absent: the first. */
  audioStream?: number;
  /** The clip's measured loudness (sound.ts): the sound is brought to the platforms' level. Absent:
   *  stereo at 48 kHz as it is (a preview). */
  loudness?: Loudness | null;
  /** Jump cuts (issue 24): the kept ranges of the clip. Absent or without cuts: the graph is the
   *  uncut one, unchanged. */
  edit?: JumpCutPlan | null;
  /** With `edit`: the source's frame rate (frames are kept whole) and whether it has sound. */
  sourceFps?: number | null;
  sourceHasAudio?: boolean;
  /** The source has no sound track at all: the short gets a silent stereo track at 48 kHz all the
   *  same (players and the networks expect one), as a source whose track is silent gives one. */
  noSoundTrack?: boolean;
  /** Frames between keyframes (render-chunks.ts gopFramesFor): the same in a single pass and in
   *  each chunk, so chunks start where the single pass has a keyframe. Absent: the encoder's own. */
  gopFrames?: number;
  /** One chunk of the render (render-chunks.ts): the whole render's graph over this stretch of the
   *  source, video only. */
  chunk?: ChunkCut & { last: boolean };
  /** The short's thumbnail, taken from the frames the encoder gets (the first at or after `atSec`
   *  of the output) and written beside the video by the same ffmpeg: no second decode of the
   *  output. A render whose output ends before `atSec` writes none. */
  thumbnail?: { path: string; atSec: number };
}

/** The plan when it cuts something; null when the render is the uncut one. */
export const activeEdit = (spec: Pick<RenderSpec, 'edit'>): JumpCutPlan | null => (spec.edit?.cuts.length ? spec.edit : null);

export const assPathFor = (spec: Pick<RenderSpec, 'workDir'>) => path.join(spec.workDir, 'captions.ass');
export const fontsDirFor = (spec: Pick<RenderSpec, 'workDir'>) => path.join(spec.workDir, 'fonts');

/** The ffmpeg arguments (without the binary). Pure: prepareRender writes the files they name. */
export function buildRenderArgs(spec: RenderSpec): string[] {
  const { width: W, height: H } = spec.output;
  if (!(W > 0 && H > 0 && W % 2 === 0 && H % 2 === 0)) throw new Error(`output size ${W}x${H} must be positive and even`);
  if (!(spec.endTime > spec.startTime && spec.startTime >= 0)) throw new Error(`bad clip range ${spec.startTime}..${spec.endTime}`);
  const graph: string[] = [];
  const edit = activeEdit(spec);
  const chunk = spec.chunk;
  const video = reframedVideo(spec, graph, sourceFrames(spec, graph));
  const soundIn = `0:a:${spec.audioStream ?? 0}`;
  const sound = soundFilter(spec.loudness);
  let audio: string | null = null;
  // A chunk is video only: the first chunk encodes the render's sound apart (encodeRenderAudio).
  if (edit && spec.sourceHasAudio && !chunk) {
    graph.push(`[${buildAudioCut(edit, spec.startTime, graph, soundIn)}]${sound}[sound]`);
    audio = 'sound';
  }
  const chain = captionChain(spec, graph, video);

  const range = chunk ? [usToSec(chunk.fromUs), usToSec(chunk.toUs)] : [sec(spec.startTime), sec(spec.endTime)];
  const inputs = sourceInput(spec.sourcePath, range[0]!, range[1]!, orientInputArgs(spec.sourceColour?.orient));
  // Chunks after the first start at 0 for the encoder (their frames then map one to one to output
  // frames); the first keeps the single pass's start as it is.
  const out = chunk?.shiftTicks ? 'vchunk' : 'vout';
  const thumbnail = spec.thumbnail && !chunk ? spec.thumbnail : null;
  const finished = out !== 'vout' || thumbnail ? 'vfinal' : 'vout';
  inputs.push(...watermarked(spec, graph, chain, finished));
  if (out !== 'vout') graph.push(`[${finished}]setpts=PTS-STARTPTS[vout]`);
  else if (thumbnail) {
    // The branch ends after its one frame (the second trim): the frames after it are not scaled.
    graph.push(`[${finished}]split=2[vout][thumb_in]`);
    graph.push(`[thumb_in]trim=start=${sec(thumbnail.atSec)},trim=end_frame=1,${THUMBNAIL_SCALE}[thumb]`);
  }
  if (spec.noSoundTrack && !chunk && !audio) {
    // Silence as long as the short's picture, generated in the graph (no input to renumber).
    const length = edit ? editedDuration(edit) : spec.endTime - spec.startTime;
    graph.push(`anullsrc=r=48000:cl=stereo,atrim=duration=${sec(length)}[silence]`);
    audio = 'silence';
  }
  const audioMap = chunk ? ['-an'] : audio ? ['-map', `[${audio}]`] : edit ? [] : ['-map', `${soundIn}?`, '-af', sound];

  return [
    ...ffmpegPreamble({ progress: true }),
    // The graph's slice-threaded filters (overlay, lut2, colorchannelmixer) work on patches and
    // strips: handing their slices to a thread pool cost more than the work (bench/render, 10 s:
    // 3-8 % of the render's wall time, up to 6 % of its CPU), and x264 keeps the cores busy.
    '-filter_complex_threads',
    '1',
    ...inputs,
    '-filter_complex',
    graph.join(';'),
    '-map',
    '[vout]',
    ...audioMap,
    ...encoderArgs(spec.encoder, spec.gopFrames),
    '-pix_fmt',
    'yuv420p',
    ...BT709_OUTPUT_TAGS,
    ...(chunk ? [] : SOUND_OUTPUT_ARGS),
    ...mp4Output(spec.output.path, { faststart: true }),
    ...(thumbnail ? ['-map', '[thumb]', ...thumbnailOutput(thumbnail.path)] : []),
  ];
}

/**
 * The source's frames made ready for the crop: mirrored as a player shows them, HDR at 4:4:4,
 * deinterlaced, on a constant rate, and a chunk's back on the single pass's clock. Returns the
 * graph's label for them.
 */
function sourceFrames(spec: RenderSpec, graph: string[]): string {
  const chunk = spec.chunk;
  // A chunk's frames go back on the single pass's clock (exact ticks): the crop path, caption
  // canvas and libass see the very timestamps the single pass gives them.
  let source = '0:v';
  const orient = spec.sourceColour?.orient;
  if (orient) {
    // A display matrix that mirrors: the frames are decoded as stored and shown as a player does here.
    graph.push(`[${source}]${orient}[oriented_in]`);
    source = 'oriented_in';
  }
  if (spec.sourceColour && spec.sourceColour.transfer !== 'sdr') {
    // The bundled 2018 ffmpeg's zscale reads black from 10-bit 4:2:0 frames cropped at an odd x (the
    // crop's exact=1): the frames go in at 4:4:4, which any crop keeps whole (a fraction of the cost
    // of tone-mapping them).
    graph.push(`[${source}]format=yuv444p10le[hdr_in]`);
    source = 'hdr_in';
  }
  if (spec.interlaced) {
    graph.push(`[${source}]yadif=mode=send_frame:parity=auto:deint=interlaced[progressive_in]`);
    source = 'progressive_in';
  }
  if (spec.constantRate && !chunk) {
    graph.push(`[${source}]fps=${spec.constantRate}[cfr_in]`);
    source = 'cfr_in';
  }
  if (chunk?.shiftTicks) {
    graph.push(`[${source}]setpts=PTS+${chunk.shiftTicks}[chunk_in]`);
    source = 'chunk_in';
  }
  if (spec.constantRate && chunk) {
    // On the single pass's clock: the same rate from the chunk's first output frame, trimmed where
    // the next chunk's begins (render-chunks.ts planConstantRateCuts).
    const slots = chunk.slots;
    if (!slots) throw new Error('a chunk of a variable-rate render needs its output frames');
    const from = chunk.shiftTicks ? `:start_time=${(slots.from / spec.constantRate).toFixed(9)}` : '';
    const to = slots.to !== undefined ? `,trim=end_pts=${slots.to}` : '';
    graph.push(`[${source}]fps=${spec.constantRate}${from}${to}[cfr_in]`);
    source = 'cfr_in';
  }
  return source;
}

/**
 * The clip cropped along its path and scaled: output-sized 4:2:0 frames from here on whatever the
 * source is (10-bit, 4:4:4), so that captions and the watermark patch are drawn on the frame the
 * encoder gets. With jump cuts, the kept stretches joined first. Returns the graph's label for them.
 */
function reframedVideo(spec: RenderSpec, graph: string[], source: string): string {
  const edit = activeEdit(spec);
  const frame = {
    width: spec.output.width,
    height: spec.output.height,
    sourceWidth: spec.sourceWidth,
    sourceHeight: spec.sourceHeight,
    toBt709: spec.sourceColour ? toBt709Filter(spec.sourceColour) : null,
  };
  const clockUs = spec.chunk?.clockUs;
  if (!edit) return buildReframeGraph(spec.reframe, { start: spec.startTime, end: spec.endTime, ...frame }, graph, source, clockUs);
  return buildReframeGraph(
    remapReframe(spec.reframe, edit),
    { start: 0, end: editedDuration(edit), ...frame },
    graph,
    // The cut reads the clip's clock, which a chunk's frames carry too: a chunk keeps the single
    // pass's frames and gives them the single pass's edited times.
    buildVideoCut(edit, spec.startTime, spec.sourceFps ?? 0, graph, source),
    clockUs,
  );
}

/**
 * The captions drawn on the `video` frames: by libass on each frame, or on a caption canvas that
 * only the frames where the captions change draw. Returns the chain, still to be given its label.
 */
function captionChain(spec: RenderSpec, graph: string[], video: string): string {
  const captions = captionLayout(spec);
  const subtitles = `subtitles=filename=${filterArg(assPathFor(spec))}:fontsdir=${filterArg(fontsDirFor(spec))}`;
  if (captions?.canvas) {
    const W = spec.output.width;
    // The canvas takes each selected frame's clock: a 2x2 corner of it, padded out to the strip in
    // the canvas colour at alpha 0 (the corner itself is cropped away), then libass draws on it.
    // overlay holds the last strip until the next: frames between changes reuse it.
    const { top, height, colour, changes } = captions.canvas;
    const K = `0x${[colour.r, colour.g, colour.b].map((c) => c.toString(16).padStart(2, '0')).join('')}@0`;
    graph.push(`[${video}]split=2[cap_frame][cap_clock]`);
    graph.push(
      `[cap_clock]select=${filterArg(changes)},crop=2:2:0:0,format=yuva420p,pad=${W}:${height + 2}:0:${height}:color=${K},` +
        `crop=${W}:${height}:0:0,${subtitles}:alpha=1[cap_strip]`,
    );
    // A chunk's strip stream ends with its input while its last frames may still be on their way to
    // the overlay: the chunk holds the last strip there (repeat), as the single pass, whose strips go
    // on, does. The last chunk ends as the single pass ends (pass).
    const eof = spec.chunk && !spec.chunk.last ? 'repeat' : 'pass';
    return `[cap_frame][cap_strip]overlay=x=0:y=${top}:format=yuv420:eof_action=${eof}`;
  }
  return spec.caption ? `[${video}]null,${subtitles}` : `[${video}]null`;
}

/**
 * The captioned `chain` ends in `out`, the watermark composited on it where there is one. Returns
 * the watermark image's input arguments (none when it draws nothing or needs no image).
 */
function watermarked(spec: RenderSpec, graph: string[], chain: string, out: string): string[] {
  const wm = spec.watermark;
  if (!wm || !(wm.opacity > 0)) {
    graph.push(`${chain}[${out}]`);
    return [];
  }
  if (!wm.imageWidth || !wm.imageHeight) throw new Error('watermark imageWidth/imageHeight are needed (prepareRender reads them)');
  graph.push(`${chain}[captioned]`);
  const f = buildWatermarkFilter({
    ...wm,
    videoLabel: 'captioned',
    imageLabel: '1:v',
    outLabel: out,
    frameWidth: spec.output.width,
    frameHeight: spec.output.height,
    imageWidth: wm.imageWidth,
    imageHeight: wm.imageHeight,
    frameFormat: 'yuv420p',
    legacyFfmpeg: spec.legacyFfmpeg,
  });
  graph.push(f.filter);
  // The still image as a single frame: overlay and lut2 repeat an input's last frame once it ends
  // (eof_action=repeat), so every video frame gets it. Looping the image instead cost more than
  // the blend itself (a frame pushed through the watermark's chain and the graph's sync each second).
  // No pattern: a '%' in the path is part of the name, not an image-sequence placeholder.
  // image2 named: ffmpeg 5+ probes a .png as png_pipe, which has no -pattern_type and refuses it.
  return f.box ? [...inputGuard('image'), '-f', 'image2', '-pattern_type', 'none', '-i', fileUrl(wm.imagePath)] : [];
}

/** Writes the caption script and fonts into workDir, fills in the watermark size, returns the args. */
export async function prepareRender(spec: RenderSpec): Promise<string[]> {
  await mkdir(spec.workDir, { recursive: true });
  let s = spec;
  const captions = captionLayout(spec);
  if (spec.caption && captions) {
    const { width, height } = spec.output;
    await writeFile(
      assPathFor(spec),
      buildAssFile(captions.pages, spec.caption.style, { width, height, canvas: captions.canvas ?? undefined }),
      'utf8',
    );
    const { fontFamily, fontWeight, italic } = spec.caption.style;
    await prepareFontsDir(spec.workDir, [resolveFontFace(fontFamily, fontWeight, italic)]);
  }
  if (spec.watermark && (!spec.watermark.imageWidth || !spec.watermark.imageHeight)) {
    const { default: sharp } = await import('sharp');
    const meta = await sharp(spec.watermark.imagePath).metadata();
    if (!meta.width || !meta.height) throw new Error('the watermark image has no size');
    s = { ...spec, watermark: { ...spec.watermark, imageWidth: meta.width, imageHeight: meta.height } };
  }
  if (s.watermark) s = { ...s, watermark: await clampWatermark(s.watermark, s.output, s.workDir) };
  return buildRenderArgs(s);
}

/**
 * A watermark larger than the frame (`width: "16000px"`) is cut to the part that lands in the frame
 * before ffmpeg scales anything: libvips computes only that region of the enlarged image, so the
 * renderer never holds a gigabyte-sized RGBA frame. Placement and pixels stay as they were.
 */
export async function clampWatermark(
  wm: NonNullable<RenderSpec['watermark']>,
  frame: { width: number; height: number },
  workDir: string,
): Promise<NonNullable<RenderSpec['watermark']>> {
  const { imageWidth, imageHeight } = wm;
  if (!imageWidth || !imageHeight) return wm;
  const { x, y, w, h } = placeWatermark(wm, frame.width, frame.height, imageWidth, imageHeight);
  if (w <= frame.width && h <= frame.height) return wm;
  const bx = Math.max(0, x);
  const by = Math.max(0, y);
  const bw = Math.min(frame.width, x + w) - bx;
  const bh = Math.min(frame.height, y + h) - by;
  if (bw <= 0 || bh <= 0) return { ...wm, opacity: 0 }; // entirely off the frame: nothing to draw
  const { default: sharp } = await import('sharp');
  const patch = path.join(workDir, 'watermark-visible.png');
  await sharp(wm.imagePath)
    .resize(w, h, { fit: 'fill' })
    .extract({ left: bx - x, top: by - y, width: bw, height: bh })
    .png()
    .toFile(patch);
  return { ...wm, imagePath: patch, imageWidth: bw, imageHeight: bh, left: `${bx}px`, top: `${by}px`, bottom: undefined, width: `${bw}px` };
}

/** The caption pages of the clip, and the canvas they are drawn on when one does (caption-canvas.ts). */
function captionLayout(spec: RenderSpec): { pages: CaptionPage[]; canvas: CaptionCanvas | null } | null {
  if (!spec.caption) return null;
  // The same words, pages and times as the caption files a client downloads (captions-export).
  const words = captionedWords(spec.words, spec.startTime, spec.endTime, spec.edit);
  const pages = buildCaptionPages(words, spec.caption.maxWordsInPage);
  // The bundled 2018 ffmpeg draws onto a canvas differently (7 luma levels off the frame path).
  const canvasAllowed = spec.captionCanvas !== false && !spec.legacyFfmpeg;
  const canvas = canvasAllowed
    ? planCaptionCanvas(pages, buildAssEvents(pages, spec.caption.style, spec.output), spec.caption.style, spec.output)
    : null;
  return { pages, canvas };
}

export { clipWords } from '@shorts/common/render/caption-pages';

/** The video encoder's options: NVENC where the host has it, else libx264. With `gopFrames`, a
 *  closed GOP of exactly that many frames, no keyframe put in at scene changes: a chunk (which
 *  starts on a keyframe) then has the keyframes the single pass has at the same frames. */
export function encoderArgs(encoder: RenderSpec['encoder'], gopFrames?: number): string[] {
  const gop = gopFrames ? ['-g', String(gopFrames), '-keyint_min', String(gopFrames), '-flags', '+cgop'] : [];
  return encoder === 'h264_nvenc'
    ? [
        '-c:v',
        'h264_nvenc',
        '-preset',
        'p4',
        '-rc',
        'vbr',
        '-cq',
        '21',
        '-b:v',
        '0',
        ...gop,
        ...(gopFrames ? ['-no-scenecut', '1', '-forced-idr', '1'] : []),
      ]
    : ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '20', ...gop, ...(gopFrames ? ['-sc_threshold', '0'] : [])];
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
