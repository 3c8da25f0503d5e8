// Faces linked across sampled frames into tracks: by overlap and by position, so a face that moves
// between samples stays one track, and a track waits out short misses (a face turned away for a
// moment, a blurred frame) before it ends.
import type { Box, FaceDetection, FaceTrack, SourceShot } from '@shorts/common/reframe/types';
import { iou } from './face-detector.js';

export interface TrackingOptions {
  /** A track not seen for longer than this ends; a face that returns later starts a new one. */
  maxGapSec: number;
  /** Tracks with fewer samples are dropped (stray false detections). */
  minSamples: number;
  /** Largest centre movement between two samples, in face widths, for the same face. */
  maxCentreShift: number;
}

export const DEFAULT_TRACKING: TrackingOptions = { maxGapSec: 1.5, minSamples: 3, maxCentreShift: 0.75 };

export interface FrameFaces<T> {
  time: number;
  faces: Array<{ face: FaceDetection; data: T }>;
}

export interface LinkedSample<T> {
  time: number;
  face: FaceDetection;
  data: T;
}

export interface LinkedTrack<T> {
  id: number;
  samples: Array<LinkedSample<T>>;
}

const centre = (b: Box): [number, number] => [b.x + b.width / 2, b.y + b.height / 2];

/** How unlike two boxes are as the same face (lower is more alike); undefined when they cannot be. */
function linkCost(last: Box, next: Box, gapSec: number, o: TrackingOptions): number | undefined {
  const [ax, ay] = centre(last);
  const [bx, by] = centre(next);
  const width = Math.max(last.width, next.width);
  const shift = Math.hypot(ax - bx, ay - by) / width;
  const sizeRatio = next.width / last.width;
  if (sizeRatio < 0.6 || sizeRatio > 1 / 0.6) return undefined;
  // The allowed movement grows with the time since the track was last seen.
  const allowed = o.maxCentreShift * (1 + Math.min(2, gapSec));
  const overlap = iou(last, next);
  if (overlap < 0.1 && shift > allowed) return undefined;
  return 1 - overlap + shift;
}

/** Greedy matching of faces seen `gapSec` apart, lowest cost first: pairs of indices [from, to]. */
export function matchFaces(from: Box[], to: Box[], gapSec: number, options: Partial<TrackingOptions> = {}): Array<[number, number]> {
  const o = { ...DEFAULT_TRACKING, ...options };
  const pairs: Array<{ i: number; j: number; cost: number }> = [];
  from.forEach((a, i) =>
    to.forEach((b, j) => {
      const cost = linkCost(a, b, gapSec, o);
      if (cost !== undefined) pairs.push({ i, j, cost });
    }),
  );
  pairs.sort((a, b) => a.cost - b.cost);
  const usedFrom = new Set<number>();
  const usedTo = new Set<number>();
  const out: Array<[number, number]> = [];
  for (const p of pairs) {
    if (usedFrom.has(p.i) || usedTo.has(p.j)) continue;
    usedFrom.add(p.i);
    usedTo.add(p.j);
    out.push([p.i, p.j]);
  }
  return out;
}

/** Links detections frame by frame (frames in time order). Each frame's faces are matched to the
 *  active tracks as a whole; since tracks can wait out different gaps, the cost uses each track's own. */
export function linkTracks<T>(frames: Array<FrameFaces<T>>, options: Partial<TrackingOptions> = {}): Array<LinkedTrack<T>> {
  const o = { ...DEFAULT_TRACKING, ...options };
  const all: Array<LinkedTrack<T>> = [];
  let active: Array<LinkedTrack<T>> = [];
  for (const frame of frames) {
    active = active.filter((t) => frame.time - t.samples.at(-1)!.time <= o.maxGapSec);
    const pairs: Array<{ t: number; f: number; cost: number }> = [];
    active.forEach((track, t) => {
      const last = track.samples.at(-1)!;
      frame.faces.forEach(({ face }, f) => {
        const cost = linkCost(last.face, face, frame.time - last.time, o);
        if (cost !== undefined) pairs.push({ t, f, cost });
      });
    });
    pairs.sort((a, b) => a.cost - b.cost);
    const usedTracks = new Set<number>();
    const usedFaces = new Set<number>();
    for (const p of pairs) {
      if (usedTracks.has(p.t) || usedFaces.has(p.f)) continue;
      usedTracks.add(p.t);
      usedFaces.add(p.f);
      const { face, data } = frame.faces[p.f]!;
      active[p.t]!.samples.push({ time: frame.time, face, data });
    }
    frame.faces.forEach(({ face, data }, f) => {
      if (usedFaces.has(f)) return;
      const track: LinkedTrack<T> = { id: all.length, samples: [{ time: frame.time, face, data }] };
      all.push(track);
      active.push(track);
    });
  }
  return all.filter((t) => t.samples.length >= o.minSamples).map((t, id) => ({ ...t, id }));
}

export interface CredibleTrackOptions {
  /** A face the detector was never sure of: its best score stays under this (BlazeFace reports faces
   *  from 0.6). */
  unsureScore: number;
  /** ...counts only when seen over this share of its shot's samples, as a person in frame is. */
  minPresence: number;
}

/** Tuned on bench:framing's development scenes (docs/reframing.md, "Doubtful faces"). */
export const DEFAULT_CREDIBLE_TRACK: CredibleTrackOptions = { unsureScore: 0.8, minPresence: 0.8 };

/**
 * The tracks worth framing and naming as speakers: a track whose every detection was doubtful and
 * that shows for only part of its shot is taken for a false face in busy content (B-roll, a moving
 * pattern, a screen) and dropped. Such a face took a voice-over from "nobody visible" and framed a
 * corner of the B-roll; a small real face in a wide 4K shot scores as low but is there all along,
 * and is kept. Track ids are left as they are.
 */
export function credibleTracks<T extends FaceTrack>(
  tracks: T[],
  shots: SourceShot[],
  fps: number,
  options: Partial<CredibleTrackOptions> = {},
): T[] {
  const o = { ...DEFAULT_CREDIBLE_TRACK, ...options };
  return tracks.filter((track) => {
    if (!track.samples.length || Math.max(...track.samples.map((s) => s.score)) >= o.unsureScore) return true;
    const first = track.samples[0]!.time;
    const shot = shots.find((x) => first >= x.start - 1e-6 && first < x.end) ?? shots[shots.length - 1];
    if (!shot) return true;
    const shotSamples = Math.max(1, Math.round((shot.end - shot.start) * fps));
    return track.samples.length >= o.minPresence * shotSamples;
  });
}
