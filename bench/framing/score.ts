// How well a crop path frames a labelled scene: the figures the framing evaluation reports, per scene,
// and per family over many scenes. What counts is what a viewer sees: the heard speaker wholly in the
// window (in its middle half when the window holds several faces), how soon the window gets to a new
// speaker, switches nobody asked for, faces cut by the window's edge, a window that trembles while
// one still person talks, a picture with no face shown whole, a facecam stacked over its screen.
import { shownAt } from '@shorts/common/reframe/window';
import { boxesShownAt } from '../../test/helpers/reframe.js';
import type { Box, Reframe } from '@shorts/common/reframe/types';
import type { SceneLabels } from './compose.js';

/** Runs of one voice shorter than this are interjections ("yeah"): the camera is meant not to move
 *  for them (MIN_HOLD_SEC in camera.ts), so they are neither scored on nor timed. */
export const INTERJECTION_SEC = 1.2;
/** A change of framing this close to a turn's onset or an edit answers it (before: a lead-in). */
const SWITCH_BEFORE_SEC = 1.0;
const SWITCH_AFTER_SEC = 1.5;
const OUTPUT_WIDTH = 1080;

export interface SceneScore {
  family: string;
  seed: number;
  duration: number;
  /** Share of the scored speech samples with the heard speaker framed; undefined with none. */
  onSpeaker?: number;
  scoredSamples: number;
  /** Scored samples shown split or whole (the camera hedging where it is unsure whose turn it is). */
  hedgedSamples: number;
  /** Per turn onset of an on-screen speaker: seconds until the window first frames them. */
  latencies: number[];
  falseSwitches: number;
  switches: number;
  faceSamples: number;
  slicedSamples: number;
  /** Mean movement of the window's centre per frame (25 a second), output pixels, while one still
   *  person talks; undefined with no such stretch. */
  jitter?: number;
  facelessSamples: number;
  facelessWhole: number;
  facecamSamples: number;
  facecamStacked: number;
  /** Stage 80's wall time over the scene's duration. */
  stageRatio: number;
}

const inside = (f: Box, w: Box, tol = 1) =>
  f.x >= w.x - tol && f.y >= w.y - tol && f.x + f.width <= w.x + w.width + tol && f.y + f.height <= w.y + w.height + tol;

/** A face cut by a shown box's edge: partly in it (more than a sliver) and partly out. */
export const slicedBy = (f: Box, shown: Box[]) => shown.some((b) => overlapShare(f, b) > 0.02 && !inside(f, b, 2));

function overlapShare(f: Box, w: Box): number {
  const ix = Math.max(0, Math.min(f.x + f.width, w.x + w.width) - Math.max(f.x, w.x));
  const iy = Math.max(0, Math.min(f.y + f.height, w.y + w.height) - Math.max(f.y, w.y));
  return (ix * iy) / (f.width * f.height);
}

type Run = SceneLabels['runs'][number];

/** The speaker a sample is scored on: one on-screen voice (no one over it) in a scored run, its face
 *  in the picture, outside a dissolve. */
export function scoredSpeaker(runs: Run[], s: SceneLabels['samples'][number]): number | undefined {
  const run = scoredRunAt(runs, s.time);
  if (!run || run.speaker === 'off' || s.blending || s.offScreen) return undefined;
  const speaker = run.speaker;
  return s.heard.length === 1 && s.heard[0] === speaker && s.faces.some((f) => f.actor === speaker) ? speaker : undefined;
}

/** Whether the actor is framed in a sample shown as `boxes`: wholly in a shown box, in its middle half
 *  when that box holds other faces too. */
export function framedIn(sample: SceneLabels['samples'][number], boxes: Box[], actor: number): boolean {
  const face = sample.faces.find((f) => f.actor === actor);
  if (!face) return false;
  return boxes.some((b) => {
    if (!inside(face.box, b)) return false;
    if (sample.faces.filter((f) => inside(f.box, b)).length <= 1) return true;
    const cx = face.box.x + face.box.width / 2;
    return cx >= b.x + b.width / 4 && cx <= b.x + (3 * b.width) / 4;
  });
}

/** The actors whose faces are wholly inside one of `boxes`. */
export const actorsShown = (sample: SceneLabels['samples'][number], boxes: Box[]): number[] =>
  sample.faces.filter((f) => boxes.some((b) => inside(f.box, b))).map((f) => f.actor);

/** The run of one voice at `t` if it is scored: an on-screen speaker's, longer than an interjection. */
export function scoredRunAt(runs: Run[], t: number): Run | undefined {
  const r = runs.find((r) => t >= r.start && t < r.end);
  return r && r.speaker !== 'off' && r.end - r.start >= INTERJECTION_SEC ? r : undefined;
}

/** Switch latency: from each scored run's first word until its speaker is first framed (the run's
 *  length when never). */
