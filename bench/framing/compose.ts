// A scene spec (scenes.ts) made into a video with sound, and its labels written beside it: where each
// face is, who is heard, where the edits are. The labels come from the same numbers ffmpeg is given
// (panel positions and sizes, each clip's face box, its speech span), not from looking at the result.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Box } from '@shorts/common/reframe/types';
import { extractAudio } from '../../node-agent/src/media/audio-extract.js';
import { FFMPEG } from '../../test/helpers/media.js';
import type { Cast, Person } from './people.js';
import type { Piece, Placement, SceneSpec, Shot } from './scenes.js';

const run = promisify(execFile);

/** Bumped whenever composing changes, so cached scenes are made again. */
const COMPOSE_VERSION = 4;
/** Person clips are composed at their own rate and size. */
const CLIP_FPS = 25;
/** Labels are written at this rate. */
export const LABEL_RATE = 10;

export interface LabelledFace {
  actor: number;
  box: Box;
}

export interface LabelSample {
  time: number;
  /** The shot whose picture is shown (during a dissolve: the one blending in, from its middle on). */
  shot: number;
  /** Inside a dissolve's blend: both pictures are partly there. */
  blending: boolean;
  faces: LabelledFace[];
  /** Actors whose voice is heard now. */
  heard: number[];
  /** A voice with no face in the scene is heard now. */
  offScreen: boolean;
}

/** A stretch of one voice: an actor's, or one heard off screen. */
export interface HeardRun {
  start: number;
  end: number;
  speaker: number | 'off';
}

export interface SceneLabels {
  family: string;
  seed: number;
  width: number;
  height: number;
  duration: number;
  content: Box;
  shots: Array<{ start: number; end: number; transition: Shot['transition']; dissolveSec: number; kind: Shot['kind'] }>;
  /** Who is heard when, in order, a run per voice between changes of voice. */
  runs: HeardRun[];
  samples: LabelSample[];
}

export interface ComposedScene {
  videoPath: string;
  wavPath: string;
  labelsPath: string;
  labels: SceneLabels;
}

const f3 = (v: number) => v.toFixed(3);

/** The person's face as shown by placement `p` of shot `s` at time t, content pixels (before mirroring). */
/** The width the person's clip is scaled to for a placement `p.height` tall (even, for 4:2:0). */
const clipWidth = (person: Person, p: Placement) => 2 * Math.round((p.height * person.width) / person.height / 2);

/** The person's clip as placed at `t`, in content pixels (before any mirroring): the overlay's box. */
function placedClip(person: Person, p: Placement, s: Shot, t: number): Box {
  const dt = t - s.start;
  const x = p.x + p.vx * dt + p.sway * Math.sin(2 * Math.PI * p.swayHz * dt);
  return { x, y: p.y, width: clipWidth(person, p), height: p.height };
}

function placedFace(person: Person, p: Placement, s: Shot, t: number): Box {
  const scale = p.height / person.height;
  const clip = placedClip(person, p, s, t);
  return {
    x: clip.x + person.face.x * scale,
    y: clip.y + person.face.y * scale,
    width: person.face.width * scale,
    height: person.face.height * scale,
  };
}

/** The share of `face` that `cover` hides. */
function coveredShare(face: Box, cover: Box): number {
  const w = Math.min(face.x + face.width, cover.x + cover.width) - Math.max(face.x, cover.x);
  const h = Math.min(face.y + face.height, cover.y + cover.height) - Math.max(face.y, cover.y);
  return w > 0 && h > 0 ? (w * h) / (face.width * face.height) : 0;
}

function heardIntervals(spec: SceneSpec, cast: Map<string, Person>): HeardRun[] {
  const out: HeardRun[] = [];
  spec.actors.forEach((a, k) => {
    const person = cast.get(a.person)!;
    for (const p of a.pieces) {
      if (p.show !== 'talk') continue;
      const start = p.start + Math.max(0, person.words.start - p.from);
      const end = Math.min(p.end, p.start + person.words.end - p.from);
      if (end > start + 0.05) out.push({ start, end, speaker: k });
    }
  });
  for (const v of spec.voices) out.push({ start: v.start, end: v.end, speaker: 'off' });
  return out.sort((a, b) => a.start - b.start);
}

