// Shorts of a source without speech (B-roll, a screen recording without a microphone, a silent
// clip): nothing can be read, so the picture decides. Stretches that start and end on shot changes
// and move the most, as many as a talk of that length would get.
import { inputGuard } from '@shorts/common/media/input-guard';
import { toolEnv } from '@shorts/common/media/tools';
import { spawn } from 'node:child_process';
import { defaultShortCount } from './selector.js';
import { numberShorts, type Short } from './types.js';

/** Frames a second looked at, and their size (grey): enough to see a cut and how much moves. */
const LOOK_FPS = 2;
const [LOOK_W, LOOK_H] = [64, 36];
/** Mean change of a pixel (0-1) between two looks that is a cut, not motion. */
const CUT_CHANGE = 0.25;
/** A short of the picture: this long where the video allows, between shot changes where it has them. */
const [MIN_SEC, TARGET_SEC, MAX_SEC] = [10, 30, 60];

export const FROM_PICTURE_REASON = 'Chosen from the picture (shot changes and motion): the video has no speech';

/** How much each look differs from the one before (0-1), from ffmpeg's grey thumbnails. */
async function lookChanges(ffmpegPath: string, file: string, signal?: AbortSignal): Promise<number[]> {
  const args = [
    ...['-nostdin', '-hide_banner', '-loglevel', 'error', ...inputGuard(), '-i', file],
    ...['-map', '0:v:0', '-vf', `fps=${LOOK_FPS},scale=${LOOK_W}:${LOOK_H}:flags=area,format=gray`, '-f', 'rawvideo', 'pipe:1'],
  ];
  const child = spawn(ffmpegPath, args, { stdio: ['ignore', 'pipe', 'ignore'], env: toolEnv(), signal });
  const chunks: Buffer[] = [];
  for await (const chunk of child.stdout) chunks.push(chunk as Buffer);
  const frames = Buffer.concat(chunks);
  const size = LOOK_W * LOOK_H;
  const changes: number[] = [0];
  for (let f = 1; (f + 1) * size <= frames.length; f++) {
    let sum = 0;
    for (let i = 0; i < size; i++) sum += Math.abs(frames[f * size + i]! - frames[(f - 1) * size + i]!);
    changes.push(sum / size / 255);
  }
  return changes;
}

/**
 * Up to the usual number of shorts for the length (selector.ts), each from a shot change (or the
 * start) to the shot change nearest 30 s on (10-60 s), the ones with the most motion first; never
 * overlapping. A video shorter than a short is one short, whole.
 */
export async function shortsFromPicture(ffmpegPath: string, file: string, durationSec: number, signal?: AbortSignal): Promise<Short[]> {
  if (durationSec <= MIN_SEC * 1.5) return numberShorts([shortOf(0, durationSec)]);
  const changes = await lookChanges(ffmpegPath, file, signal);
  const timeOf = (look: number) => look / LOOK_FPS;
  const cuts = [0, ...changes.flatMap((c, i) => (c >= CUT_CHANGE ? [timeOf(i)] : [])), durationSec];
  const motion = (from: number, to: number) => {
    const looks = changes.slice(Math.ceil(from * LOOK_FPS) + 1, Math.floor(to * LOOK_FPS) + 1).filter((c) => c < CUT_CHANGE);
    return looks.length ? looks.reduce((a, b) => a + b, 0) / looks.length : 0;
  };
  const candidates = cuts
    .filter((start) => start + MIN_SEC <= durationSec)
    .map((start) => {
      const ends = cuts.filter((c) => c >= start + MIN_SEC && c <= start + MAX_SEC);
      const end = ends.length
        ? ends.reduce((a, b) => (Math.abs(b - start - TARGET_SEC) < Math.abs(a - start - TARGET_SEC) ? b : a))
        : Math.min(durationSec, start + TARGET_SEC);
      return { start, end, motion: motion(start, end) };
    })
    .sort((a, b) => b.motion - a.motion || a.start - b.start);
  const picked: Array<{ start: number; end: number }> = [];
  for (const c of candidates) {
    if (picked.length >= defaultShortCount(durationSec)) break;
    if (picked.every((p) => c.end <= p.start || c.start >= p.end)) picked.push(c);
  }
  return numberShorts(picked.map((p) => shortOf(p.start, p.end)));
}

function shortOf(start: number, end: number): Omit<Short, 'id'> {
  const clock = (s: number) => `${Math.floor(s / 60)}:${String(Math.floor(s % 60)).padStart(2, '0')}`;
  return {
    title: `Scene at ${clock(start)}`,
    reason: FROM_PICTURE_REASON,
    startTime: Math.round(start * 1000) / 1000,
    endTime: Math.round(end * 1000) / 1000,
    startId: null,
    endId: null,
    text: '',
  };
}
