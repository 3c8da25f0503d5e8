// Scene specifications for the framing evaluation: who sits where, who talks, mouths or listens when,
// which voice is heard, where the edits are, and how the picture is shot (size, frame rate, bars,
// mirroring, colour, background). Pure and deterministic: the same family and seed always give the
// same scene, on any machine, from the same cast. compose.ts turns a spec into a video and its labels.
import type { Cast, Footage, Person } from './people.js';

export const FAMILIES = ['turns', 'panel', 'muted-listener', 'off-screen', 'edited', 'facecam', 'motion'] as const;
export type Family = (typeof FAMILIES)[number];

/** Seeds 0-999 are for tuning, 1000-1999 are held out: nothing is tuned on them. */
export const SPLITS = { dev: 0, heldout: 1000 } as const;
export type Split = keyof typeof SPLITS;

/** What an actor shows over a stretch: talking (their own clip, heard), mouthing their words with no
 *  sound (chewing, mouthing along, talking with the sound off), or listening (breath and blinks:
 *  their silent lead-in back and forth; or nodding). */
export type Show = 'talk' | 'mouth' | 'idle' | 'nod';

export interface Piece {
  start: number;
  end: number;
  show: Show;
  /** talk and mouth: seconds into the actor's clip (talk) or into their looped words (mouth). */
  from: number;
}

export interface Actor {
  person: string;
  pieces: Piece[];
}

/** An actor's picture in a shot: their clip scaled to `height` (content pixels), top-left at (x, y) at
 *  the shot's start, moving `vx` content pixels a second, swaying `sway` pixels at `swayHz`. */
export interface Placement {
  actor: number;
  x: number;
  y: number;
  height: number;
  vx: number;
  sway: number;
  swayHz: number;
}

/** Behind people: a flat colour, a still texture, a moving test pattern or moving footage, both
 *  blurred as a background out of focus. As a shot's whole picture (slide, B-roll, the screen under a
 *  facecam): a still chart, or generated motion with no face in it. */
export type Background =
  | { kind: 'flat'; colour: string }
  | { kind: 'texture'; seed: number }
  | { kind: 'pattern' }
  | { kind: 'footage'; file: string; durationSec: number }
  | { kind: 'motion'; source: 'mandelbrot' | 'life' | 'testsrc2' };

export interface Shot {
  start: number;
  end: number;
  /** How it begins; a dissolve blends in over `dissolveSec` from `start`. */
  transition: 'start' | 'cut' | 'dissolve';
  dissolveSec: number;
  /** people: actors over a background; slide: a still picture with no face; broll: moving footage
   *  with no talker; facecam: moving content with one small actor inset. */
  kind: 'people' | 'slide' | 'broll' | 'facecam';
  background: Background;
  placements: Placement[];
}

/** A voice heard with no face to it: `file` from `from` seconds, over [start, end). */
export interface OffVoice {
  start: number;
  end: number;
  file: string;
  from: number;
}

export interface SceneSpec {
  family: Family;
  seed: number;
  width: number;
  height: number;
  fps: number;
  /** The picture inside any bars, source pixels. */
  content: { x: number; y: number; width: number; height: number };
  mirror: boolean;
  colour: { brightness: number; contrast: number; saturation: number; hue: number } | null;
  duration: number;
  actors: Actor[];
  shots: Shot[];
  voices: OffVoice[];
}

