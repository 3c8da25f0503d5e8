// A wide shot of three people, small: three GRID panels on one large canvas (1080p, 4K), each face
// a known fraction of the frame's height, the clips time-shifted and mirrored so no two panels show
// the same picture; optionally turned (rotated in-plane and warped to a three-quarter view). Used by
// the small-face test and the bench that measures what finding them costs.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ShortDetections } from '@shorts/common/reframe/types';
import { extractAudio } from '../../node-agent/src/media/audio-extract.js';
import { FPS, GRID_ENCODE, gridClips } from './grid.js';
import { FFMPEG } from './media.js';

const run = promisify(execFile);

/** Where BlazeFace puts the face in each 360x288 GRID clip (centre and box height, clip pixels). */
const GRID_FACE = [
  { cx: 179, cy: 186, height: 122 },
  { cx: 153, cy: 188, height: 122 },
] as const;

/** A face as it is on the composed canvas: its centre and box height in source pixels. */
export interface KnownFace {
  cx: number;
  cy: number;
  height: number;
  /** Fraction of the frame's height the face box takes. */
  fraction: number;
}

export interface WideShot {
  videoPath: string;
  wavPath: string;
  width: number;
  height: number;
  durationSec: number;
  faces: KnownFace[];
}

export interface WideShotOptions {
  width: number;
  height: number;
  /** Each person's face height as a fraction of the frame's height (three people). */
  fractions: [number, number, number];
  seconds?: number;
  /** Turn the faces: rotate them in-plane by a few degrees, narrow and keystone them as a head
   *  turned some 40-50 degrees looks (one cheek recedes, the near side stays). */
  turned?: boolean;
  /** How far turned: the width kept (0.7 by default), the far edge's shortening (0.12) and a factor
   *  on the in-plane tilts (8-12 degrees at 1). */
  turn?: { narrow: number; keystone: number; tilt: number };
  name?: string;
  /** The backdrop cuts at this second from flat grey to a moving test pattern, behind the people
   *  (a background video's own cut), who stay as they are. */
  backdropCutAt?: number;
}

// Which clip each panel shows, from when, and mirrored or not: three different pictures.
const PEOPLE = [
  { clip: 0, from: 0, mirror: false, rotate: 8 },
  { clip: 1, from: 0.4, mirror: true, rotate: -10 },
  { clip: 0, from: 0.9, mirror: true, rotate: 12 },
] as const;

