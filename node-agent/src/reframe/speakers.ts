// Who speaks: for the stretches where speech is heard, the visible face whose mouth moves with the
// voice. Decided over the whole short at once (it is known in advance): a Viterbi pass over "track k
// speaks" and "no visible face speaks" states, where each sample rewards the state whose mouth moves most and
// every change of speaker costs a fixed amount. That is the hysteresis: a brief burst of mouth
// movement on a listener (a smile, a nod) cannot pay for two switches, while a real turn, with the
// new speaker's mouth moving for a second or more, does, and the change lands where the evidence
// changes rather than a smoothing delay later.
//
// With the speech envelope at hand a moving mouth is not enough: it counts only as far as it opens and
// closes in step with the voice that is heard (lip-audio synchrony, see lipSync), and only as far as no
// other face matches the voice better (syncWeights). A listener who laughs, chews, mouths along or
// talks over the speaker moves their lips too, but not with this voice's syllables, and their mouth
// then earns little or nothing, so the voice goes to the face in step with it or, with none, to
// "nobody visible".
import type { FaceTrack, SpeakerTurn, TrackSample } from '@shorts/common/reframe/types';
import { envelopeAt, type SpeechEnvelope } from './speech-envelope.js';
import type { Interval } from './speech.js';
import { voiceDistance, type VoiceChunk } from './voices.js';

/** A track as detection sees it: with each sample's mouth openness (mouthOpenness in mouth.ts), which
 *  lip-audio synchrony compares with the voice. Stored detections leave it out. */
export interface MouthTrack extends FaceTrack {
  samples: Array<TrackSample & { mouthOpen?: number }>;
  /** The face is too small in detection's frames for its lips to be read against the voice. */
  lipsTooSmall?: boolean;
}

export interface AttributionOptions {
  /** Smoothing window of the mouth signal, seconds (centred). */
  smoothSec: number;
  /** Mouth activity, as a multiple of a resting level (see attributeSpeakers), a face must show to be
   *  judged speaking rather than "nobody visible speaks". */
  minActivity: number;
  /** Cost of changing the speaker, in units of relative activity x seconds. */
  switchCost: number;
  /** A small face's own resting level is the lower third of its activity while nobody is heard, given
   *  at least this much silence; with less, the lower quartile of all its samples, at most
   *  `restPrior`. */
  restMinSilenceSec: number;
  /** A typical resting level: what a face whose lips can be read is measured against. */
  restPrior: number;
  /** No resting level is taken below this: a face that never moves must not turn noise into speech. */
  restFloor: number;
  /** Activity counts up to this multiple of the rest: talking reads about 2-3 times it, and a burst
   *  (a laugh, a smile) on a face that is very still otherwise must not outweigh a whole turn. */
  maxRelative: number;
  /** Two stretches of speech by the same track closer than this make one turn. */
  joinGapSec: number;
  /** Span over which a mouth's motion is correlated with the voice, seconds (centred). */
  syncWindowSec: number;
  /** Span whose level and spread of mouth activity and loudness the correlation measures
   *  deviations from, seconds (centred). */
  syncContextSec: number;
  /** The voice may lag or lead the lips by up to this much (encoding offsets, the mouth opening
   *  before the sound), seconds. */
  maxLagSec: number;
  /** Correlation of mouth and voice below which a mouth's motion counts for nothing (chance
   *  alignment of a mouth out of step reaches about this), and at which it counts in full. */
  noSync: number;
  fullSync: number;
  /** Span over which two faces' matches with the voice are compared, seconds (centred). */
  competeWindowSec: number;
  /** A face whose lips matched the voice this much less (in correlation) than another face's over
   *  that span counts for nothing; half as much, for half. */
  syncMargin: number;
  /** The silence around each stretch of speech that tells whose mouth moves with it: up to this far
   *  before and after it, seconds, leaving out this much next to it (the smoothed mouth signal and a
   *  voice heard a little late spill over). */
  silenceReachSec: number;
  silenceGuardSec: number;
  /** A face's mouth counts in full in a stretch of speech when it moves at most this share as much
   *  in the silence around it as during it, and for nothing when it moves as much; 0 turns it off. */
  silenceContrast: number;
  /** The silence contrast compares activity (in units of rest) capped here, not at maxRelative: a face
   *  whose mouth is busy while it listens (near maxRelative already) shows its speech only above it. */
  silenceContrastCap: number;
  /** How far the faces that other pieces of speech in the same voice did not vote for are held back
   *  (lendByVoice), 0 to 1; 0 turns voices off. */
  voicePool: number;
  /** Voice-print distance at which two pieces count as one voice by half, and how soft that edge is. */
  voiceSameDistance: number;
  voiceSoftness: number;
  /** A turn given to a face too small for its lips to be read is this much as sure as its margin says
   *  (the camera hedges below LOW_CONFIDENCE). */
  smallFaceConfidence: number;
  /** A piece votes for its face by how far its margin over the next likeliest exceeds this. 0: every
   *  piece votes by its margin, so many slightly clear pieces add up (on the development panels, faces
   *  too small for lip sync, none is plainly clear alone). */
  voteMargin: number;
  /** Votes adding up to this (in margin over voteMargin) lend in full. */
  voteFull: number;
  /** What a face's motion counts for against its openness when faces compete for the voice (lipMatch). */
  motionSyncWeight: number;
}