/** Heard intervals joined into runs: one voice from its first word until another voice starts. */
function runsOf(intervals: HeardRun[]): HeardRun[] {
  const runs: HeardRun[] = [];
  for (const i of intervals) {
    const last = runs.at(-1);
    if (last && last.speaker === i.speaker && i.start >= last.start) last.end = Math.max(last.end, i.end);
    else runs.push({ ...i });
  }
  return runs;
}

/** What the picture shows of a face placed partly past the content's edge (the bars or the frame cut
 *  the rest): its box within the content, or nothing when most of it is out. */
function visiblePart(face: Box, content: Box): Box | undefined {
  const x0 = Math.max(face.x, content.x);
  const y0 = Math.max(face.y, content.y);
  const x1 = Math.min(face.x + face.width, content.x + content.width);
  const y1 = Math.min(face.y + face.height, content.y + content.height);
  if (x1 <= x0 || y1 <= y0 || (x1 - x0) * (y1 - y0) < 0.5 * face.width * face.height) return undefined;
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

export function sceneLabels(spec: SceneSpec, cast: Map<string, Person>): SceneLabels {
  const intervals = heardIntervals(spec, cast);
  const samples: LabelSample[] = [];
  const { content } = spec;
  for (let i = 0; i < Math.floor(spec.duration * LABEL_RATE); i++) {
    const t = i / LABEL_RATE;
    let shot = spec.shots.findIndex((s) => t >= s.start && t < s.end);
    if (shot < 0) shot = spec.shots.length - 1;
    const s = spec.shots[shot]!;
    const blending = s.transition === 'dissolve' && t < s.start + s.dissolveSec;
    // During a dissolve the framing changes at its middle; before that the previous shot is the one.
    if (blending && t < s.start + s.dissolveSec / 2 && shot > 0) shot--;
    const shown = spec.shots[shot]!;
    const faces =
      shown.kind === 'people' || shown.kind === 'facecam'
        ? shown.placements.flatMap((p, j) => {
            const b = placedFace(cast.get(spec.actors[p.actor]!.person)!, p, shown, t);
            // A clip overlaid later (walking past, leaning in) hides a face it covers: no one sees it.
            const above = shown.placements.slice(j + 1).map((q) => placedClip(cast.get(spec.actors[q.actor]!.person)!, q, shown, t));
            if (above.some((clip) => coveredShare(b, clip) > 0.5)) return [];
            const x = spec.mirror ? content.width - b.x - b.width : b.x;
            const visible = visiblePart({ x: x + content.x, y: b.y + content.y, width: b.width, height: b.height }, content);
            return visible ? [{ actor: p.actor, box: visible }] : [];
          })
        : [];
    const now = intervals.filter((h) => t >= h.start && t < h.end);
    samples.push({
      time: t,
      shot,
      blending,
      faces,
      heard: [...new Set(now.flatMap((h) => (h.speaker === 'off' ? [] : [h.speaker])))],
      offScreen: now.some((h) => h.speaker === 'off'),
    });
  }
  return {
    family: spec.family,
    seed: spec.seed,
    width: spec.width,
    height: spec.height,
    duration: spec.duration,
    content,
    shots: spec.shots.map(({ start, end, transition, dissolveSec, kind }) => ({ start, end, transition, dissolveSec, kind })),
    runs: runsOf(intervals),
    samples,
  };
}

/** Per person, the listening and mouthing material cut once: their silent lead-in back and forth
 *  (breath, blinks), the same nodding, their words looped with no sound. */
const materialsMade = new Map<string, Promise<Record<'idle' | 'nod' | 'mouth', string>>>();

/** Made once per person and folder, however many scenes ask for it at once. */
function materials(person: Person, dir: string): Promise<Record<'idle' | 'nod' | 'mouth', string>> {
  const key = `${dir}\0${person.name}`;
  let made = materialsMade.get(key);
  if (!made) {
    made = makeMaterials(person, dir);
    materialsMade.set(key, made);
  }
  return made;
}

async function makeMaterials(person: Person, dir: string): Promise<Record<'idle' | 'nod' | 'mouth', string>> {
  const base = path.join(dir, 'materials', person.name);
  await mkdir(base, { recursive: true });
  const out = { idle: path.join(base, 'idle.mp4'), nod: path.join(base, 'nod.mp4'), mouth: path.join(base, 'mouth.mp4') };
  const size = `${person.width}x${person.height}`;
  const leadEnd = Math.max(0.3, person.speech.start - 0.1).toFixed(2);
  const loop = (frames: number) => `loop=loop=30:size=${frames},setpts=N/${CLIP_FPS}/TB,trim=duration=20`;
  const leadFrames = Math.round((Number(leadEnd) - 0.04) * CLIP_FPS);
  const words = `trim=start=${person.speech.start.toFixed(3)}:end=${person.speech.end.toFixed(3)},setpts=PTS-STARTPTS`;
  const wordFrames = Math.round((person.speech.end - person.speech.start) * CLIP_FPS);
  const d = `(${(0.02 * person.width).toFixed(1)}*(1-cos(2*PI*on/${Math.round(CLIP_FPS * 0.8)})))`;
  const jobs: Array<[string, string]> = [
    [
      out.idle,
      `[0:v]fps=${CLIP_FPS},trim=start=0.04:end=${leadEnd},setpts=PTS-STARTPTS,split[f][r];[r]reverse[b];[f][b]concat=n=2:v=1:a=0,${loop(2 * leadFrames)}[v]`,
    ],
    [
      out.nod,
      `[0:v]fps=${CLIP_FPS},trim=start=0.04:duration=0.04,setpts=PTS-STARTPTS,${loop(1)},perspective=x0='-${d}':y0='-2*${d}':x1='W+${d}':y1='-2*${d}':x2='0':y2='H-${d}':x3='W':y3='H-${d}':eval=frame:sense=destination[v]`,
    ],
    [out.mouth, `[0:v]fps=${CLIP_FPS},${words},${loop(wordFrames)}[v]`],
  ];
  for (const [file, graph] of jobs) {
    if (existsSync(file)) continue;
    // Another process may be making the same file: each writes its own part, the rename is atomic.
    const part = `${file}.${process.pid}.part.mp4`;
    await ffmpeg(['-i', person.file, '-filter_complex', `${graph};[v]scale=${size},setsar=1[o]`, '-map', '[o]', '-an', ...FAST, part]);
    await rename(part, file);
  }
  return out;
}

const FAST = ['-c:v', 'libx264', '-preset', 'ultrafast', '-crf', '18', '-pix_fmt', 'yuv420p'];

async function ffmpeg(args: string[]): Promise<void> {
  await run(FFMPEG, ['-y', '-hide_banner', '-loglevel', 'error', ...args], { maxBuffer: 1 << 24 });
}

const MONO = 'aresample=16000,aformat=sample_fmts=fltp:channel_layouts=mono';

/** A background source for [start, start + duration) of the shot, at content size. */
function backgroundFilter(shot: Shot, inputIndex: number | undefined, w: number, h: number, fps: number, d: number, label: string): string {
  const at = `setpts=PTS-STARTPTS+${f3(shot.start)}/TB`;
  const bg = shot.background;
  const blurred = shot.kind === 'people';
  switch (bg.kind) {
    case 'flat':
      return `color=c=${bg.colour}:s=${w}x${h}:r=${fps}:d=${f3(d)},${at}${label}`;
    case 'texture': {
      const s = (bg.seed % 97) / 7;
      return (
        `color=c=black:s=32x18:r=${fps}:d=${f3(d)},format=rgb24,geq=r='128+90*sin(X*0.61+${f3(s)})*cos(Y*0.83+${f3(2 * s)})':g='110+80*sin(X*0.37+${f3(3 * s)})':b='120+70*cos(Y*0.51+X*0.2+${f3(s)})',` +
        `scale=${w}:${h}:flags=bicubic,${at}${label}`
      );
    }
    case 'pattern':
      // A slide stands still; a studio wall moves.
      return shot.kind === 'slide'
        ? `smptehdbars=s=1280x720:r=${fps}:d=${f3(d)},scale=${w}:${h},${at}${label}`
        : `testsrc2=s=640x360:r=${fps}:d=${f3(d)},scale=${w}:${h}${blurred ? ',boxblur=6' : ''},${at}${label}`;
    case 'motion': {
      const source =
        bg.source === 'mandelbrot'
          ? `mandelbrot=s=480x270:r=${fps}`
          : bg.source === 'life'
            ? // Seeded: life's unseeded grid is random, and the same scene composed twice differed.
              `life=s=320x180:r=${fps}:mold=10:ratio=0.3:seed=${1 + Math.round(shot.start * 1000)}:death_color=#203050:life_color=#e0c070`
            : `testsrc2=s=640x360:r=${fps}`;
      return `${source},trim=duration=${f3(d)},format=yuv420p,scale=${w}:${h},setsar=1,${at}${label}`;
    }
    case 'footage': {
      // Played once, slowed where the shot outlasts it: a loop would be a cut the labels do not have.
      // Blurred so that no face in it can be found: these are backgrounds, not people.
      const slow = Math.max(1, (d + 0.2) / bg.durationSec);
      return `[${inputIndex}:v]setpts=(PTS-STARTPTS)*${f3(slow)},fps=${fps},scale=${w}:${h},setsar=1,boxblur=${Math.max(10, Math.round(w / 40))}:2,${at},trim=end=${f3(shot.start + d)}${label}`;
    }
  }
}

/** A scene's ffmpeg inputs and filter graph, built up piece by piece. */
interface SceneGraph {
  inputs: string[][];
  filters: string[];
  /** Adds an input; its index. */
  input: (args: string[]) => number;
}

type People = Map<string, Person>;

/** Each actor's picture and sound over the whole scene, piece by piece: their labels in the graph. */
async function actorStreams(
  g: SceneGraph,
  spec: SceneSpec,
  people: People,
  cacheDir: string,
): Promise<Array<{ video: string; audio: string }>> {
  const { filters } = g;
  const streams: Array<{ video: string; audio: string }> = [];
  for (const [k, actor] of spec.actors.entries()) {
    const person = people.get(actor.person)!;
    const m = await materials(person, cacheDir);
    const parts: string[] = [];
    actor.pieces.forEach((p: Piece, j) => {
      const d = p.end - p.start;
      const name = `a${k}p${j}`;
      const file = p.show === 'talk' ? person.file : m[p.show];
      const offset = p.show === 'talk' ? p.from : p.show === 'mouth' ? p.from : (j * 0.37) % 4;
      const i = g.input([
        ...(p.show === 'talk' ? [] : ['-stream_loop', '-1']),
        '-ss',
        f3(Math.max(0, offset)),
        '-t',
        f3(d + 0.5),
        '-i',
        file,
      ]);
      filters.push(
        `[${i}:v]setpts=PTS-STARTPTS,fps=${CLIP_FPS},scale=${person.width}:${person.height},setsar=1,format=yuv420p,tpad=stop_mode=clone:stop_duration=${f3(d)},trim=duration=${f3(d)}[${name}v]`,
      );
      filters.push(
        p.show === 'talk'
          ? `[${i}:a]${MONO},apad,atrim=duration=${f3(d)}[${name}a]`
          : `aevalsrc=0:c=mono:s=16000:d=${f3(d)},aformat=sample_fmts=fltp:channel_layouts=mono[${name}a]`,
      );
      parts.push(`[${name}v][${name}a]`);
    });
    filters.push(`${parts.join('')}concat=n=${parts.length}:v=1:a=1[a${k}v][a${k}a]`);
    streams.push({ video: `a${k}v`, audio: `a${k}a` });
  }
  return streams;
}

/**
 * Each shot's picture: its background and the actors placed in it, over its span (plus the next
 * shot's dissolve, which blends over it), laid on the canvas; then the scene's mirror, colour and
 * padding. The picture is `[vout]`.
 */
function composePicture(g: SceneGraph, spec: SceneSpec, people: People, actorVideos: string[]): void {
  const { filters } = g;
  const { width: CW, height: CH } = spec.content;
  const uses = spec.actors.map((_, k) => spec.shots.reduce((n, s) => n + s.placements.filter((p) => p.actor === k).length, 0));
  const copies = actorVideos.map((video, k) => {
    const labelsOut = Array.from({ length: uses[k]! }, (_, j) => `a${k}c${j}`);
    if (labelsOut.length === 0) filters.push(`[${video}]nullsink`);
    else if (labelsOut.length === 1) filters.push(`[${video}]null[${labelsOut[0]}]`);
    else filters.push(`[${video}]split=${labelsOut.length}${labelsOut.map((l) => `[${l}]`).join('')}`);
    return labelsOut;
  });
  filters.push(`color=c=black:s=${CW}x${CH}:r=${spec.fps}:d=${f3(spec.duration)}[base]`);
  let canvas = 'base';
  spec.shots.forEach((shot, s) => {
    const next = spec.shots[s + 1];
    const span = shot.end - shot.start + (next?.transition === 'dissolve' ? next.dissolveSec : 0);
    const footage = shot.background.kind === 'footage' ? g.input(['-i', shot.background.file]) : undefined;
    filters.push(backgroundFilter(shot, footage, CW, CH, spec.fps, span, `[s${s}bg]`));
    let layer = `s${s}bg`;
    shot.placements.forEach((p, j) => {
      const person = people.get(spec.actors[p.actor]!.person)!;
      const copy = copies[p.actor]!.shift()!;
      const w = clipWidth(person, p);
      const x = `${f3(p.x)}+${f3(p.vx)}*(t-${f3(shot.start)})+${f3(p.sway)}*sin(2*PI*${f3(p.swayHz)}*(t-${f3(shot.start)}))`;
      filters.push(`[${copy}]trim=start=${f3(shot.start)}:end=${f3(shot.start + span)},scale=${w}:${p.height}[s${s}p${j}]`);
      filters.push(`[${layer}][s${s}p${j}]overlay=x='${x}':y=${Math.round(p.y)}:eof_action=pass[s${s}l${j}]`);
      layer = `s${s}l${j}`;
    });
    const fade = shot.transition === 'dissolve' ? `,format=yuva420p,fade=t=in:st=${f3(shot.start)}:d=${f3(shot.dissolveSec)}:alpha=1` : '';
    filters.push(`[${layer}]trim=end=${f3(shot.start + span)}${fade}[s${s}]`);
    filters.push(`[${canvas}][s${s}]overlay=eof_action=pass[c${s}]`);
    canvas = `c${s}`;
  });
  const post = [
    spec.mirror ? 'hflip' : '',
    spec.colour
      ? `eq=brightness=${f3(spec.colour.brightness)}:contrast=${f3(spec.colour.contrast)}:saturation=${f3(spec.colour.saturation)},hue=h=${f3(spec.colour.hue)}`
      : '',
    spec.content.width !== spec.width || spec.content.height !== spec.height
      ? `pad=${spec.width}:${spec.height}:${spec.content.x}:${spec.content.y}:black`
      : '',
    'format=yuv420p',
  ].filter(Boolean);
  filters.push(`[${canvas}]${post.join(',')}[vout]`);
}

/** The sound: every actor's voice and every off-screen voice, summed, as `[aout]`. */
function mixSound(g: SceneGraph, spec: SceneSpec, actorAudios: string[]): void {
  const sounds = actorAudios.map((audio) => `[${audio}]apad`);
  for (const v of spec.voices) {
    const i = g.input(['-ss', f3(v.from), '-t', f3(v.end - v.start), '-i', v.file]);
    sounds.push(`[${i}:a]${MONO},adelay=${Math.round(v.start * 1000)},apad`);
  }
  sounds.forEach((s, j) => g.filters.push(`${s}[snd${j}]`));
  g.filters.push(
    sounds.length === 1
      ? `[snd0]atrim=duration=${f3(spec.duration)},aresample=44100[aout]`
      : `${sounds.map((_, j) => `[snd${j}]`).join('')}amerge=inputs=${sounds.length},pan=mono|c0=${sounds.map((_, j) => `c${j}`).join('+')},atrim=duration=${f3(spec.duration)},aresample=44100[aout]`,
  );
}

export async function composeScene(spec: SceneSpec, cast: Cast, cacheDir: string): Promise<ComposedScene> {
  const people = new Map(cast.people.map((p) => [p.name, p]));
  const labels = sceneLabels(spec, people);
  const key = createHash('sha256')
    // What the picture and sound are made from: where the words are only changes the labels.
    .update(JSON.stringify({ COMPOSE_VERSION, spec, people: spec.actors.map((a) => ({ ...people.get(a.person)!, words: undefined })) }))
    .digest('hex')
    .slice(0, 16);
  const dir = path.join(cacheDir, 'scenes', `${spec.family}-${spec.seed}-${key}`);
  const videoPath = path.join(dir, 'scene.mp4');
  const wavPath = path.join(dir, 'scene.wav');
  const labelsPath = path.join(dir, 'labels.json');
  const isMade = () => existsSync(wavPath) && existsSync(labelsPath);
  if (isMade()) {
    // The labels are the spec's, made afresh: a scene made before a fix to them is still the same scene.
    if ((await readFile(labelsPath, 'utf8')) !== JSON.stringify(labels)) await writeFile(labelsPath, JSON.stringify(labels));
    return { videoPath, wavPath, labelsPath, labels };
  }
  // Made in a folder of this process's own and renamed into place whole: another process composing
  // the same scene at once (two bench runs over one cache) must neither overwrite the video under this
  // one's audio extraction nor find a half-written sound (it read as silence after its first seconds).
  const part = `${dir}.${process.pid}.part`;
  await rm(part, { recursive: true, force: true });
  await mkdir(part, { recursive: true });
  const partVideo = path.join(part, 'scene.mp4');
  const inputs: string[][] = [];
  const g: SceneGraph = { inputs, filters: [], input: (args) => inputs.push(args) - 1 };
  const streams = await actorStreams(g, spec, people, cacheDir);
  composePicture(
    g,
    spec,
    people,
    streams.map((s) => s.video),
  );
  mixSound(
    g,
    spec,
    streams.map((s) => s.audio),
  );
  const graphFile = path.join(part, 'graph.txt');
  await writeFile(graphFile, g.filters.join(';\n'));
  await ffmpeg([
    ...inputs.flat(),
    '-filter_complex_script',
    graphFile,
    '-map',
    '[vout]',
    '-map',
    '[aout]',
    '-t',
    f3(spec.duration),
    '-r',
    String(spec.fps),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '21',
    '-g',
    String(2 * spec.fps),
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-b:a',
    '96k',
    partVideo,
  ]);
  await extractAudio(FFMPEG, partVideo, path.join(part, 'scene.wav'));
  await writeFile(path.join(part, 'spec.json'), JSON.stringify(spec, null, 1));
  await writeFile(path.join(part, 'labels.json'), JSON.stringify(labels));
  // A folder left half-made by a run from before this rule would block the rename.
  if (existsSync(dir) && !isMade()) await rm(dir, { recursive: true, force: true });
  try {
    await rename(part, dir);
  } catch (err) {
    // The other process finished first: its scene is the same one.
    if (!isMade()) throw err;
    await rm(part, { recursive: true, force: true });
  }
  return { videoPath, wavPath, labelsPath, labels };
}
