// Edited footage composed from the GRID clips (../shared/media): the shots an interview is cut from
// (a wide two-shot, close-ups, a slide under a voice), joined by hard cuts on exact frames, so the
// reframing tests know where every cut is and who is heard when. Also plain pictures with a dissolve,
// a fade and a flash for the shot detector's false-cut checks.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Box } from '@shorts/common/reframe/types';
import { extractAudio } from '../../node-agent/src/media/audio-extract.js';
import { AAC, encodeSegment, gridClips, segmentAudio, x264 } from './grid.js';
import { FFMPEG } from './media.js';

const run = promisify(execFile);
export const EDIT_FPS = 25;

export type EditedShot =
  /** Both people side by side, one talking, the other a still frame of themselves. */
  | { kind: 'wide'; talker: 0 | 1 }
  /** One person filling the frame (a close-up), talking or listening (a still frame). */
  | { kind: 'close'; person: 0 | 1; talking: boolean }
  /** A drawn slide (no face) with one person's voice under it. */
  | { kind: 'slide'; voice: 0 | 1 };

export interface ComposedShot {
  /** On the composed video's clock; `start` is the shot's first frame. */
  start: number;
  end: number;
  shot: EditedShot;
  /** Who is heard, and their words on the composed clock. */
  speaker: 0 | 1;
  speech: { start: number; end: number };
  /** Where each visible person's face region sits (source pixels); absent when not visible. */
  people: Partial<Record<0 | 1, Box>>;
}

export interface EditedVideo {
  videoPath: string;
  wavPath: string;
  width: number;
  height: number;
  durationSec: number;
  shots: ComposedShot[];
  /** The first frame of every shot after the first. */
  cuts: number[];
}

const SHOT_SEC = 3;

/** One 3 s shot per entry, each the talker's whole GRID clip, joined by hard cuts. */
export async function composeEditedInterview(
  dir: string,
  shots: EditedShot[],
  opts: { width?: number; height?: number } = {},
): Promise<EditedVideo> {
  const clips = gridClips();
  if (!clips) throw new Error('GRID clips not found (../shared/media)');
  const { width = 1280, height = 720 } = opts;
  const files: string[] = [];
  const composed: ComposedShot[] = [];
  for (const [i, shot] of shots.entries()) {
    const file = path.join(dir, `edited-${i}.mp4`);
    const speaker = shot.kind === 'wide' ? shot.talker : shot.kind === 'close' ? shot.person : shot.voice;
    const { filters, people } = shotPicture(shot, width, height);
    filters.push(segmentAudio(speaker, SHOT_SEC));
    await encodeSegment(clips, filters, '[v]', SHOT_SEC, file, ['-r', String(EDIT_FPS), ...x264(18), ...AAC]);
    files.push(file);
    const start = i * SHOT_SEC;
    const words = clips[speaker].speech;
    composed.push({ start, end: start + SHOT_SEC, shot, speaker, speech: { start: start + words.start, end: start + words.end }, people });
  }
  const videoPath = path.join(dir, 'edited.mp4');
  await joinShots(files, videoPath);
  const wavPath = path.join(dir, 'edited.wav');
  await extractAudio(FFMPEG, videoPath, wavPath);
  return {
    videoPath,
    wavPath,
    width,
    height,
    durationSec: shots.length * SHOT_SEC,
    shots: composed,
    cuts: composed.slice(1).map((s) => s.start),
  };
}