export const DEFAULT_ATTRIBUTION: AttributionOptions = {
  smoothSec: 0.6,
  minActivity: 0.85,
  switchCost: 0.6,
  restMinSilenceSec: 1,
  restPrior: 0.06,
  restFloor: 0.025,
  maxRelative: 3,
  joinGapSec: 1,
  syncWindowSec: 1,
  syncContextSec: 6,
  maxLagSec: 0.15,
  noSync: 0.1,
  fullSync: 0.4,
  competeWindowSec: 2,
  syncMargin: 0.2,
  // Tuned on bench:framing's development scenes (seeds 0-9 of turns, panel, muted-listener and
  // off-screen, bench:framing:tune); neighbouring settings flip single scenes either way.
  silenceReachSec: 1,
  silenceGuardSec: 0.5,
  silenceContrast: 0.3,
  // Dev (20 scenes each of panel, muted-listener, edited, motion): 5, 8 and 1000 read alike; 3 (the
  // signals' own cap) took dev panel 18 to 75 %, its speaker's mouth busy while listening (see
  // bench/README, 2026-12-01, second session). 10 keeps a detector glitch from swamping the means.
  silenceContrastCap: 10,
  // Tuned on bench:framing's development scenes (seeds 0-6 of turns, muted-listener, panel and
  // off-screen): a looser voice distance lent across two voices (1.2 in muted-listener scenes, 0.8
  // and 1.0 from an off-screen narrator to an on-screen speaker).
  voicePool: 0.8,
  voiceSameDistance: 0.6,
  voiceSoftness: 0.1,
  // Dev panels 0-14 (labels of 2026-11-30): 0 took 4K panel 0 from 48.1 to 78.5 % and the panels'
  // false switches from 1.13 to 0.45 a minute; turns, muted-listener, off-screen, edited and motion
  // (dev 0-14, 0-14, 0-9, 0-9, 0-5) unchanged or within 0.1 point.
  voteMargin: 0,
  // Dev panels (0-6): 0.8 changed nothing, 0.6 and 0.4 took 4K panel 0 (faces 3 % of the height) from
  // 37.8 to 59.5 % and hedged 7.6 % of the panels' speech; no other family moved.
  smallFaceConfidence: 0.6,
  voteFull: 0.5,
  // Dev (muted-listener, off-screen, edited 0-19, turns 0-15): 0.6-0.8 read alike (muted-listener
  // 90.6 -> 92.0 % mean, 78.1 -> 81.0 % 10th percentile; off-screen 96.9 -> 100 %); 0.9 lost a
  // muted-listener scene and the out-of-step talker of reframe-lipsync; 1 more of it.
  motionSyncWeight: 0.75,
};

/** What attribution weighs, stage by stage (bench:framing:tune --trace): each track's values on the
 *  sample grid, NaN where the track is absent. The arrays are attribution's own: read them, do not keep
 *  or change them. */
