// The parts of a render's ffmpeg command lines that each of them has alike: the render or one of its
// chunks (render-args.ts), and a chunked render's sound, trimmed chunks and join (render-chunks.ts).
import path from 'node:path';
import { inputGuard } from '@shorts/common/media/input-guard';

/** `file:` so a ':' in a path is never read as a protocol name (and a leading '-' never as an option). */
export const fileUrl = (p: string) => `file:${path.resolve(p)}`;

/** Quiet, overwriting, never reading the terminal; with `progress`, its progress on stdout, where
 *  runFfmpeg reads it. */
export function ffmpegPreamble(o: { progress: boolean }): string[] {
  return ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error', ...(o.progress ? ['-nostats', '-progress', 'pipe:1'] : [])];
}

/** A user's source read over [from, to] (seconds as ffmpeg's -ss/-to read them), behind the input
 *  guard; `beforeSeek`: input options of its own (the display matrix's). */
export function sourceInput(sourcePath: string, from: string, to: string, beforeSeek: string[] = []): string[] {
  return [...inputGuard(), ...beforeSeek, '-ss', from, '-to', to, '-i', fileUrl(sourcePath)];
}

/** An MP4 with none of the source's metadata or chapters; `faststart`: its index first, so that it
 *  plays while it downloads. */
export function mp4Output(out: string, o: { faststart: boolean }): string[] {
  return ['-map_metadata', '-1', '-map_chapters', '-1', ...(o.faststart ? ['-movflags', '+faststart'] : []), '-f', 'mp4', fileUrl(out)];
}

/** Thumbnails (of a source, a crop clip, a short) are JPEGs at most 480 px high. */
export const THUMBNAIL_SCALE = "scale=-2:'min(480,ih)'";

/** A thumbnail's output: one JPEG picture, written at `out` as named (`-update`: no `%d` pattern). */
export const thumbnailOutput = (out: string): string[] => ['-frames:v', '1', '-q:v', '4', '-f', 'image2', '-update', '1', fileUrl(out)];
