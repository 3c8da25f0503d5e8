import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { inputGuard } from '../../../common/src/media/input-guard.js';

const run = promisify(execFile);

/** A centred 9:16 window of the source, in source pixels (even sizes for yuv420p). */
export function centredPortraitCrop(srcW: number, srcH: number): { x: number; y: number; w: number; h: number } {
  let h = srcH;
  let w = Math.floor((h * 9) / 16);
  if (w > srcW) {
    w = srcW;
    h = Math.floor((w * 16) / 9);
  }
  w -= w % 2;
  h -= h % 2;
  return { x: Math.floor((srcW - w) / 2), y: Math.floor((srcH - h) / 2), w, h };
}

/** The cropped vertical cut of one short (no captions): what `cropFileUrl` serves. */
export function buildCropClipArgs(src: string, out: string, o: { start: number; end: number; srcW: number; srcH: number; maxHeight?: number }): string[] {
  const c = centredPortraitCrop(o.srcW, o.srcH);
  const outH = Math.min(c.h, o.maxHeight ?? 1280);
  const outW = Math.round((outH * 9) / 16 / 2) * 2;
  return [
    '-nostdin', '-hide_banner', '-loglevel', 'error', ...inputGuard(), '-y',
    '-ss', o.start.toFixed(3), '-to', o.end.toFixed(3), '-i', src,
    '-vf', `crop=${c.w}:${c.h}:${c.x}:${c.y},scale=${outW}:${outH}`,
    '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p',
    '-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart', out,
  ];
}

export async function cutCropClip(ffmpegPath: string, src: string, out: string, o: Parameters<typeof buildCropClipArgs>[2], signal?: AbortSignal): Promise<void> {
  await run(ffmpegPath, buildCropClipArgs(src, out, o), { signal, maxBuffer: 4 * 1024 * 1024 });
}

/** One JPEG frame, at most 480 px high, for thumbnails. */
export async function grabThumbnail(ffmpegPath: string, src: string, out: string, atSec: number, signal?: AbortSignal): Promise<void> {
  await run(ffmpegPath, [
    '-nostdin', '-hide_banner', '-loglevel', 'error', ...inputGuard(), '-y',
    '-ss', Math.max(0, atSec).toFixed(3), '-i', src, '-frames:v', '1', '-vf', "scale=-2:'min(480,ih)'", '-q:v', '4', out,
  ], { signal });
}