export type AttributionTrace = (stage: AttributionStage, grid: number[], values: Float64Array[]) => void;
export type AttributionStage = 'relative activity' | 'after silence contrast' | 'lip-sync weights' | 'after lip sync' | 'after voices';

/** Centred moving mean of the track's activity on the sample grid; NaN where the track is absent. */
function smoothedActivity(track: FaceTrack, grid: number[], fps: number, smoothSec: number): Float64Array {
  const raw = activityOnGrid(track, grid, fps);
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
 * How much this face's mouth region moves when its owner is not talking: small faces differ (detector
 * noise, texture, hair over the mouth) by more than a speaker differs from a listener, so such a face
 * is judged against its own rest. Taken while nobody is heard, when the short has enough of that;
 * else from the face's quieter samples, capped by a typical resting level so that a face that talks
 * all the time still reads as talking.
 */
function restLevel(signal: Float64Array, grid: number[], speech: Interval[], fps: number, o: AttributionOptions): number {
  const silent: number[] = [];
  const all: number[] = [];
  signal.forEach((v, i) => {
    if (Number.isNaN(v)) return;
    all.push(v);
    if (!inSpeech(grid[i]!, speech)) silent.push(v);
  });
  const quantile = (xs: number[], q: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? o.restPrior;
  // The lower third of the silent samples: voice activity misses soft words, and a mouth still moving
  // as a sentence trails off must not pass for rest.
  const rest = silent.length >= o.restMinSilenceSec * fps ? quantile(silent, 0.3) : Math.min(o.restPrior, quantile(all, 0.25));
  return Math.max(o.restFloor, rest);
}

/** The track's raw activity on the sample grid; NaN where the track is absent. */
function activityOnGrid(track: FaceTrack, grid: number[], fps: number): Float64Array {
  return onGrid(track, grid, fps, (s) => s.mouthActivity);
}

/** Whether lip-audio synchrony can read this track's lips (detection says when a face is too small
 *  in its frames for the mouth's cavity to show). */
const lipsReadable = (track: MouthTrack) => !track.lipsTooSmall;

/**
 * How well the track's lips follow the voice, read from both of its mouth signals where detection
 * measured openness: at each sample, the better of openness's match and motion's. Openness follows
 * the syllables' timing closely where it reads a face, but how well it reads one depends on the face:
 * where the teeth show bright as the mouth opens, or the lips are darker than the mouth's inside, its
 * dark share stays level or falls on each syllable, the speaker's own lips read as out of step, and a
 * listener mouthing along matches the voice better by chance. Over the evaluation's development
 * scenes (each GRID speaker's own turns, median), openness against motion correlates with the voice
 * 0.46 / 0.54 (bbaf2n), 0.21 / 0.14 (swwp2s), 0.26 / 0.42 (lbax4n), 0.16 / 0.69 (brbk7n) and
 * -0.12 / 0.22 (swiz3n). Tracks without openness (detections stored before it existed) are read by
 * their motion alone.
 */
function lipMatch(track: MouthTrack, grid: number[], fps: number, voiceByLag: Float64Array[], o: AttributionOptions): LipMatch {
  const motion = lipSync(activityOnGrid(track, grid, fps), voiceByLag, fps, o);
  if (!track.samples.every((s) => s.mouthOpen !== undefined)) return motion;
  const openness = lipSync(
    onGrid(track, grid, fps, (s) => s.mouthOpen!),
    voiceByLag,
    fps,
    o,
  );
  return {
    sync: openness.sync.map((v, i) => Math.max(v, motion.sync[i]!)),
    // Motion is the coarser reader of the syllables: two people talking a few hundred ms apart both
    // move their mouths with the voice's rhythm. It is discounted where faces compete for the voice,
    // so it lifts a face openness cannot read without letting a talker out of step win.
    recent: openness.recent.map((v, i) => Math.max(v, o.motionSyncWeight * motion.recent[i]!)),
  };
}

function onGrid(track: MouthTrack, grid: number[], fps: number, value: (s: MouthTrack['samples'][number]) => number): Float64Array {
  const raw = new Float64Array(grid.length).fill(NaN);
  const t0 = grid[0] ?? 0;
  for (const s of track.samples) {
    const i = Math.round((s.time - t0) * fps);
    if (i >= 0 && i < grid.length) raw[i] = value(s);
  }
  return raw;
}

/** The voice's loudness over each sample's interval (the one its mouth activity compares across),
 *  with the sound taken `lagSec` later than the picture. */
function voiceOnGrid(envelope: SpeechEnvelope, grid: number[], fps: number, lagSec: number): Float64Array {
  const out = new Float64Array(grid.length);
  const points = 5;
  for (let i = 0; i < grid.length; i++) {
    let sum = 0;
    for (let p = 0; p < points; p++) sum += envelopeAt(envelope, grid[i]! + lagSec - p / (points - 1) / fps);
    out[i] = sum / points;
  }
  return out;
}

/** Pearson correlation of a and b over the indices [from, to) where a is known; 0 when either is flat
 *  or too few samples are known to say. */
function correlation(a: Float64Array, b: Float64Array, from: number, to: number): number {
  let n = 0;
  let sa = 0;
  let sb = 0;
  for (let i = from; i < to; i++) {
    if (Number.isNaN(a[i]!)) continue;
    n++;
    sa += a[i]!;
    sb += b[i]!;
  }
  if (n < 4) return 0;
  const ma = sa / n;
  const mb = sb / n;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = from; i < to; i++) {
    if (Number.isNaN(a[i]!)) continue;
    ab += (a[i]! - ma) * (b[i]! - mb);
    aa += (a[i]! - ma) ** 2;
    bb += (b[i]! - mb) ** 2;
  }
  return aa > 1e-12 && bb > 1e-12 ? ab / Math.sqrt(aa * bb) : 0;
}