/** The filter graph of one shot's picture ([v]), from inputs 0 and 1 (the two GRID clips). */
function shotPicture(shot: EditedShot, width: number, height: number): { filters: string[]; people: Partial<Record<0 | 1, Box>> } {
  const clips = gridClips()!;
  const seconds = `trim=duration=${SHOT_SEC},setpts=PTS-STARTPTS,fps=${EDIT_FPS}`;
  const still = (person: 0 | 1) =>
    `[${person}:v]trim=start=${clips[person].stillAt}:duration=0.04,setpts=PTS-STARTPTS,loop=loop=-1:size=1,trim=duration=${SHOT_SEC},setpts=N/${EDIT_FPS}/TB`;
  if (shot.kind === 'slide') {
    // A title bar, three bullet lines and a chart: flat colours, no face.
    const u = (v: number) => Math.round(v * height);
    const boxes = [
      `drawbox=x=${u(0.08)}:y=${u(0.08)}:w=${width - 2 * u(0.08)}:h=${u(0.12)}:color=0x1f4e9c@1:t=fill`,
      ...[0.32, 0.45, 0.58].map(
        (y, k) => `drawbox=x=${u(0.12)}:y=${u(y)}:w=${Math.round(width * (0.45 - 0.07 * k))}:h=${u(0.05)}:color=0x555555@1:t=fill`,
      ),
      ...[0.3, 0.5, 0.7].map(
        (h, k) =>
          `drawbox=x=${Math.round(width * (0.66 + 0.08 * k))}:y=${u(0.85 - h * 0.6)}:w=${Math.round(width * 0.05)}:h=${u(h * 0.6)}:color=0xd9822b@1:t=fill`,
      ),
    ];
    return { filters: [`color=c=0xf4f1ea:s=${width}x${height}:r=${EDIT_FPS}:d=${SHOT_SEC},${boxes.join(',')}[v]`], people: {} };
  }
  if (shot.kind === 'close') {
    // The clip's 16:9 band around the face (its upper part), scaled up to fill the frame.
    const src = shot.talking ? `[${shot.person}:v]${seconds}` : still(shot.person);
    const cw = 360;
    const ch = 202;
    // The face fills much of the frame: the person's region is all of it.
    const face = { x: 0, y: 0, width, height };
    return { filters: [`${src},crop=${cw}:${ch}:0:20,scale=${width}:${height},setsar=1[v]`], people: { [shot.person]: face } };
  }
  const pw = 2 * Math.round((360 * 1.5) / 2);
  const ph = 2 * Math.round((288 * 1.5) / 2);
  const panels = [0.25, 0.75].map((c) => ({
    x: Math.round(c * width - pw / 2),
    y: Math.round((height - ph) / 2),
    width: pw,
    height: ph,
  })) as [Box, Box];
  const filters = [`color=c=0x2a2a2a:s=${width}x${height}:r=${EDIT_FPS}:d=${SHOT_SEC}[bg0]`];
  for (const person of [0, 1] as const) {
    const src = person === shot.talker ? `[${person}:v]${seconds}` : still(person);
    filters.push(`${src},scale=${pw}:${ph},setsar=1[p${person}]`);
    filters.push(
      `[bg${person}][p${person}]overlay=${panels[person].x}:${panels[person].y}:shortest=1${person === 1 ? '[v]' : `[bg${person + 1}]`}`,
    );
  }
  return { filters, people: { 0: panels[0], 1: panels[1] } };
}

async function joinShots(files: string[], out: string): Promise<void> {
  const inputs = files.flatMap((f) => ['-i', f]);
  // Each shot trimmed to exactly SHOT_SEC of both streams: concat otherwise pads a shot's video to its
  // (AAC-rounded) audio length with a repeated frame, and every later cut lands a frame late.
  const trimmed = files
    .map(
      (_, i) =>
        `[${i}:v]trim=duration=${SHOT_SEC},setpts=PTS-STARTPTS[v${i}];[${i}:a]atrim=duration=${SHOT_SEC},asetpts=PTS-STARTPTS[a${i}]`,
    )
    .join(';');
  const concat = `${trimmed};` + files.map((_, i) => `[v${i}][a${i}]`).join('') + `concat=n=${files.length}:v=1:a=1[v][a]`;
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    ...inputs,
    '-filter_complex',
    concat,
    '-map',
    '[v]',
    '-map',
    '[a]',
    ...x264(18),
    '-g',
    String(EDIT_FPS * 2),
    ...AAC,
    out,
  ]);
}

/**
 * Plain pictures for the shot detector, `seconds` long at 25 fps, 1280x720, with a voice-less tone:
 * `still` a slowly drifting test picture (no edit), `flash` the same with white frames, `fade` it faded
 * to black and back in (one shot), `dissolve` one picture dissolving into another over 1 s, `cuts`
 * three pictures joined by hard cuts, `ragged-cuts` three joined with a frame of something else at
 * each join (`cuts` are then those frames' times).
 */