/** mulberry32: a small, good-enough generator whose whole state is one 32-bit number. */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next();
  }
  int(lo: number, hi: number): number {
    return Math.floor(this.between(lo, hi + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  /** `n` distinct items in random order. */
  sample<T>(xs: readonly T[], n: number): T[] {
    const pool = xs.slice();
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
    }
    return pool.slice(0, n);
  }
}

function hash(s: string): number {
  let h = 2166136261;
  for (const c of s) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}

const frame = (t: number) => Math.round(t * 25) / 25;

/** A turn's talk pieces: the actor's sentence said again and again (short pauses between), the last
 *  one cut to fit; `length` is the speech wanted. Returns the pieces and when the speech ends. */
function talkPieces(person: Person, start: number, length: number, r: Random): { pieces: Piece[]; end: number } {
  const lead = 0.12;
  const sentence = person.speech.end - person.speech.start;
  const pieces: Piece[] = [];
  let t = start - lead;
  let left = length;
  while (left > 0.3) {
    const say = Math.min(sentence, left);
    const from = person.speech.start - lead;
    const end = frame(t + lead + say + (say >= sentence ? 0.08 : 0));
    pieces.push({ start: frame(t), end, show: 'talk', from });
    left -= say;
    if (left > 0.3) {
      const pause = r.between(0.15, 0.4);
      pieces.push({ start: end, end: frame(end + pause), show: 'idle', from: 0 });
      t = frame(end + pause);
    } else t = end;
  }
  return { pieces, end: t };
}

/** Listening between the actor's own pieces: idle or nodding, in stretches of a few seconds. */
function fillListening(pieces: Piece[], duration: number, r: Random, nodShare: number): Piece[] {
  const sorted = pieces.slice().sort((a, b) => a.start - b.start);
  const out: Piece[] = [];
  let t = 0;
  const listen = (from: number, to: number) => {
    let s = from;
    while (to - s > 0.04) {
      const e = Math.min(to, frame(s + r.between(1.5, 4)));
      out.push({ start: s, end: to - e < 0.3 ? to : e, show: r.chance(nodShare) ? 'nod' : 'idle', from: 0 });
      s = to - e < 0.3 ? to : e;
    }
  };
  for (const p of sorted) {
    if (p.start > t + 0.04) listen(t, p.start);
    out.push({ ...p, start: Math.max(p.start, t) });
    t = p.end;
  }
  if (duration > t + 0.04) listen(t, duration);
  return out.filter((p) => p.end > p.start + 0.01);
}

/** Turn-taking among `speakers` (actor indices) until `duration`: turn lengths and gaps drawn per turn,
 *  a short overlap now and then. Returns each actor's talk pieces. */
function conversation(
  cast: Person[],
  speakers: number[],
  duration: number,
  r: Random,
  o: { minTurn: number; maxTurn: number; overlap: number },
): Piece[][] {
  const pieces: Piece[][] = cast.map(() => []);
  let t = frame(r.between(0.3, 1));
  let current = r.pick(speakers);
  while (t < duration - 1.2) {
    // Log-uniform: as many short turns as long ones.
    const length = Math.min(duration - 0.4 - t, Math.exp(r.between(Math.log(o.minTurn), Math.log(o.maxTurn))));
    if (length < 0.6) break;
    const turn = talkPieces(cast[current]!, t, length, r);
    pieces[current]!.push(...turn.pieces);
    const overlap = r.chance(o.overlap) ? r.between(0.15, 0.4) : 0;
    t = frame(turn.end + (overlap ? -overlap : r.between(0.2, 1.0)));
    const others = speakers.filter((s) => s !== current);
    current = others.length ? r.pick(others) : current;
  }
  return pieces;
}

interface Look {
  width: number;
  height: number;
  fps: number;
  content: SceneSpec['content'];
  mirror: boolean;
  colour: SceneSpec['colour'];
}

/** Source sizes, each with its weight: what users send, 4K rarer; a wide shot of a panel is 1080p or
 *  4K; a facecam or a moving speaker is not composed at 4K (its cost, not a limit of the camera). */
const ANY_SIZE: Array<[number, number, number]> = [
  [1280, 720, 3],
  [1920, 1080, 5],
  [3840, 2160, 1],
];
const WIDE_SHOT_SIZE: Array<[number, number, number]> = [
  [1920, 1080, 3],
  [3840, 2160, 1],
];
const UP_TO_1080P: Array<[number, number, number]> = [
  [1280, 720, 3],
  [1920, 1080, 5],
];

/** How the source is shot: size, frame rate, bars, mirroring, colour. */
function look(r: Random, sizes: Array<[number, number, number]>): Look {
  const [width, height] = pickWeighted(r, sizes);
  const fps = r.pick(width >= 3840 ? [24, 25, 30] : [24, 25, 30, 50, 60]);
  let content = { x: 0, y: 0, width, height };
  const bars = r.next();
  if (bars < 0.12) {
    // Letterboxed: a 2.39:1 or 2:1 picture inside 16:9.
    const h = even(width / r.pick([2.39, 2.0]));
    content = { x: 0, y: even((height - h) / 2), width, height: h };
  } else if (bars < 0.2) {
    // Pillarboxed: a 4:3 picture inside 16:9.
    const w = even((height * 4) / 3);
    content = { x: even((width - w) / 2), y: 0, width: w, height };
  }
  return {
    width,
    height,
    fps,
    content,
    mirror: r.chance(0.3),
    colour: r.chance(0.4)
      ? { brightness: r.between(-0.08, 0.08), contrast: r.between(0.85, 1.15), saturation: r.between(0.6, 1.4), hue: r.between(-20, 20) }
      : null,
  };
}

function pickWeighted<T extends unknown[]>(r: Random, options: Array<[...T, number]>): T {
  const total = options.reduce((s, o) => s + (o.at(-1) as number), 0);
  let x = r.next() * total;
  for (const o of options) if ((x -= o.at(-1) as number) <= 0) return o.slice(0, -1) as T;
  return options.at(-1)!.slice(0, -1) as T;
}

const even = (v: number) => 2 * Math.round(v / 2);

function background(r: Random, footage: Footage[]): Background {
  const k = r.next();
  if (k < 0.35) return { kind: 'flat', colour: `0x${[0, 0, 0].map(() => r.int(20, 200).toString(16).padStart(2, '0')).join('')}` };
  if (k < 0.6) return { kind: 'texture', seed: r.int(0, 9999) };
  if (k < 0.8 || !footage.length) return { kind: 'pattern' };
  return { kind: 'footage', ...r.pick(footage) };
}

/** The clip's panel height that makes its face `faceFraction` of the content's height. */
const panelFor = (p: Person, faceFraction: number, contentHeight: number) =>
  even((faceFraction * contentHeight * p.height) / p.face.height);
const panelWidth = (p: Person, height: number) => even((height * p.width) / p.height);

/** Actors side by side in one wide shot: face heights drawn in [lo, hi] of the content height, centres
 *  spread across the width with some jitter, all at about one eye line. */
function row(r: Random, people: Person[], look: Look, lo: number, hi: number, motion = false): Placement[] {
  const { width: W, height: H } = look.content;
  const n = people.length;
  const faceFraction = r.between(lo, hi);
  const heights = people.map((p) => panelFor(p, faceFraction * r.between(0.9, 1.1), H));
  const slot = W / n;
  const eye = r.between(0.3, 0.55);
  return people.map((p, i) => {
    const h = Math.min(heights[i]!, even(H * 0.95));
    const w = Math.min(panelWidth(p, h), even(slot * 0.98));
    const cx = slot * (i + 0.5) + r.between(-0.12, 0.12) * (slot - w);
    const cy = H * eye + r.between(-0.04, 0.04) * H;
    return {
      actor: i,
      x: Math.round(Math.min(W - w, Math.max(0, cx - w / 2))),
      y: Math.round(Math.min(H - h, Math.max(0, cy - h / 2))),
      height: h,
      vx: 0,
      sway: motion || r.chance(0.3) ? r.between(0.005, 0.02) * W : 0,
      swayHz: r.between(0.15, 0.5),
    };
  });
}

/** What each family's scene is made with: the seed's random numbers, the cast and footage, the
 *  scene's length, and the builders of its parts (which draw from the same random numbers). */
interface SceneKit {
  r: Random;
  people: Person[];
  cast: Cast;
  footage: Footage[];
  duration: number;
  scene: (l: Look, actors: Actor[], shots: Shot[], voices?: OffVoice[]) => SceneSpec;
  shot: (placements: Placement[], l: Look, kind?: Shot['kind'], bg?: Background) => Shot;
  actorsOf: (chosen: Person[], talk: Piece[][], nodShare?: number) => Actor[];
}

export function makeScene(family: Family, seed: number, cast: Cast, footage: Footage[]): SceneSpec {
  const r = new Random(hash(family) ^ Math.imul(seed + 1, 2654435761));
  const people = cast.people;
  if (people.length < 2) throw new Error('the framing evaluation needs at least two people in the media folder');
  const duration = frame(r.between(14, 22));
  const scene = (l: Look, actors: Actor[], shots: Shot[], voices: OffVoice[] = []): SceneSpec => ({
    family,
    seed,
    ...l,
    duration,
    actors,
    shots,
    voices,
  });
  const shot = (placements: Placement[], l: Look, kind: Shot['kind'] = 'people', bg = background(r, footage)): Shot => ({
    start: 0,
    end: duration,
    transition: 'start',
    dissolveSec: 0,
    kind,
    background: bg,
    placements,
  });
  const actorsOf = (chosen: Person[], talk: Piece[][], nodShare = 0.3): Actor[] =>
    chosen.map((p, i) => ({ person: p.name, pieces: fillListening(talk[i]!, duration, r, nodShare) }));

  const kit: SceneKit = { r, people, cast, footage, duration, scene, shot, actorsOf };

  switch (family) {
    case 'turns': {
      const l = look(r, ANY_SIZE);
      const chosen = r.sample(people, 2);
      const talk = conversation(chosen, [0, 1], duration, r, { minTurn: 0.8, maxTurn: 8, overlap: 0.2 });
      return scene(l, actorsOf(chosen, talk), [shot(row(r, chosen, l, 0.15, 0.35), l)]);
    }
    case 'panel': {
      const l = look(r, WIDE_SHOT_SIZE);
      const chosen = r.sample(people, Math.min(people.length, r.pick([3, 4])));
      const talk = conversation(
        chosen,
        chosen.map((_, i) => i),
        duration,
        r,
        { minTurn: 1.5, maxTurn: 7, overlap: 0.1 },
      );
      return scene(l, actorsOf(chosen, talk), [shot(row(r, chosen, l, 0.03, 0.12), l)]);
    }
    case 'muted-listener': {
      return mutedListenerScene(kit);
    }
    case 'off-screen': {
      return offScreenScene(kit);
    }
    case 'edited': {
      return editedScene(kit);
    }
    case 'facecam': {
      return facecamScene(kit);
    }
    case 'motion': {
      return motionScene(kit);
    }
  }
}

/** `muted-listener`: one heard, the other mouthing their own words with no sound; roles swap now and then. */
function mutedListenerScene(kit: SceneKit): SceneSpec {
  const { r, people, duration, scene, shot, actorsOf } = kit;
  const l = look(r, ANY_SIZE);
  const chosen = r.sample(people, 2);
  // One is heard; the other's lips move with no sound, during the heard speech and alone. Now and
  // then the roles swap.
  const talk: Piece[][] = [[], []];
  let t = frame(r.between(0.3, 1));
  let heard = r.int(0, 1);
  while (t < duration - 1.5) {
    const length = Math.min(duration - 0.5 - t, r.between(2, 7));
    if (length < 1) break;
    const turn = talkPieces(chosen[heard]!, t, length, r);
    talk[heard]!.push(...turn.pieces);
    const muted = 1 - heard;
    // The mute mouths over part of the heard speech, sometimes past its end into the silence.
    const ms = frame(t + r.between(-0.5, 0.5 * length));
    const me = frame(Math.min(duration - 0.2, ms + r.between(1.2, length + 1.5)));
    if (me > ms + 0.5) talk[muted]!.push({ start: Math.max(0, ms), end: me, show: 'mouth', from: r.between(0, 1.5) });
    t = frame(Math.max(turn.end, me) + r.between(0.3, 1.2));
    if (r.chance(0.3)) heard = 1 - heard;
  }
  // Resolve overlaps inside one actor's line (a mouth piece running into their own talk).
  talk.forEach((ps, i) => (talk[i] = trimOverlaps(ps)));
  const placements = row(r, chosen, l, 0.15, 0.35);
  return scene(l, actorsOf(chosen, talk, 0.1), [shot(placements, l)]);
}

/** `off-screen`: one or two people on screen, voices of people not in the scene between their turns. */
function offScreenScene(kit: SceneKit): SceneSpec {
  const { r, people, cast, duration, scene, shot, actorsOf } = kit;
  const l = look(r, ANY_SIZE);
  const n = r.chance(0.5) ? 1 : 2;
  const chosen = r.sample(people, n);
  const offCast = [...people.filter((p) => !chosen.includes(p)).map((p) => ({ file: p.file, speech: p.speech })), ...cast.voices];
  const talk: Piece[][] = chosen.map(() => []);
  const voices: OffVoice[] = [];
  let t = frame(r.between(0.3, 1));
  let off = r.chance(0.5);
  while (t < duration - 1.5) {
    const length = Math.min(duration - 0.5 - t, r.between(1.5, 6));
    if (length < 1) break;
    if (off) {
      const v = r.pick(offCast);
      const say = Math.min(length, v.speech.end - v.speech.start);
      const from = v.speech.start + r.between(0, Math.max(0, v.speech.end - v.speech.start - say));
      voices.push({ start: t, end: frame(t + say), file: v.file, from });
      t = frame(t + say + r.between(0.3, 1));
    } else {
      const k = r.int(0, n - 1);
      const turn = talkPieces(chosen[k]!, t, length, r);
      talk[k]!.push(...turn.pieces);
      t = frame(turn.end + r.between(0.3, 1));
    }
    off = !off || r.chance(0.3);
  }
  return scene(l, actorsOf(chosen, talk), [shot(row(r, chosen, l, 0.15, 0.35), l)], voices);
}

/** `edited`: a wide two-shot, close-ups, slides and B-roll, hard cuts and dissolves, the close-up mostly on whoever talks. */
function editedScene(kit: SceneKit): SceneSpec {
  const { r, people, footage, duration, scene, actorsOf } = kit;
  const l = look(r, ANY_SIZE);
  const chosen = r.sample(people, 2);
  const talk = conversation(chosen, [0, 1], duration, r, { minTurn: 1.5, maxTurn: 8, overlap: 0.1 });
  const actors = actorsOf(chosen, talk);
  const wide = row(r, chosen, l, 0.15, 0.3);
  const bg = background(r, footage);
  const shots: Shot[] = [];
  let t = 0;
  while (t < duration - 0.5) {
    const end = Math.min(duration, frame(t + r.between(2, 6)));
    const finalEnd = duration - end < 1.5 ? duration : end;
    // Editors cut to whoever talks most of the time, to the wide shot or to a slide otherwise.
    const talker = actors.findIndex((a) =>
      a.pieces.some((p) => p.show === 'talk' && p.start <= (t + finalEnd) / 2 && p.end > (t + finalEnd) / 2),
    );
    const k = r.next();
    // Two faceless shots in a row could be the same picture: a cut in the labels that nothing shows.
    const facelessBefore = shots.length > 0 && shots.at(-1)!.kind !== 'people';
    const kind: Shot['kind'] = facelessBefore ? 'people' : k < 0.15 ? 'slide' : k < 0.25 ? 'broll' : 'people';
    const closeUp = kind === 'people' && r.chance(0.6) ? (talker >= 0 && r.chance(0.75) ? talker : r.int(0, 1)) : -1;
    let placements: Placement[] = [];
    if (kind === 'people') placements = closeUp >= 0 ? [closeUpOf(r, chosen[closeUp]!, closeUp, l)] : wide.map((p) => ({ ...p }));
    const first = shots.length === 0;
    const dissolve = !first && r.chance(0.25);
    shots.push({
      start: t,
      end: finalEnd,
      transition: first ? 'start' : dissolve ? 'dissolve' : 'cut',
      dissolveSec: dissolve ? frame(r.between(0.4, 1)) : 0,
      kind,
      background: kind === 'broll' ? movingPicture(r) : kind === 'slide' ? { kind: 'pattern' } : bg,
      placements,
    });
    t = finalEnd;
  }
  return scene(l, actors, shots);
}

/** `facecam`: one small face inset in a corner over generated moving content. */
function facecamScene(kit: SceneKit): SceneSpec {
  const { r, people, duration, scene, shot, actorsOf } = kit;
  const l = look(r, UP_TO_1080P);
  const chosen = r.sample(people, 1);
  const talk = conversation(chosen, [0], duration, r, { minTurn: 2, maxTurn: 8, overlap: 0 });
  const { width: W, height: H } = l.content;
  const h = panelFor(chosen[0]!, r.between(0.08, 0.14), H);
  const w = panelWidth(chosen[0]!, h);
  const margin = r.between(0.01, 0.04) * W;
  const right = r.chance(0.6);
  const bottom = r.chance(0.6);
  const inset: Placement = {
    actor: 0,
    x: Math.round(right ? W - w - margin : margin),
    y: Math.round(bottom ? H - h - margin : margin),
    height: h,
    vx: 0,
    sway: 0,
    swayHz: 0,
  };
  const content = movingPicture(r);
  return scene(l, actorsOf(chosen, talk), [shot([inset], l, 'facecam', content)]);
}

/** `motion`: one or two people who walk across the frame, lean, or drift with a slow pan. */
function motionScene(kit: SceneKit): SceneSpec {
  const { r, people, duration, scene, shot, actorsOf } = kit;
  const l = look(r, UP_TO_1080P);
  const n = r.chance(0.5) ? 1 : 2;
  const chosen = r.sample(people, n);
  const talk = conversation(
    chosen,
    chosen.map((_, i) => i),
    duration,
    r,
    { minTurn: 2, maxTurn: 8, overlap: 0.1 },
  );
  const placements = row(r, chosen, l, 0.15, 0.3, true);
  const style = r.pick(['walk', 'lean', 'pan'] as const);
  const W = l.content.width;
  if (style === 'walk') {
    // One person walks across part of the frame, from one side towards the other.
    const p = r.pick(placements);
    const w = panelWidth(chosen[p.actor]!, p.height);
    const target = r.between(0, W - w);
    p.vx = (target - p.x) / duration;
  } else if (style === 'lean') {
    for (const p of placements) {
      p.sway = r.between(0.03, 0.07) * W;
      p.swayHz = r.between(0.1, 0.3);
    }
  } else {
    // A slow pan: everyone drifts the same way.
    const v = r.between(0.01, 0.03) * W * (r.chance(0.5) ? 1 : -1);
    for (const p of placements) {
      const w = panelWidth(chosen[p.actor]!, p.height);
      p.vx = Math.max(-p.x / duration, Math.min((W - w - p.x) / duration, v));
    }
  }
  return scene(l, actorsOf(chosen, talk), [shot(placements, l)]);
}

const movingPicture = (r: Random): Background => ({ kind: 'motion', source: r.pick(['mandelbrot', 'life', 'testsrc2'] as const) });

function trimOverlaps(pieces: Piece[]): Piece[] {
  const sorted = pieces.slice().sort((a, b) => a.start - b.start);
  const out: Piece[] = [];
  for (const p of sorted) {
    const last = out.at(-1);
    if (last && p.start < last.end) {
      // Talk wins over mouthing: the earlier piece ends where the later begins, unless it is talk.
      if (last.show === 'talk') {
        if (p.end > last.end + 0.3) out.push({ ...p, start: last.end });
        continue;
      }
      last.end = p.start;
      if (last.end - last.start < 0.2) out.pop();
    }
    out.push({ ...p });
  }
  return out;
}

/** A close-up: the actor's face 28-45 % of the content's height, near the centre. */
function closeUpOf(r: Random, p: Person, actor: number, l: Look): Placement {
  const { width: W, height: H } = l.content;
  const h = Math.min(even(H * 1.0), panelFor(p, r.between(0.28, 0.45), H));
  const w = Math.min(W, panelWidth(p, h));
  return {
    actor,
    x: Math.round(Math.min(W - w, Math.max(0, (W - w) / 2 + r.between(-0.15, 0.15) * W))),
    y: Math.round(Math.max(0, (H - h) / 2)),
    height: h,
    vx: 0,
    sway: r.chance(0.3) ? r.between(0.003, 0.01) * W : 0,
    swayHz: r.between(0.15, 0.4),
  };
}