/** Mean and spread of the known values of `a` over [from, to). */
function meanAndSpread(a: Float64Array, from: number, to: number): { mean: number; spread: number; n: number } {
  let n = 0;
  let sum = 0;
  for (let i = from; i < to; i++) {
    if (!Number.isNaN(a[i]!)) {
      n++;
      sum += a[i]!;
    }
  }
  const mean = n ? sum / n : 0;
  let sq = 0;
  for (let i = from; i < to; i++) if (!Number.isNaN(a[i]!)) sq += (a[i]! - mean) ** 2;
  return { mean, spread: n ? Math.sqrt(sq / n) : 0, n };
}

/**
 * How far each sample's mouth is in step with the voice, as correlations (-1 to 1). `activity` is the
 * mouth signal on the grid: its openness or its motion (lipMatch reads both). Each sample contributes the
 * product of its mouth signal and the voice's loudness, both as deviations from their level over
 * the surrounding `syncContextSec` (in units of their spread there); the mean of those products over
 * `syncWindowSec` is a correlation, local to that window: a face whose lips moved with the voice a
 * moment ago but rest now that someone else talks loses the voice at once rather than a window later.
 * The plain correlation over half the context is taken where it is higher: within one person's long
 * turn the syllables and the mouth's openings match less well than the voice's starts and stops do.
 * The lag between lips and sound is one per track, the one that fits its whole stretch best: the
 * offset of a recording does not change from one second to the next, and a lag chosen per window
 * would let a mouth out of step find some alignment by chance. `recent` is the plain correlation over
 * `competeWindowSec`, which syncWeights compares between faces.
 */