export async function composeWideShot(dir: string, opts: WideShotOptions): Promise<WideShot> {
  const clips = gridClips();
  if (!clips) throw new Error('GRID clips not found (../shared/media)');
  const { width, height, fractions, seconds = 2, turned = false, turn = { narrow: 0.7, keystone: 0.12, tilt: 1 } } = opts;
  const { backdropCutAt } = opts;
  const name =
    opts.name ??
    `wide-${width}x${height}-${fractions.join('-')}${turned ? `-turned-${turn.narrow}-${turn.keystone}-${turn.tilt}` : ''}` +
      `${backdropCutAt !== undefined ? `-cut-${backdropCutAt}` : ''}`;
  const even = (v: number) => 2 * Math.round(v / 2);
  const filters =
    backdropCutAt === undefined
      ? [`color=c=0x3a3a3a:s=${width}x${height}:r=${FPS}:d=${seconds}[bg0]`]
      : [
          `color=c=0x3a3a3a:s=${width}x${height}:r=${FPS}:d=${backdropCutAt}[grey]`,
          `testsrc2=s=${width}x${height}:r=${FPS}:d=${seconds - backdropCutAt}[pattern]`,
          '[grey][pattern]concat=n=2:v=1:a=0[bg0]',
        ];
  const faces: KnownFace[] = [];
  for (const [k, person] of PEOPLE.entries()) {
    const grid = GRID_FACE[person.clip]!;
    // The panel is sized so the clip's face comes out at the asked fraction of the frame's height.
    const ph = even((fractions[k]! * height * 288) / grid.height);
    const pw = even((ph * 360) / 288);
    // Left, middle and right thirds; heights staggered so the faces are not on one line.
    const x = Math.round(((2 * k + 1) / 6) * width - pw / 2);
    const y = Math.round([0.45, 0.3, 0.55][k]! * height - ph / 2);
    let chain = `[${person.clip}:v]trim=start=${person.from}:duration=${seconds},setpts=PTS-STARTPTS,fps=${FPS},scale=${pw}:${ph}`;
    if (person.mirror) chain += ',hflip';
    let fx = (person.mirror ? 360 - grid.cx : grid.cx) / 360;
    const fy = grid.cy / 288;
    const faceHeight = (grid.height / 288) * ph;
    if (turned) {
      // Narrowed to 70 % (the face's width foreshortened), the far side's edge shortened by 12 % of
      // the height top and bottom (perspective), then tilted in-plane; the empty corners stay the
      // backdrop's grey.
      const nw = even(pw * turn.narrow);
      const k12 = Math.round(turn.keystone * ph);
      const far = person.mirror
        ? { x0: `0:y0=${k12}`, x2: `0:y2=H-${k12}`, x1: 'W:y1=0', x3: 'W:y3=H' }
        : { x0: '0:y0=0', x2: '0:y2=H', x1: `W:y1=${k12}`, x3: `W:y3=H-${k12}` };
      chain +=
        `,scale=${nw}:${ph},perspective=x0=${far.x0}:x1=${far.x1}:x2=${far.x2}:x3=${far.x3}:sense=destination,` +
        `pad=${pw}:${ph}:${Math.round((pw - nw) / 2)}:0:color=0x3a3a3a,rotate=${person.rotate * turn.tilt}*PI/180:fillcolor=0x3a3a3a`;
      // The face centre moves with the narrowing and the tilt (the keystone moves it by a pixel or two).
      const dx = (fx - 0.5) * turn.narrow * pw;
      const dy = (fy - 0.5) * ph;
      const a = (person.rotate * turn.tilt * Math.PI) / 180;
      fx = 0.5 + (dx * Math.cos(a) - dy * Math.sin(a)) / pw;
      const rotatedY = 0.5 + (dx * Math.sin(a) + dy * Math.cos(a)) / ph;
      faces.push({ cx: x + fx * pw, cy: y + rotatedY * ph, height: faceHeight, fraction: fractions[k]! });
    } else {
      faces.push({ cx: x + fx * pw, cy: y + fy * ph, height: faceHeight, fraction: fractions[k]! });
    }
    filters.push(`${chain},setsar=1[p${k}]`, `[bg${k}][p${k}]overlay=${x}:${y}:shortest=1[bg${k + 1}]`);
  }
  filters.push(`[0:a]atrim=duration=${seconds},asetpts=PTS-STARTPTS,aresample=44100,aformat=channel_layouts=mono,apad[a]`);
  const videoPath = path.join(dir, `${name}.mp4`);
  await run(FFMPEG, [
    // Looped, so a shot longer than the 3 s clips keeps all three people.
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-stream_loop',
    '-1',
    '-i',
    clips[0].file,
    '-stream_loop',
    '-1',
    '-i',
    clips[1].file,
    '-filter_complex',
    filters.join(';'),
    '-map',
    `[bg${PEOPLE.length}]`,
    '-map',
    '[a]',
    '-t',
    String(seconds),
    ...GRID_ENCODE,
    videoPath,
  ]);
  const wavPath = path.join(dir, `${name}.wav`);
  await extractAudio(FFMPEG, videoPath, wavPath);
  return { videoPath, wavPath, width, height, durationSec: seconds, faces };
}

export interface Recall {
  /** Per known face: frames it was found in, of the sampled frames. */
  found: number[];
  frames: number;
  /** Track samples that are no known face (or a second box on one), per sampled frame. */
  falsePerFrame: number;
}

/**
 * How many of the known faces the tracks show in each sampled frame. A sample is a face's when its
 * centre is within half the face's height of the known centre and its height within a factor of 2.
 */
export function measureRecall(result: ShortDetections, faces: KnownFace[], tolerance = 0.5): Recall {
  const frames = Math.round((result.end - result.start) * result.sampleFps);
  const found = faces.map(() => 0);
  let falseFaces = 0;
  for (let i = 0; i < frames; i++) {
    const time = result.start + i / result.sampleFps;
    const samples = result.tracks.flatMap((t) => t.samples.filter((s) => Math.abs(s.time - time) < 1e-3));
    const hit = faces.map(() => false);
    for (const s of samples) {
      const cx = s.box.x + s.box.width / 2;
      const cy = s.box.y + s.box.height / 2;
      const k = faces.findIndex(
        (f, j) =>
          !hit[j] && Math.hypot(cx - f.cx, cy - f.cy) < tolerance * f.height && s.box.height > f.height / 2 && s.box.height < f.height * 2,
      );
      if (k < 0) falseFaces++;
      else hit[k] = true;
    }
    hit.forEach((h, k) => {
      if (h) found[k]!++;
    });
  }
  return { found, frames, falsePerFrame: falseFaces / frames };
}
