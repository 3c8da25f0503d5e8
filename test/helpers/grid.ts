// Test videos composed from the GRID corpus clips in ../shared/media (real people talking to the
// camera; GRID corpus, Cooke et al. 2006, CC BY 4.0): two people side by side on a 16:9 canvas, one
// talking while the other shows a still frame of themselves, then the other. Used by the reframing
// tests (detection, tracking, who speaks, the camera path).
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@shorts/common/paths';
import type { Box } from '@shorts/common/reframe/types';
import { extractAudio } from '../../node-agent/src/media/audio-extract.js';
import { FFMPEG } from './media.js';

const run = promisify(execFile);

/** ../shared/media next to the repository (the main checkout), or the shared folder a worktree sees. */
export function sharedMediaDir(): string | undefined {
  const candidates = [path.resolve(repoRoot(), '../shared/media'), path.resolve(repoRoot(), '../../shared/media')];
  return candidates.find((dir) => existsSync(path.join(dir, 'grid_swwp2s.mpg')));
}

export interface GridClip {
  name: string;
  file: string;
  /** Seconds of the clip's speech (first to last word). */
  speech: { start: number; end: number };
  /** A moment with the mouth closed, before the first word: the "listening" still. */
  stillAt: number;
  durationSec: number;
}

/** GRID `.align` files count in 1/1000 of a 25 fps frame. */
function speechFromAlign(file: string): { start: number; end: number } {
  const words = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((w) => w[2] !== 'sil');
  return { start: Number(words[0]![0]) / 25_000, end: Number(words.at(-1)![1]) / 25_000 };
}

/** The two GRID speakers, or undefined when the shared media folder is absent (tests then skip). */
export function gridClips(): [GridClip, GridClip] | undefined {
  const dir = sharedMediaDir();
  if (!dir) return undefined;
  return [
    {
      name: 'swwp2s',
      file: path.join(dir, 'grid_swwp2s.mpg'),
      speech: speechFromAlign(path.join(dir, 'grid_swwp2s.align')),
      stillAt: 0.12,
      durationSec: 3,
    },
    // No alignment ships with this one; its speech span is measured (silencedetect, see its .source.txt).
    { name: 'bbaf2n', file: path.join(dir, 'grid_bbaf2n.mpg'), speech: { start: 0.46, end: 2.51 }, stillAt: 0.12, durationSec: 3 },
  ];
}

/** How the person who is not talking looks: a frozen frame; that frame gently panned and zoomed (a
 *  listener who moves a little); the clip's own silent lead-in played back and forth (a real person
 *  not speaking: blinks, breath, small head movements); or the frozen frame nodding (tilted forward
 *  and back in perspective, twice a second-and-a-half). */
export type ListenerStyle = 'still' | 'drift' | 'idle' | 'nod';

export interface ComposeOptions {
  /** Who talks in each segment, in order (index into gridClips(); null: nobody talks, both still). */
  turns: Array<0 | 1 | null>;
  width?: number;
  height?: number;
  /** Size of each person's panel relative to the 360x288 clip. */
  panelScale?: number;
  listener?: ListenerStyle;
  /** Which people are on screen (default both); a missing one leaves its side empty. */
  people?: Array<0 | 1>;
  /** Panel centres as fractions of the canvas width (default one quarter and three quarters). */
  centres?: [number, number];
  /** Cut each segment to the talker's words plus `tight` seconds either side, so one person answers
   *  the other after a short pause (default: whole 3 s clips, about 1.3 s of silence between turns). */
  tight?: number;
}

export interface ComposedTurn {
  /** Segment on the composed video's clock. */
  start: number;
  end: number;
  speaker: 0 | 1 | null;
  /** The talker's words, on the composed clock (absent when nobody talks). */
  speech?: { start: number; end: number };
}

export interface ComposedVideo {
  videoPath: string;
  /** 16 kHz mono WAV of the whole video, as analyze-video extracts it. */
  wavPath: string;
  width: number;
  height: number;
  durationSec: number;
  /** Where each person's panel sits on the canvas (source pixels). */
  panels: [Box, Box];
  turns: ComposedTurn[];
}