function lipSync(activity: Float64Array, voiceByLag: Float64Array[], fps: number, o: AttributionOptions): LipMatch {
  const n = activity.length;
  let voice = voiceByLag[0]!;
  let best = -Infinity;
  for (const candidate of voiceByLag) {
    const r = correlation(activity, candidate, 0, n);
    if (r > best) [best, voice] = [r, candidate];
  }
  const context = Math.max(2, Math.round((o.syncContextSec * fps) / 2));
  const products = new Float64Array(n).fill(NaN);
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(activity[i]!)) continue;
    const from = Math.max(0, i - context);
    const to = Math.min(n, i + context + 1);
    const a = meanAndSpread(activity, from, to);
    const v = meanAndSpread(voice, from, to);
    products[i] =
      a.n >= 4 && a.spread > 1e-6 && v.spread > 1e-6 ? ((activity[i]! - a.mean) / a.spread) * ((voice[i]! - v.mean) / v.spread) : 0;
  }
  const half = Math.max(1, Math.round((o.syncWindowSec * fps) / 2));
  const wide = Math.max(half, Math.round((o.syncContextSec * fps) / 4));
  const compete = Math.max(2, Math.round((o.competeWindowSec * fps) / 2));
  const sync = new Float64Array(n);
  const recent = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const local = meanAndSpread(products, Math.max(0, i - half), Math.min(n, i + half + 1));
    const around = correlation(activity, voice, Math.max(0, i - wide), Math.min(n, i + wide + 1));
    recent[i] = correlation(activity, voice, Math.max(0, i - compete), Math.min(n, i + compete + 1));
    // The wider correlation carries a turn through a stretch where the syllables match less well.
    sync[i] = Math.max(local.n ? local.mean : 0, around);
  }
  return { sync, recent };
}

/** How well a track's lips follow the voice at each sample: `sync` decides whether they count at all,
 *  `recent` (the plain correlation over `competeWindowSec`) which of two moving mouths the voice is. */
interface LipMatch {
  sync: Float64Array;
  recent: Float64Array;
}

/**
 * What each track's mouth evidence counts for, 0 to 1, from its synchrony with the voice: nothing
 * below `noSync`, in full from `fullSync`, and less as far as another face matched the voice better
 * over the last `competeWindowSec`. Two people who talk at about the same times both follow the
 * voice's starts and stops; only the one whose syllables the voice has matches it best over a couple
 * of seconds, and a listener talking a few hundred ms out of step must lose to that face, not share
 * the voice with it. The window is short enough that a previous speaker's match does not hold back
 * the face that has just started talking, and only faces whose mouths move now (`moving`, activity
 * in units of rest, at least minActivity) compete: a match from a second ago on lips at rest now is
 * the last turn's, not this one's.
 */
function syncWeights(matches: Array<LipMatch | undefined>, moving: Float64Array[], n: number, o: AttributionOptions): Float64Array[] {
  const ramp = (v: number) => Math.min(1, Math.max(0, (v - o.noSync) / (o.fullSync - o.noSync)));
  return matches.map((match, k) => {
    const weights = new Float64Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      let best = match?.recent[i] ?? -1;
      matches.forEach((other, j) => {
        if (j === k || !other) return;
        // Only a mouth that moves now competes for the voice: the last speaker, whose lips matched
        // it until a moment ago and rest now, must not hold back the face that has just started.
        if (!(moving[j]![i]! >= o.minActivity)) return;
        best = Math.max(best, other.recent[i]!);
      });
      // How far the voice is seen on any lips at all: where no face's lips match it (faces too small
      // to read, or the voice's owner off screen), synchrony can tell no face from another, and
      // mouth movement decides alone.
      const seen = Math.min(1, 2 * ramp(best));
      // A face whose lips cannot be read is neither helped nor held back by them.
      const own = match ? ramp(match.sync[i]!) * Math.max(0, 1 - (best - match.recent[i]!) / o.syncMargin) : 1;
      weights[i] = 1 - seen + seen * own;
    }
    return weights;
  });
}

/**
 * Whose mouth starts and stops with each stretch of speech: a speaker's lips rest in the silences
 * around what they say, while a listener who mouths along, chews or laughs moves them there as much
 * as during it. The contrast is judged on `levels` (the same activity, capped higher: see
 * silenceContrastCap) and each face's `signals` over a stretch are scaled by it (in place), so the
 * listener's moving mouth cannot outweigh the speaker's even where their movement happens to match
 * the voice's rhythm (two sentences of the same shape do). A stretch with too little silence around
 * it to judge keeps its activity.
 */