function switchLatencies(labels: SceneLabels, framedAt: (i: number, actor: number) => boolean): number[] {
  const runs = labels.runs;
  const latencies: number[] = [];
  runs.forEach((r, k) => {
    if (r.speaker === 'off' || r.end - r.start < INTERJECTION_SEC) return;
    const prev = runs[k - 1];
    if (prev && prev.speaker === r.speaker) return;
    const first = labels.samples.findIndex((s) => s.time >= r.start);
    if (first < 0 || !labels.samples[first]!.faces.some((f) => f.actor === r.speaker)) return;
    let latency = r.end - r.start;
    for (let i = first; i < labels.samples.length && labels.samples[i]!.time < r.end; i++) {
      if (framedAt(i, r.speaker)) {
        latency = labels.samples[i]!.time - r.start;
        break;
      }
    }
    latencies.push(latency);
  });
  return latencies;
}

/** Each frame (0.04 s) at which the window's centre moves while one person talks and holds still,
 *  away from edits and cuts of the path, and by how much in output pixels; `frames` counts all such
 *  frames, moving or not. */
export function stillSpeakerMoves(
  labels: SceneLabels,
  reframe: Reframe,
): { frames: number; moves: Array<{ time: number; actor: number; px: number }> } {
  const moves: Array<{ time: number; actor: number; px: number }> = [];
  let frames = 0;
  const cutTimes = [
    ...reframe.keyframes.filter((k, i) => i > 0 && Math.abs(k.time - reframe.keyframes[i - 1]!.time) < 1e-6).map((k) => k.time),
    ...reframe.segments.map((s) => s.start),
    ...labels.shots.map((s) => s.start),
  ];
  for (let t = 0; t + 0.04 < labels.duration; t += 0.04) {
    const run = scoredRunAt(labels.runs, t);
    if (!run || cutTimes.some((c) => Math.abs(c - t) < 0.3)) continue;
    const i = Math.min(labels.samples.length - 1, Math.round(t * 10));
    const j = Math.min(labels.samples.length - 1, i + 1);
    const a = labels.samples[i]!.faces.find((f) => f.actor === run.speaker);
    const b = labels.samples[j]!.faces.find((f) => f.actor === run.speaker);
    // A person who moves is followed on purpose; only still ones (under a pixel a frame) count.
    if (!a || !b || Math.abs(a.box.x - b.box.x) > 0.4 * (j - i || 1) * 2.5) continue;
    const w0 = boxesShownAt(reframe, t)[0]!;
    const w1 = boxesShownAt(reframe, t + 0.04)[0]!;
    const perPixel = OUTPUT_WIDTH / w0.width;
    const px = Math.hypot(w1.x + w1.width / 2 - (w0.x + w0.width / 2), w1.y + w1.height / 2 - (w0.y + w0.height / 2)) * perPixel;
    frames++;
    if (px > 0) moves.push({ time: t, actor: run.speaker as number, px });
  }
  return { frames, moves };
}

/** Jitter: the window centre's mean movement per frame, in output pixels, while one person talks and
 *  holds still; undefined with no such frame. */
function meanJitter(labels: SceneLabels, reframe: Reframe): number | undefined {
  const { frames, moves } = stillSpeakerMoves(labels, reframe);
  return frames ? moves.reduce((sum, m) => sum + m.px, 0) / frames : undefined;
}

export function scoreScene(labels: SceneLabels, reframe: Reframe, stageSec: number): SceneScore {
  const score: SceneScore = {
    family: labels.family,
    seed: labels.seed,
    duration: labels.duration,
    scoredSamples: 0,
    hedgedSamples: 0,
    latencies: [],
    falseSwitches: 0,
    switches: 0,
    faceSamples: 0,
    slicedSamples: 0,
    facelessSamples: 0,
    facelessWhole: 0,
    facecamSamples: 0,
    facecamStacked: 0,
    stageRatio: stageSec / labels.duration,
  };
  const content = labels.content;
  const runs = labels.runs;
  const shownPerSample = labels.samples.map((s) => shownAt(reframe, s.time));
  const framedAt = (i: number, actor: number): boolean => framedIn(labels.samples[i]!, shownPerSample[i]!.boxes, actor);

  let on = 0;
  let previousShown: { framed: Set<number>; seen: Set<number> } | undefined;
  const switchTimes: number[] = [];
  labels.samples.forEach((s, i) => {
    const { boxes: shown, layout } = shownPerSample[i]!;
    const kind = labels.shots[s.shot]!.kind;
    if (!s.blending) {
      // Faces cut by the window's edge: partly in a shown box and partly out.
      for (const f of s.faces) {
        score.faceSamples++;
        if (slicedBy(f.box, shown)) score.slicedSamples++;
      }
      if (kind === 'slide' || kind === 'broll') {
        score.facelessSamples++;
        const area = shown.reduce((a, b) => a + b.width * b.height, 0);
        if (layout === 'fit' || area >= 0.9 * content.width * content.height) score.facelessWhole++;
      }
      if (kind === 'facecam') {
        score.facecamSamples++;
        if (layout === 'stack') score.facecamStacked++;
      }
    }
    // Who is framed, as a set of actors: a change of it is a switch. Only actors in the picture both
    // before and now count: a face hidden or uncovered by someone walking past is no camera move.
    const framedSet = new Set(s.faces.filter((f) => shown.some((b) => inside(f.box, b))).map((f) => f.actor));
    const seenNow = new Set(s.faces.map((f) => f.actor));
    if (previousShown && !s.blending) {
      const both = [...seenNow].filter((a) => previousShown!.seen.has(a));
      if (both.some((a) => framedSet.has(a) !== previousShown!.framed.has(a))) switchTimes.push(s.time);
    }
    previousShown = { framed: framedSet, seen: seenNow };

    const speaker = scoredSpeaker(runs, s);
    if (speaker !== undefined) {
      score.scoredSamples++;
      if (framedAt(i, speaker)) on++;
      if (layout === 'split' || layout === 'fit') score.hedgedSamples++;
    }
  });
  if (score.scoredSamples) score.onSpeaker = on / score.scoredSamples;

  score.latencies = switchLatencies(labels, framedAt);

  // A switch answers a turn's onset (any voice, any length) or an edit; anything else is false.
  const reasons = [...runs.map((r) => r.start), ...labels.shots.slice(1).map((s) => s.start + s.dissolveSec / 2)];
  score.switches = switchTimes.length;
  score.falseSwitches = switchTimes.filter((t) => !reasons.some((x) => t >= x - SWITCH_BEFORE_SEC && t <= x + SWITCH_AFTER_SEC)).length;

  const jitter = meanJitter(labels, reframe);
  if (jitter !== undefined) score.jitter = jitter;
  return score;
}

