// Who speaks: for the stretches where speech is heard, the visible face whose mouth moves. Decided
// over the whole short at once (it is known in advance): a Viterbi pass over "track k speaks" and
// "no visible face speaks" states, where each sample rewards the state whose mouth moves most and
// every change of speaker costs a fixed amount. That is the hysteresis: a brief burst of mouth
// movement on a listener (a smile, a nod) cannot pay for two switches, while a real turn, with the
// new speaker's mouth moving for a second or more, does, and the change lands where the evidence
// changes rather than a smoothing delay later.
import type { FaceTrack, SpeakerTurn } from '../../../common/src/reframe/types.js';
import type { Interval } from './speech.js';

export interface AttributionOptions {
  /** Smoothing window of the mouth signal, seconds (centred). */
  smoothSec: number;
  /** Mouth activity a face must show to be judged speaking rather than "nobody visible speaks". */
  minActivity: number;
  /** Cost of changing the speaker, in units of activity x seconds. */
  switchCost: number;
  /** Two stretches of speech by the same track closer than this make one turn. */
  joinGapSec: number;
}

export const DEFAULT_ATTRIBUTION: AttributionOptions = { smoothSec: 0.6, minActivity: 0.05, switchCost: 0.04, joinGapSec: 1 };

/** Centred moving mean of the track's activity on the sample grid; NaN where the track is absent. */
function smoothedActivity(track: FaceTrack, grid: number[], fps: number, smoothSec: number): Float64Array {
  const raw = new Float64Array(grid.length).fill(NaN);
  const t0 = grid[0] ?? 0;
  for (const s of track.samples) {
    const i = Math.round((s.time - t0) * fps);
    if (i >= 0 && i < grid.length) raw[i] = s.mouthActivity;
  }
  const half = Math.max(1, Math.round((smoothSec * fps) / 2));
  const out = new Float64Array(grid.length).fill(NaN);
  for (let i = 0; i < grid.length; i++) {
    if (Number.isNaN(raw[i]!)) continue;
    let sum = 0;
    let n = 0;
    for (let j = Math.max(0, i - half); j <= Math.min(grid.length - 1, i + half); j++) {
      if (Number.isNaN(raw[j]!)) continue;
      sum += raw[j]!;
      n++;
    }
    out[i] = sum / n;
  }
  // Inside the track's life a miss (the face turned away, a blurred frame) is the same person: the
  // signal is bridged from both sides, so a speaker who looks away keeps the turn.
  let prev = -1;
  for (let i = 0; i < out.length; i++) {
    if (Number.isNaN(out[i]!)) continue;
    if (prev >= 0 && i - prev > 1) {
      for (let j = prev + 1; j < i; j++) out[j] = out[prev]! + ((out[i]! - out[prev]!) * (j - prev)) / (i - prev);
    }
    prev = i;
  }
  return out;
}

const inSpeech = (t: number, speech: Interval[]) => speech.some((s) => t >= s.start && t < s.end);

/**
 * Speaker turns over the speech intervals. `tracks` carry mouth activity per sample; `fps` is the
 * sampling rate and `range` the short's span on the source clock.
 */
export function attributeSpeakers(tracks: FaceTrack[], speech: Interval[], range: Interval, fps: number, options: Partial<AttributionOptions> = {}): SpeakerTurn[] {
  const o = { ...DEFAULT_ATTRIBUTION, ...options };
  if (!speech.length) return [];
  const n = Math.max(1, Math.round((range.end - range.start) * fps));
  const grid = Array.from({ length: n }, (_, i) => range.start + i / fps);
  const signals = tracks.map((t) => smoothedActivity(t, grid, fps, o.smoothSec));
  const states = tracks.length + 1; // the last state is "nobody visible speaks"
  const NONE = tracks.length;
  const dt = 1 / fps;
  const switchCost = o.switchCost;
  // Viterbi over the grid: score[s] is the best total reward of a path ending in state s.
  let score = new Float64Array(states);
  const back: Int32Array[] = [];
  for (let i = 0; i < n; i++) {
    const speaking = inSpeech(grid[i]!, speech);
    const reward = new Float64Array(states);
    for (let k = 0; k < tracks.length; k++) {
      const a = signals[k]![i]!;
      // An absent face cannot be the one speaking; outside speech nothing is rewarded.
      reward[k] = Number.isNaN(a) ? -1 : speaking ? a * dt : 0;
    }
    reward[NONE] = speaking ? o.minActivity * dt : 0;
    let bestPrev = 0;
    for (let s = 1; s < states; s++) if (score[s]! > score[bestPrev]!) bestPrev = s;
    const from = new Int32Array(states);
    const next = new Float64Array(states);
    for (let s = 0; s < states; s++) {
      const stay = score[s]!;
      const move = score[bestPrev]! - (i === 0 ? 0 : switchCost);
      if (stay >= move || bestPrev === s) {
        next[s] = stay + reward[s]!;
        from[s] = s;
      } else {
        next[s] = move + reward[s]!;
        from[s] = bestPrev;
      }
    }
    back.push(from);
    score = next;
  }
  let state = 0;
  for (let s = 1; s < states; s++) if (score[s]! > score[state]!) state = s;
  const path = new Int32Array(n);
  for (let i = n - 1; i >= 0; i--) {
    path[i] = state;
    state = back[i]![state]!;
  }
  // Turns: each speech interval cut where the path changes state.
  const turns: SpeakerTurn[] = [];
  const idOf = (s: number) => (s === NONE ? null : tracks[s]!.id);
  for (const interval of speech) {
    let start = interval.start;
    let current: number | null | undefined;
    for (let i = 0; i < n; i++) {
      const t = grid[i]!;
      if (t < interval.start || t >= interval.end) continue;
      const id = idOf(path[i]!);
      if (current === undefined) current = id;
      else if (id !== current) {
        turns.push({ start, end: t, trackId: current });
        start = t;
        current = id;
      }
    }
    if (current === undefined) current = idOf(path[Math.min(n - 1, Math.max(0, Math.round((interval.start - range.start) * fps)))]!);
    turns.push({ start, end: interval.end, trackId: current });
  }
  // Join the same speaker's turns across short pauses.
  const joined: SpeakerTurn[] = [];
  for (const t of turns) {
    const last = joined.at(-1);
    if (last && last.trackId === t.trackId && t.start - last.end < o.joinGapSec) last.end = t.end;
    else joined.push({ ...t });
  }
  return joined;
}