function applySilenceContrast(
  signals: Float64Array[],
  levels: Float64Array[],
  grid: number[],
  speech: Interval[],
  o: AttributionOptions,
): void {
  if (!(o.silenceContrast > 0)) return;
  const minSamples = 3;
  const fps = grid.length > 1 ? 1 / (grid[1]! - grid[0]!) : 1;
  const settle = Math.round(o.silenceGuardSec * fps);
  const lives = signals.map((signal) => {
    const known = [...signal.keys()].filter((i) => !Number.isNaN(signal[i]!));
    return [known[0] ?? 0, known.at(-1) ?? -1] as const;
  });
  const factors = speech.map((interval) => {
    const inside: number[] = [];
    const around: number[] = [];
    grid.forEach((t, i) => {
      if (t >= interval.start && t < interval.end) inside.push(i);
      else if (inSpeech(t, speech)) return;
      else if (
        (t >= interval.start - o.silenceReachSec && t < interval.start - o.silenceGuardSec) ||
        (t >= interval.end + o.silenceGuardSec && t < interval.end + o.silenceReachSec)
      )
        around.push(i);
    });
    return levels.map((signal, k) => {
      const during = inside.map((i) => signal[i]!).filter((v) => !Number.isNaN(v));
      // Not the first or last moments of a track: a face just found or about to be lost (walking in,
      // dashing across) moves its mouth patch for reasons of its own.
      const [first, last] = lives[k]!;
      const quiet = around.filter((i) => i >= first + settle && i <= last - settle).map((i) => signal[i]!);
      if (during.length < minSamples || quiet.length < minSamples) return 1;
      const v = during.reduce((a, b) => a + b, 0) / during.length;
      const q = quiet.reduce((a, b) => a + b, 0) / quiet.length;
      return v > 1e-9 ? Math.min(1, Math.max(0, (v - q) / (v * o.silenceContrast))) : 1;
    });
  });
  grid.forEach((t, i) => {
    const k = speech.findIndex((s) => t >= s.start && t < s.end);
    if (k < 0) return;
    signals.forEach((signal, j) => {
      if (!Number.isNaN(signal[i]!)) signal[i] = signal[i]! * factors[k]![j]!;
    });
  });
}

/**
 * Sentences said in one voice lend each other what the lips showed (in place). Each piece of speech
 * votes for the face whose mouth moved with it most, by its margin over every other face and over
 * "nobody visible" (less `voteMargin`), in every other piece in the same voice (voices.ts);
 * in a piece where those votes agree, the faces they did not choose count for less, by up to
 * `voicePool`. One sentence's lip sync is often near chance (a listener mouthing along, a face a
 * few dozen pixels high), while the face that owns a voice shows it plainly in some of what that
 * voice says, and many pieces each a little clear add up. A piece with no margin votes for nothing,
 * so a voice whose lips were never read changes nothing. Faces are compared where present: another shot's faces get
 * no votes from this shot's pieces.
 */
function lendByVoice(signals: Float64Array[], grid: number[], voices: VoiceChunk[], o: AttributionOptions): void {
  if (!(o.voicePool > 0) || voices.length < 2) return;
  const NONE = signals.length;
  const members = voices.map((v) => grid.flatMap((t, i) => (t >= v.start && t < v.end ? [i] : [])));
  // Each piece's evidence per state (faces, then nobody visible), as the Viterbi pass weighs it.
  const present: boolean[][] = [];
  const votes = members.map((idx) => {
    const evidence = signals.map((signal) => {
      const known = idx.map((i) => signal[i]!).filter((v) => !Number.isNaN(v));
      return known.length >= idx.length / 2 && known.length ? known.reduce((a, b) => a + b, 0) / known.length : -Infinity;
    });
    evidence.push(o.minActivity);
    present.push(evidence.map((e) => e > -Infinity));
    const order = [...evidence.keys()].sort((a, b) => evidence[b]! - evidence[a]!);
    const [best, second] = [evidence[order[0]!]!, Math.max(0, evidence[order[1]!] ?? 0)];
    const margin = best > 0 ? (best - second) / best : 0;
    return { owner: order[0]!, weight: Math.max(0, margin - o.voteMargin) };
  });
  members.forEach((idx, c) => {
    const tally = new Float64Array(NONE + 1);
    votes.forEach((vote, j) => {
      // Only faces vote: lips that plainly move with a voice say whose it is, while lips that do not
      // move say little (a face turned or blurred while walking, a voice over a slide that the next
      // close-up shows). A vote for a face not in this piece (another shot's) says nothing here.
      if (j === c || !vote.weight || vote.owner === NONE || !present[c]![vote.owner]) return;
      const d = voiceDistance(voices[c]!, voices[j]!);
      if (!Number.isNaN(d)) tally[vote.owner]! += vote.weight / (1 + Math.exp((d - o.voiceSameDistance) / o.voiceSoftness));
    });
    const total = tally.reduce((a, b) => a + b, 0);
    const top = Math.max(...tally);
    if (!(top > 0)) return;
    const strength = o.voicePool * Math.min(1, total / o.voteFull);
    signals.forEach((signal, k) => {
      const factor = 1 - strength + (strength * tally[k]!) / top;
      for (const i of idx) if (!Number.isNaN(signal[i]!)) signal[i] = signal[i]! * factor;
    });
  });
}