/** The frame rate of every composed test video. */
export const FPS = 25;
/** x264 as the composed test videos are encoded: ultrafast, at `crf` (x264's default when not given), 4:2:0. */
export const x264 = (crf?: number): string[] => [
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  ...(crf === undefined ? [] : ['-crf', String(crf)]),
  '-pix_fmt',
  'yuv420p',
];
/** Their sound. */
export const AAC = ['-c:a', 'aac', '-b:a', '96k'];
/** How every composed test video is encoded: x264 at CRF 20, a keyframe a second, AAC sound. */
export const GRID_ENCODE = [...x264(20), '-g', String(FPS), ...AAC];

/**
 * One segment's sound as [a]: the clip of input `speaker` (0 or 1) from `from` (when given) for
 * `seconds`, as 44.1 kHz mono padded to the picture's length; silence where nobody speaks.
 */
export function segmentAudio(speaker: number | null, seconds: number, from?: number): string {
  if (speaker === null) return `anullsrc=r=44100:cl=mono,atrim=duration=${seconds}[a]`;
  const start = from === undefined ? '' : `start=${from}:`;
  return `[${speaker}:a]atrim=${start}duration=${seconds},asetpts=PTS-STARTPTS,aresample=44100,aformat=channel_layouts=mono,apad[a]`;
}

/** Encodes one segment: a graph over the two GRID clips (inputs 0 and 1) ending in `video` and [a]. */
export async function encodeSegment(
  clips: [GridClip, GridClip],
  filters: string[],
  video: string,
  seconds: number,
  file: string,
  encode: string[] = GRID_ENCODE,
): Promise<void> {
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-i',
    clips[0].file,
    '-i',
    clips[1].file,
    '-filter_complex',
    filters.join(';'),
    '-map',
    video,
    '-map',
    '[a]',
    '-t',
    String(seconds),
    ...encode,
    file,
  ]);
}

function listenerFilter(input: string, clip: GridClip, w: number, h: number, seconds: number, style: ListenerStyle, out: string): string {
  if (style === 'idle') {
    // Before the first word: 0.04 s to 0.1 s short of it, forwards then backwards, repeated.
    const end = (clip.speech.start - 0.1).toFixed(2);
    return (
      `${input}trim=start=0.04:end=${end},setpts=PTS-STARTPTS,fps=${FPS},scale=${w}:${h},setsar=1,split[${out.slice(1, -1)}f][${out.slice(1, -1)}r];` +
      `[${out.slice(1, -1)}r]reverse[${out.slice(1, -1)}b];[${out.slice(1, -1)}f][${out.slice(1, -1)}b]concat=n=2:v=1:a=0,loop=loop=-1:size=${Math.round((Number(end) - 0.04) * FPS * 2)},trim=duration=${seconds},setpts=N/${FPS}/TB${out}`
    );
  }
  const still = `${input}trim=start=${clip.stillAt}:duration=0.04,setpts=PTS-STARTPTS,loop=loop=-1:size=1,trim=duration=${seconds},setpts=N/${FPS}/TB`;
  if (style === 'still') return `${still},scale=${w}:${h},setsar=1${out}`;
  if (style === 'nod') {
    // Pitching forward: the top of the head recedes (top edge narrower) and the face moves down.
    const d = `(${(0.025 * w).toFixed(1)}*(1-cos(2*PI*on/${Math.round(FPS * 0.75)})))`;
    return `${still},scale=${w}:${h},perspective=x0='-${d}':y0='-2*${d}':x1='W+${d}':y1='-2*${d}':x2='0':y2='H-${d}':x3='W':y3='H-${d}':eval=frame:sense=destination,setsar=1${out}`;
  }
  // A slow zoom between 1.03x and 1.09x and a sideways sway of a few pixels, like a listener's
  // breathing and small shifts; no mouth movement.
  const period = 3 * FPS;
  return `${still},scale=${w * 2}:${h * 2},zoompan=z='1.06+0.03*sin(2*PI*on/${period})':x='iw/2-iw/zoom/2+10*sin(2*PI*on/${period * 0.8})':y='ih/2-ih/zoom/2+4*sin(2*PI*on/${period * 1.3})':d=1:s=${w}x${h}:fps=${FPS},setsar=1${out}`;
}

