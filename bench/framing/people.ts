// The people and voices the framing evaluation composes its scenes from, found by listing the shared
// media folder rather than by name, so a recording added there joins the next run:
// - a person: a video of someone talking to the camera with sound and a reference transcript beside it
//   (`<name>.ref.txt`; the GRID clips today), whose speech span is measured (silencedetect) and whose
//   face box is found once with the agent's own face detector;
// - a voice: a recording with sound and a transcript but no picture (`.wav`), heard off screen.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@shorts/common/logger';
import type { Box } from '@shorts/common/reframe/types';
import { sharedFaceDetector } from '../../node-agent/src/reframe/detector-factory.js';
import { FFMPEG } from '../../test/helpers/media.js';

const run = promisify(execFile);

export interface Person {
  name: string;
  file: string;
  width: number;
  height: number;
  durationSec: number;
  /** First to last sound of the sentence, seconds into the clip. */
  speech: { start: number; end: number };
  /** First to last word: the speech span less a click or breath before or after it (labels only: who
   *  is heard when; scenes are cut by `speech`). */
  words: { start: number; end: number };
  /** The face in the clip's own pixels (the agent's detector on a frame before the first word). */
  face: Box;
}

export interface Voice {
  name: string;
  file: string;
  durationSec: number;
  speech: { start: number; end: number };
}

const VIDEO = /\.(mpg|mp4|mov|mkv|webm)$/i;

/** The shared media folder beside the checkout (or beside the worktree's parent). */
export function mediaDir(root: string): string | undefined {
  return [path.resolve(root, '../shared/media'), path.resolve(root, '../../shared/media')].find((d) => existsSync(d));
}

async function probe(file: string): Promise<{ width: number; height: number; durationSec: number; audio: boolean; video: boolean }> {
  const { stderr } = await run(FFMPEG, ['-hide_banner', '-i', file], { maxBuffer: 1 << 20 }).catch((e: { stderr: string }) => e);
  const size = /Video:.*?(\d{2,5})x(\d{2,5})/.exec(stderr);
  const d = /Duration: (\d+):(\d+):([\d.]+)/.exec(stderr);
  return {
    width: Number(size?.[1] ?? 0),
    height: Number(size?.[2] ?? 0),
    durationSec: d ? Number(d[1]) * 3600 + Number(d[2]) * 60 + Number(d[3]) : 0,
    audio: /Audio:/.test(stderr),
    video: Boolean(size),
  };
}

/** A sound shorter than this between silences is a click or a breath, not a word. */
const MIN_WORD_SEC = 0.25;

/**
 * First and last sound of a recording (`speech`: where silencedetect's leading silence ends and its
 * trailing one starts), and first and last word (`words`: the first and last sound between silences
 * that lasts MIN_WORD_SEC or more). Some GRID clips open on a click or on noise that the leading
 * silence ends at, half a second before the first word.
 */
export async function speechSpan(
  file: string,
  durationSec: number,
): Promise<{ speech: { start: number; end: number }; words: { start: number; end: number } }> {
  const { stderr } = await run(FFMPEG, ['-hide_banner', '-i', file, '-vn', '-af', 'silencedetect=n=-30dB:d=0.2', '-f', 'null', '-'], {
    maxBuffer: 1 << 22,
  });
  const starts = [...stderr.matchAll(/silence_start: ([\d.]+)/g)].map((m) => Number(m[1]));
  const ends = [...stderr.matchAll(/silence_end: ([\d.]+)/g)].map((m) => Number(m[1]));
  const start = starts[0] !== undefined && starts[0] < 0.05 && ends[0] !== undefined ? ends[0] : 0;
  const last = starts.at(-1);
  const end =
    last !== undefined && last > start + 0.3 && (ends.length < starts.length || ends.at(-1)! >= durationSec - 0.05) ? last : durationSec;
  // The sounds between the silences: from the start (or a silence's end) to the next silence's start.
  const sounds: Array<{ start: number; end: number }> = [];
  if (!(starts[0]! < 0.05)) sounds.push({ start: 0, end: starts[0] ?? durationSec });
  for (const e of ends) sounds.push({ start: e, end: starts.find((s) => s > e) ?? durationSec });
  const words = sounds.filter((s) => s.end - s.start >= MIN_WORD_SEC);
  return {
    speech: { start, end },
    words: words.length ? { start: Math.max(start, words[0]!.start), end: Math.min(end, words.at(-1)!.end) } : { start, end },
  };
}

/** The face in one frame of the clip, by the agent's detector (the largest found). */
async function faceBox(file: string, at: number, width: number, height: number): Promise<Box | undefined> {
  const { stdout } = await run(
    FFMPEG,
    ['-hide_banner', '-loglevel', 'error', '-ss', String(at), '-i', file, '-frames:v', '1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
    { encoding: 'buffer', maxBuffer: 64 << 20 },
  );
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface' }, createLogger({}, 'silent'));
  const [faces] = await detector.detect([{ width, height, data: new Uint8Array(stdout) }]);
  const face = faces?.sort((a, b) => b.width * b.height - a.width * a.height)[0];
  return face && { x: face.x, y: face.y, width: face.width, height: face.height };
}

export interface Cast {
  people: Person[];
  voices: Voice[];
}

/** Every person and voice in the media folder (listed, in name order). */
export async function findCast(dir: string): Promise<Cast> {
  const people: Person[] = [];
  const voices: Voice[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const file = path.join(dir, entry);
    const stem = entry.replace(/\.[^.]+$/, '');
    if (!existsSync(path.join(dir, `${stem}.ref.txt`))) continue;
    const info = await probe(file);
    if (!info.audio || !(info.durationSec > 1)) continue;
    const { speech, words } = await speechSpan(file, info.durationSec);
    if (VIDEO.test(entry) && info.video) {
      const face = await faceBox(file, Math.max(0.04, speech.start - 0.2), info.width, info.height);
      // A picture whose talker the detector cannot see cannot be labelled: it is heard, not seen.
      if (face && face.height >= 0.2 * info.height) {
        people.push({
          name: stem.replace(/^grid_/, ''),
          file,
          width: info.width,
          height: info.height,
          durationSec: info.durationSec,
          speech,
          words,
          face,
        });
        continue;
      }
    }
    voices.push({ name: stem, file, durationSec: info.durationSec, speech });
  }
  return { people, voices };
}

export interface Footage {
  file: string;
  durationSec: number;
}

/** Whether a video holds a cut of its own (ffmpeg's scene score over 0.3 anywhere): as a background it
 *  would put an edit in the scene that its labels do not have. */
async function hasCuts(file: string): Promise<boolean> {
  const { stderr } = await run(FFMPEG, ['-hide_banner', '-i', file, '-vf', "select='gt(scene,0.3)',showinfo", '-an', '-f', 'null', '-'], {
    maxBuffer: 1 << 24,
  });
  return /pts_time:/.test(stderr);
}

/** Moving pictures without a talker to label and without cuts of their own (handheld clips): blurred,
 *  busy backgrounds behind the people. */
export async function findFootage(dir: string): Promise<Footage[]> {
  const files = readdirSync(dir)
    .sort()
    .filter((e) => VIDEO.test(e) && !existsSync(path.join(dir, `${e.replace(/\.[^.]+$/, '')}.ref.txt`)))
    .map((e) => path.join(dir, e));
  const out: Footage[] = [];
  for (const file of files) {
    const info = await probe(file);
    if (info.video && info.durationSec > 1 && !(await hasCuts(file))) out.push({ file, durationSec: info.durationSec });
  }
  return out;
}