/**
 * Speaker turns over the speech intervals. `tracks` carry mouth activity per sample; `fps` is the
 * sampling rate and `range` the short's span on the source clock. With the `envelope` of the short's
 * sound, a mouth counts only as far as it moves in step with the voice; without it (detections stored
 * before it existed), any mouth that moves during speech does.
 * With the speech's `voices` (voices.ts), the pieces said in one voice lend each other what the lips
 * showed plainly (lendByVoice).
 */
export function attributeSpeakers(
  tracks: MouthTrack[],
  speech: Interval[],
  range: Interval,
  fps: number,
  options: Partial<AttributionOptions> = {},
  envelope?: SpeechEnvelope,
  voices: VoiceChunk[] = [],
  trace?: AttributionTrace,
): SpeakerTurn[] {
  const o = { ...DEFAULT_ATTRIBUTION, ...options };
  if (!speech.length) return [];
  const n = Math.max(1, Math.round((range.end - range.start) * fps));
  const grid = Array.from({ length: n }, (_, i) => range.start + i / fps);
  const signals = tracks.map((t) => smoothedActivity(t, grid, fps, o.smoothSec));
  // Activity in units of a resting level. A face too small for its lips to be read is judged against
  // its own rest: at 15-30 px the detector's jitter and the face's texture move the mouth patch as much
  // as speech does, by an amount that differs from face to face, so a listener whose patch is busy by
  // nature would outtalk the speaker whose mouth moves twice as much as it does at rest. A face whose
  // lips can be read is judged against a typical rest, and synchrony with the voice decides between
  // such faces (measured on bench:framing's development scenes: their own rest there cost the
  // two-person and muted-listener scenes).
  const levels = signals.map((signal, k) => {
    const rest = lipsReadable(tracks[k]!) ? o.restPrior : restLevel(signal, grid, speech, fps, o);
    const level = signal.map((v) => Math.min(o.silenceContrastCap, v / rest));
    for (let i = 0; i < n; i++) signal[i] = Math.min(o.maxRelative, signal[i]! / rest);
    return level;
  });
  trace?.('relative activity', grid, signals);
  // Only faces whose lips can be read: a small face's mouth signal is mostly detector noise, the same
  // in silence as in speech (on the development panels it cost a third of the turns).
  applySilenceContrast(
    signals.filter((_, k) => lipsReadable(tracks[k]!)),
    levels.filter((_, k) => lipsReadable(tracks[k]!)),
    grid,
    speech,
    o,
  );
  trace?.('after silence contrast', grid, signals);
  if (envelope && envelope.values.length) {
    const lagStep = 0.01;
    const lags = Math.round(o.maxLagSec / lagStep);
    const voiceByLag = Array.from({ length: 2 * lags + 1 }, (_, k) => voiceOnGrid(envelope, grid, fps, (k - lags) * lagStep));
    const weights = syncWeights(
      tracks.map((t) => (lipsReadable(t) ? lipMatch(t, grid, fps, voiceByLag, o) : undefined)),
      signals,
      n,
      o,
    );
    trace?.('lip-sync weights', grid, weights);
    signals.forEach((signal, k) => {
      for (let i = 0; i < n; i++) signal[i] = signal[i]! * weights[k]![i]!;
    });
    trace?.('after lip sync', grid, signals);
  }
  lendByVoice(signals, grid, voices, o);
  trace?.('after voices', grid, signals);
  const states = tracks.length + 1; // the last state is "nobody visible speaks"
  const NONE = tracks.length;
  const dt = 1 / fps;
  const switchCost = o.switchCost;
  // Viterbi over the grid: score[s] is the best total reward of a path ending in state s.
  let score = new Float64Array(states);
  const back: Int32Array[] = [];
  const rewards: Float64Array[] = [];
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
    rewards.push(reward);
    score = next;
  }
  let state = 0;
  for (let s = 1; s < states; s++) if (score[s]! > score[state]!) state = s;
  const path = new Int32Array(n);
  for (let i = n - 1; i >= 0; i--) {
    path[i] = state;
    state = back[i]![state]!;
  }
  return turnsOnPath(path, tracks, speech, grid, rewards, fps, o);
}