export interface FamilySummary {
  family: string;
  scenes: number;
  onSpeakerMean?: number;
  onSpeakerP10?: number;
  /** Share of the scored speech shown split or whole rather than on one face. */
  hedged?: number;
  latencyMedian?: number;
  latencyWorst?: number;
  falsePerMinute: number;
  slicedShare: number;
  jitterMean?: number;
  jitterMax?: number;
  facelessWhole?: number;
  facecamStacked?: number;
  stageMean: number;
  stageMax: number;
}

/** The nearest-rank percentile of sorted values. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export function summarise(family: string, scores: SceneScore[]): FamilySummary {
  const on = scores.flatMap((s) => (s.onSpeaker === undefined ? [] : [s.onSpeaker])).sort((a, b) => a - b);
  const lat = scores.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const jit = scores.flatMap((s) => (s.jitter === undefined ? [] : [s.jitter]));
  const sum = (f: (s: SceneScore) => number) => scores.reduce((a, s) => a + f(s), 0);
  const minutes = sum((s) => s.duration) / 60;
  const faceless = sum((s) => s.facelessSamples);
  const facecam = sum((s) => s.facecamSamples);
  return {
    family,
    scenes: scores.length,
    ...(on.length ? { onSpeakerMean: on.reduce((a, b) => a + b, 0) / on.length, onSpeakerP10: percentile(on, 0.1) } : {}),
    ...(sum((s) => s.scoredSamples) ? { hedged: sum((s) => s.hedgedSamples) / sum((s) => s.scoredSamples) } : {}),
    ...(lat.length ? { latencyMedian: percentile(lat, 0.5), latencyWorst: lat.at(-1)! } : {}),
    falsePerMinute: minutes ? sum((s) => s.falseSwitches) / minutes : 0,
    slicedShare:
      sum((s) => s.slicedSamples) /
      Math.max(
        1,
        sum((s) => s.faceSamples),
      ),
    ...(jit.length ? { jitterMean: jit.reduce((a, b) => a + b, 0) / jit.length, jitterMax: Math.max(...jit) } : {}),
    ...(faceless ? { facelessWhole: sum((s) => s.facelessWhole) / faceless } : {}),
    ...(facecam ? { facecamStacked: sum((s) => s.facecamStacked) / facecam } : {}),
    stageMean: sum((s) => s.stageRatio) / Math.max(1, scores.length),
    stageMax: Math.max(0, ...scores.map((s) => s.stageRatio)),
  };
}

export function pct(v: number | undefined): string {
  return v === undefined ? '—' : `${(100 * v).toFixed(1)} %`;
}
export function fix(v: number | undefined, digits = 2): string {
  return v === undefined ? '—' : v.toFixed(digits);
}

/** The families' figures as the markdown table bench/README.md keeps. */
export function table(rows: FamilySummary[]): string {
  const head =
    '| family | scenes | on speaker, mean | 10th pct | hedged (split or whole) | switch median | worst | false switches/min | sliced | jitter px/frame (mean, max) | faceless shown whole | facecam stacked | stage / source (mean, max) |';
  const lines = rows.map(
    (s) =>
      `| ${s.family} | ${s.scenes} | ${pct(s.onSpeakerMean)} | ${pct(s.onSpeakerP10)} | ${pct(s.hedged)} | ${fix(s.latencyMedian)} s | ${fix(s.latencyWorst)} s | ${s.falsePerMinute.toFixed(2)} | ${pct(s.slicedShare)} | ${fix(s.jitterMean)}, ${fix(s.jitterMax)} | ${pct(s.facelessWhole)} | ${pct(s.facecamStacked)} | ${s.stageMean.toFixed(3)}, ${s.stageMax.toFixed(3)} |`,
  );
  return [head, `|${'---|'.repeat(13)}`, ...lines].join('\n');
}