/** Composes the conversation; each segment is one clip long (3 s), or its words (see `tight`). */
export async function composeConversation(dir: string, opts: ComposeOptions): Promise<ComposedVideo> {
  const clips = gridClips();
  if (!clips) throw new Error('GRID clips not found (../shared/media)');
  const { width = 1280, height = 720, panelScale = 1.5, listener = 'still', people = [0, 1], centres = [0.25, 0.75] } = opts;
  const pw = 2 * Math.round((360 * panelScale) / 2);
  const ph = 2 * Math.round((288 * panelScale) / 2);
  const panels = centres.map((c) => ({ x: Math.round(c * width - pw / 2), y: Math.round((height - ph) / 2), width: pw, height: ph })) as [
    Box,
    Box,
  ];
  const segments: string[] = [];
  const turns: ComposedTurn[] = [];
  let start = 0;
  for (const [i, speaker] of opts.turns.entries()) {
    const file = path.join(dir, `grid-seg-${i}.mp4`);
    const talker = speaker === null ? undefined : clips[speaker];
    // Where in the talker's clip this segment starts, and how long it is.
    const from = talker && opts.tight !== undefined ? Math.max(0, talker.speech.start - opts.tight) : 0;
    const seg =
      talker && opts.tight !== undefined ? Number((Math.min(talker.durationSec, talker.speech.end + opts.tight) - from).toFixed(2)) : 3;
    const filters: string[] = [`color=c=0x2a2a2a:s=${width}x${height}:r=${FPS}:d=${seg}[bg0]`];
    let last = 'bg0';
    for (const [k, person] of people.entries()) {
      const v = `[${person}:v]`;
      const label = `[p${k}]`;
      if (person === speaker)
        filters.push(`${v}trim=start=${from}:duration=${seg},setpts=PTS-STARTPTS,fps=${FPS},scale=${pw}:${ph},setsar=1${label}`);
      else filters.push(listenerFilter(v, clips[person]!, pw, ph, seg, listener, label));
      const box = panels[person]!;
      filters.push(`[${last}]${label}overlay=${box.x}:${box.y}:shortest=1[bg${k + 1}]`);
      last = `bg${k + 1}`;
    }
    filters.push(segmentAudio(speaker, seg, from));
    await encodeSegment(clips, filters, `[${last}]`, seg, file);
    segments.push(file);
    turns.push({
      start,
      end: start + seg,
      speaker,
      ...(talker ? { speech: { start: start + talker.speech.start - from, end: start + talker.speech.end - from } } : {}),
    });
    start += seg;
  }
  const videoPath = path.join(dir, 'conversation.mp4');
  await joinSegments(segments, videoPath);
  const wavPath = path.join(dir, 'conversation.wav');
  await extractAudio(FFMPEG, videoPath, wavPath);
  return { videoPath, wavPath, width, height, durationSec: start, panels, turns };
}

/** Segments of one size and rate, each with sound, joined end to end into one encoded video. */
export async function joinSegments(files: string[], videoPath: string): Promise<void> {
  const concat = files.map((_, i) => `[${i}:v][${i}:a]`).join('') + `concat=n=${files.length}:v=1:a=1[v][a]`;
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    ...files.flatMap((f) => ['-i', f]),
    '-filter_complex',
    concat,
    '-map',
    '[v]',
    '-map',
    '[a]',
    ...GRID_ENCODE,
    videoPath,
  ]);
}

/** A video with no face at all (a moving test pattern) over a GRID clip's speech. */
export async function composeNoFaceVideo(
  dir: string,
  opts: { width?: number; height?: number; seconds?: number } = {},
): Promise<{ videoPath: string; wavPath: string; width: number; height: number; durationSec: number }> {
  const clips = gridClips();
  if (!clips) throw new Error('GRID clips not found (../shared/media)');
  const { width = 1280, height = 720, seconds = 3 } = opts;
  const videoPath = path.join(dir, 'no-face.mp4');
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${width}x${height}:rate=${FPS}:duration=${seconds}`,
    '-i',
    clips[0].file,
    '-map',
    '0:v',
    '-map',
    '1:a',
    '-t',
    String(seconds),
    ...x264(),
    ...AAC,
    videoPath,
  ]);
  const wavPath = path.join(dir, 'no-face.wav');
  await extractAudio(FFMPEG, videoPath, wavPath);
  return { videoPath, wavPath, width, height, durationSec: seconds };
}