/** The speech intervals cut where the Viterbi path changes state, the same speaker's turns joined
 *  across short pauses, each with how sure it is. */
function turnsOnPath(
  path: Int32Array,
  tracks: MouthTrack[],
  speech: Interval[],
  grid: number[],
  rewards: Float64Array[],
  fps: number,
  o: AttributionOptions,
): SpeakerTurn[] {
  const n = path.length;
  const NONE = tracks.length;
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
    if (current === undefined) current = idOf(path[Math.min(n - 1, Math.max(0, Math.round((interval.start - grid[0]!) * fps)))]!);
    turns.push({ start, end: interval.end, trackId: current });
  }
  // Join the same speaker's turns across short pauses.
  const joined: SpeakerTurn[] = [];
  for (const t of turns) {
    const last = joined.at(-1);
    if (last && last.trackId === t.trackId && t.start - last.end < o.joinGapSec) last.end = t.end;
    else joined.push({ ...t });
  }
  for (const turn of joined) {
    const judged = turnConfidence(turn, tracks, rewards, grid);
    // A face too small for lip sync is chosen by how much its mouth patch moves against its own rest,
    // much of which is the detector's jitter: the margin that measures overstates how sure that is.
    const small = turn.trackId !== null && tracks.find((t) => t.id === turn.trackId)?.lipsTooSmall;
    Object.assign(turn, judged, small ? { confidence: Math.round(100 * judged.confidence * o.smallFaceConfidence) / 100 } : {});
  }
  return joined;
}

/**
 * How sure the choice of a turn's speaker is, 0-1: the evidence for the chosen state (a face, or
 * nobody visible) over the turn, less the evidence for the likeliest other, as a share of the
 * chosen's. A speaker whose mouth moved three times as much as anyone else's reads 0.67; two faces
 * that moved alike read about 0.
 */
function turnConfidence(
  turn: SpeakerTurn,
  tracks: MouthTrack[],
  rewards: Float64Array[],
  grid: number[],
): { confidence: number; runnerUp: number | null } {
  const states = tracks.length + 1;
  const sums = new Float64Array(states);
  rewards.forEach((reward, i) => {
    if (grid[i]! < turn.start || grid[i]! >= turn.end) return;
    for (let s = 0; s < states; s++) sums[s]! += Math.max(0, reward[s]!);
  });
  const chosen = turn.trackId === null ? tracks.length : tracks.findIndex((t) => t.id === turn.trackId);
  let other = 0;
  let runnerUp = tracks.length;
  for (let s = 0; s < states; s++)
    if (s !== chosen && (sums[s]! > other || runnerUp === chosen)) {
      other = sums[s]!;
      runnerUp = s;
    }
  const own = sums[chosen]!;
  return {
    confidence: own > 1e-9 ? Math.round(100 * Math.min(1, Math.max(0, (own - other) / own))) / 100 : 0,
    runnerUp: runnerUp < tracks.length ? tracks[runnerUp]!.id : null,
  };
}
