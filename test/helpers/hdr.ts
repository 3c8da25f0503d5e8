// HDR clips as phones make them, with known light in them: grey patches coded from nits with the
// PQ (SMPTE ST 2084) or HLG (ARIB STD-B67, on BT.2100's 1000-nit display) formulas, written here
// rather than by the filters under test, as 10-bit HEVC tagged BT.2020.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { FFMPEG } from './media.js';

const run = promisify(execFile);

/** PQ's inverse EOTF: nits to signal, 0-1. */
export function pqSignal(nits: number): number {
  const [m1, m2, c1, c2, c3] = [2610 / 16384, (2523 / 4096) * 128, 3424 / 4096, (2413 / 4096) * 32, (2392 / 4096) * 32];
  const p = Math.pow(nits / 10000, m1);
  return Math.pow((c1 + c2 * p) / (1 + c3 * p), m2);
}

/** HLG's signal for a grey shown at `nits` on the 1000-nit reference display (OOTF gamma 1.2). */
export function hlgSignal(nits: number): number {
  const scene = Math.pow(nits / 1000, 1 / 1.2);
  const [a, b] = [0.17883277, 1 - 4 * 0.17883277];
  const c = 0.5 - a * Math.log(4 * a);
  return scene <= 1 / 12 ? Math.sqrt(3 * scene) : a * Math.log(12 * scene - b) + c;
}

/** The 8-bit limited-range code an SDR display (BT.1886, gamma 2.4) shows at `relative` of its white. */
export const sdrCode = (relative: number): number => 16 + 219 * Math.pow(Math.min(1, Math.max(0, relative)), 1 / 2.4);

export interface HdrClip {
  file: string;
  width: number;
  height: number;
}

/**
 * A 640x360 clip of `seconds` at 24 fps: the top half a grey of `topNits`, the bottom half `bottomNits`.
 * PQ carries HDR10's mastering display and content light level (`peakNits`); HLG carries none, as
 * a phone's HLG does not.
 */
export async function makeHdrClip(
  dir: string,
  transfer: 'pq' | 'hlg',
  opts: { topNits: number; bottomNits: number; peakNits?: number; seconds?: number },
): Promise<HdrClip> {
  const [width, height, fps] = [640, 360, 24];
  const frames = Math.round((opts.seconds ?? 1) * fps);
  const signal = transfer === 'pq' ? pqSignal : hlgSignal;
  const code = (nits: number) => Math.round(64 + 876 * signal(nits));
  const frame = Buffer.alloc(width * height * 2 + 2 * (width / 2) * (height / 2) * 2);
  const [top, bottom] = [code(opts.topNits), code(opts.bottomNits)];
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) frame.writeUInt16LE(y < height / 2 ? top : bottom, 2 * (y * width + x));
  for (let i = width * height * 2; i < frame.length; i += 2) frame.writeUInt16LE(512, i);
  const raw = path.join(dir, `${transfer}.yuv`);
  await writeFile(raw, Buffer.concat(Array.from({ length: frames }, () => frame)));
  const trc = transfer === 'pq' ? 'smpte2084' : 'arib-std-b67';
  const peak = opts.peakNits ?? 1000;
  const hdr10 =
    transfer === 'pq'
      ? `:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(${peak * 10000},1):max-cll=${peak},400`
      : '';
  const file = path.join(dir, `${transfer}.mp4`);
  await run(FFMPEG, [
    ...['-y', '-hide_banner', '-loglevel', 'error'],
    ...['-f', 'rawvideo', '-pix_fmt', 'yuv420p10le', '-s', `${width}x${height}`, '-r', String(fps), '-i', raw],
    ...['-c:v', 'libx265', '-x265-params', `log-level=error:colorprim=bt2020:transfer=${trc}:colormatrix=bt2020nc${hdr10}`],
    ...['-pix_fmt', 'yuv420p10le', '-color_primaries', 'bt2020', '-color_trc', trc, '-colorspace', 'bt2020nc', '-tag:v', 'hvc1', file],
  ]);
  return { file, width, height };
}