export async function composePictureEdits(
  dir: string,
  kind: 'still' | 'flash' | 'fade' | 'dissolve' | 'cuts' | 'ragged-cuts',
  seconds = 12,
): Promise<{ videoPath: string; fps: number; cuts: number[]; dissolves: Array<{ start: number; end: number }> }> {
  const videoPath = path.join(dir, `pictures-${kind}.mp4`);
  const size = '1280x720';
  // The ragged cuts are at 60 fps, where a cut's rise in the scene score spreads over several frames.
  const fps = kind === 'ragged-cuts' ? 60 : EDIT_FPS;
  // A drifting, slowly zooming picture: what a still camera on a moving scene gives the detector.
  const drifting = (src: string, d: number) =>
    `${src}=s=1920x1080:r=${fps}:d=${d},zoompan=z='1.1+0.05*sin(on/40)':x='iw/2-iw/zoom/2+30*sin(on/25)':y='ih/2-ih/zoom/2':d=1:s=${size}:fps=${fps}`;
  let graph: string;
  const cuts: number[] = [];
  const dissolves: Array<{ start: number; end: number }> = [];
  switch (kind) {
    case 'still':
      graph = `${drifting('testsrc2', seconds)}[v]`;
      break;
    case 'flash':
      // White frames (1, 2 and 3 of them) three times: a camera flash, a lightning strike.
      graph = `${drifting('testsrc2', seconds)},${[
        [3, 1],
        [6, 2],
        [9, 3],
      ]
        .map(([t, n]) => `drawbox=x=0:y=0:w=iw:h=ih:color=white@0.95:t=fill:enable='between(n,${t! * EDIT_FPS},${t! * EDIT_FPS + n! - 1})'`)
        .join(',')}[v]`;
      break;
    case 'fade':
      graph = `${drifting('testsrc2', seconds)},fade=t=out:st=${seconds / 2 - 1}:d=1,fade=t=in:st=${seconds / 2}:d=1[v]`;
      break;
    case 'dissolve': {
      const half = seconds / 2;
      graph =
        `${drifting('testsrc2', seconds)}[a];${drifting('smptehdbars', seconds)}[b];` +
        `[a][b]blend=all_expr='A*(1-clip((T-${half - 0.5})/1,0,1))+B*clip((T-${half - 0.5})/1,0,1)'[v]`;
      dissolves.push({ start: half - 0.5, end: half + 0.5 });
      break;
    }
    case 'cuts': {
      const third = Math.round((seconds / 3) * EDIT_FPS) / EDIT_FPS;
      graph = `${drifting('testsrc2', third)}[a];${drifting('smptehdbars', third)}[b];${drifting('rgbtestsrc', seconds - 2 * third)}[c];[a][b][c]concat=n=3:v=1[v]`;
      cuts.push(third, 2 * third);
      break;
    }
    case 'ragged-cuts': {
      // Cuts as edited uploads have them. First, the people leave the frame one frame before the cut
      // (a flash frame of the bare set, left by the editor) and the new shot is a picture that changes
      // fast in its first frames (a random Game of Life settling): ffmpeg's scene score then rises on
      // three frames in a row. Then a black frame between two shots.
      const third = Math.round((seconds / 3) * fps) / fps;
      const frame = 1 / fps;
      const set = `color=c=0x6e8e41:s=${size}:r=${fps}`;
      graph =
        `${set}:d=${third - frame}[bg];testsrc2=s=480x360:r=${fps}:d=${third - frame}[p];[bg][p]overlay=x=400:y=180[a];` +
        `${set}:d=${frame}[f];` +
        `life=s=320x180:r=${fps}:ratio=0.3:mold=10:seed=1:life_color=0xe0c070:death_color=0x203050,scale=${size}:flags=neighbor,trim=duration=${third - frame},setsar=1[b];` +
        `color=c=black:s=${size}:r=${fps}:d=${frame}[k];${drifting('rgbtestsrc', seconds - 2 * third)}[c];` +
        `[a][f][b][k][c]concat=n=5:v=1[v]`;
      cuts.push(third - frame, 2 * third - frame);
      break;
    }
  }
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-filter_complex',
    graph,
    '-map',
    '[v]',
    '-t',
    String(seconds),
    ...x264(20),
    '-g',
    String(fps * 2),
    videoPath,
  ]);
  return { videoPath, fps, cuts, dissolves };
}
