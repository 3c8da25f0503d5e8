import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inputGuard } from '@shorts/common/media/input-guard';
import { toolEnv } from '@shorts/common/media/tools';
import type { Reframe } from '@shorts/common/reframe/types';
import { largestWindow } from '@shorts/common/reframe/camera';
import { runFfmpeg } from './ffmpeg.js';
import { prepareRender, type RenderSpec } from './render-args.js';
import { hdrToSdrFilter, SDR_BT709, type SourceColour } from './colour.js';
import { clearDisplayMatrix, orientInputArgs } from './orientation.js';
import { THUMBNAIL_SCALE, thumbnailOutput } from './ffmpeg-args.js';

const run = promisify(execFile);

/**
 * The crop clip's size: 9:16 at the render default (720x1280), or the source's own largest 9:16
 * window when that is smaller (upscaling a small source only makes a bigger file).
 */
export function cropClipSize(sourceWidth: number, sourceHeight: number): { width: number; height: number } {
  const window = largestWindow(sourceWidth, sourceHeight, CROP_CLIP.width / CROP_CLIP.height);
  if (window.height >= CROP_CLIP.height) return { ...CROP_CLIP };
  return { width: window.width, height: window.height };
}

const CROP_CLIP = { width: 720, height: 1280 };

export interface CropClipSpec {
  sourcePath: string;
  out: string;
  start: number;
  end: number;
  sourceWidth: number;
  sourceHeight: number;
  reframe: Reframe | null;
  /** Absent: BT.709 SDR. */
  sourceColour?: SourceColour;
  audioStream?: number;
  encoder: RenderSpec['encoder'];
  workDir: string;
}

/**
 * The reframed vertical cut of one short, without captions: what `cropFileUrl` serves. The same
 * graph and encoder choice as a render (one crop path), so the clip shows what a render will show.
 */
export async function cutCropClip(
  ffmpegPath: string,
  spec: CropClipSpec,
  opts: { signal?: AbortSignal; onProgress?: (f: number) => void } = {},
): Promise<void> {
  const args = await prepareRender({
    sourcePath: spec.sourcePath,
    startTime: spec.start,
    endTime: spec.end,
    words: [],
    output: { ...cropClipSize(spec.sourceWidth, spec.sourceHeight), path: spec.out },
    reframe: spec.reframe,
    caption: null,
    encoder: spec.encoder,
    workDir: spec.workDir,
    sourceWidth: spec.sourceWidth,
    sourceHeight: spec.sourceHeight,
    sourceColour: spec.sourceColour,
    audioStream: spec.audioStream,
  });
  await runFfmpeg(ffmpegPath, args, { durationSec: spec.end - spec.start, signal: opts.signal, onProgress: opts.onProgress });
  // The graph oriented a mirrored source's frames: the clip must not carry the source's matrix.
  if (spec.sourceColour?.orient) await clearDisplayMatrix(spec.out);
}

/** One JPEG frame of `src` for a thumbnail; an HDR source's tone-mapped (colour.ts). */
export async function grabThumbnail(
  ffmpegPath: string,
  src: string,
  out: string,
  atSec: number,
  signal?: AbortSignal,
  colour: SourceColour = SDR_BT709,
): Promise<void> {
  const toBt709 = hdrToSdrFilter(colour);
  await run(
    ffmpegPath,
    [
      '-nostdin',
      '-hide_banner',
      '-loglevel',
      'error',
      ...inputGuard(),
      '-y',
      '-ss',
      Math.max(0, atSec).toFixed(3),
      ...orientInputArgs(colour.orient),
      '-i',
      src,
      '-vf',
      `${colour.orient ? `${colour.orient},` : ''}${THUMBNAIL_SCALE}${toBt709 ? `,${toBt709}` : ''}`,
      ...thumbnailOutput(out),
    ],
    { signal, env: toolEnv() },
  );
}
