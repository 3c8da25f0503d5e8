// The virtual camera: from what detection found in a short (face tracks, who speaks when) to the
// crop path the render follows. Pure: the same detections and settings give the same path, so a
// render with other director settings recomputes it without a new detection pass.
//
// The whole short is known in advance, so the camera never chases: a change of speaker is a cut
// placed on the turn itself, a drift of the same person is either ignored (dead zone) or an eased
// pan, and every window is chosen so that no detected face is sliced by its edge.
import {
  MOTION_GRID_COLS,
  MOTION_GRID_ROWS,
  type Box,
  type DetectedShot,
  type DirectorSettings,
  type FaceTrack,
  type Reframe,
  type ReframeKeyframe,
  type ReframeSegment,
  type ShortDetections,
  type SpeakerTurn,
  type TrackSample,
  type SourceShot,
} from './types.js';
import { reframeQuality } from './quality.js';
import { interpolate } from './window.js';

export { interpolate } from './window.js';

/** The farthest a cut moves before the turn's first sound (see leadIn). */
export const LEAD_IN_MAX_SEC = 0.25;
/** A turn whose speaker detection is less sure of than this (SpeakerTurn.confidence: its evidence
 *  over the next likeliest's) is shown as the whole picture rather than a guess. On bench:framing's
 *  development scenes (seeds 0-3 of each family) both turns under 0.15 named the wrong face and every
 *  right turn read 0.17 or more; the wrong turns between 0.38 and 0.6 read as sure as right ones, so
 *  no higher bound separates them. */
export const LOW_CONFIDENCE = 0.15;
/** Shots shorter than this are not taken: a "yeah" from the listener does not move the camera. */
export const MIN_HOLD_SEC = 1.2;
/** Faces below this share of the source height are too small to frame (a crowd, a poster); a panel of
 *  three or four in one wide shot has faces of 3 % and up, and each is followed turn by turn. As
 *  BlazeFace boxes them, such faces read 2.4-2.7 % (the evaluation's panels: faces of 3 % less a
 *  tenth either way), so the floor sits under that: at 2.5 % a speaker at 2.4 % was never framed
 *  and the camera held a neighbour through every one of their turns (bench/README, 2026-12-01,
 *  third session). */
export const MIN_FACE_HEIGHT_FRACTION = 0.02;
/** The window never zooms in past this share of the largest window (keeps the picture sharp). */
const MIN_ZOOM_FRACTION = 0.5;
/** The face's centre sits this far down the window (eyes on the upper third). */
const FACE_CENTRE_Y = 0.4;
/** A track's box is interpolated across gaps up to this long (a blink of the detector, a head turn). */
const MAX_GAP_SEC = 1.0;
/** Pans move at most this many window widths a second, and take this long at least and at most. */
const PAN_SPEED = 0.75;
const PAN_MIN_SEC = 0.4;
const PAN_MAX_SEC = 1.2;
/** A pan that moves with the face (panWithFace) waits at most this long for the face to get there. */
const PAN_MATCH_MAX_SEC = 3;
/** A face whose smoothed path moves at least this many window widths a second is tracked
 *  continuously; the window follows the path smoothed over ±TRACK_SMOOTH_SEC, catches up with it over
 *  TRACK_CATCH_SEC, and cuts rather than move faster than TRACK_MAX_SPEED widths a second. */
const TRACK_MIN_SPEED = 0.12;
const TRACK_SMOOTH_SEC = 0.5;
const TRACK_CATCH_SEC = 0.6;
const TRACK_MAX_SPEED = 1.5;
/** The eased pan as linear pieces: smoothstep sampled at these fractions of its duration. */
const EASE_STEPS = [0, 0.25, 0.5, 0.75, 1];
/** Faces are kept this share of their width clear of the window's edge when placing it. */
const FACE_MARGIN = 0.06;

export interface OutputSize {
  width: number;
  height: number;
}

interface Shot {
  start: number;
  end: number;
  /** The framed track; null for a fallback shot. */
  trackId: number | null;
  /** A fallback shot's two likeliest speakers (the choice, then the runner-up), shown split when both
   *  are in the picture; without them the fallback is the whole picture. */
  pair?: [number, number];
}

/** The same framing: one track, or the same fallback. */
function sameFraming(a: Shot, b: Shot): boolean {
  return a.trackId === b.trackId && (a.pair ?? []).slice().sort().join() === (b.pair ?? []).slice().sort().join();
}

/** Faces smaller than this share of the largest framed face in a shot (an audience, a poster, a
 *  passer-by) never move the window and never constrain it. */
export const SMALL_FACE_RELATIVE = 0.5;
/** A track present for less than this share of the shot's longest one, with no turn of its own, is
 *  fleeting: not framed, and no constraint on the window. */
const FLEETING_TRACK_SHARE = 0.25;
/** A facecam: the shot's only face, at most this share of the picture's height, off-centre... */
const FACECAM_MAX_HEIGHT = 0.25;
const FACECAM_OFF_CENTRE = 0.2;
/** ...over content that changes at least this much between samples (mean over the motion grid cells
 *  away from the face; a studio wall behind a talking head changes ~0.002). */
const FACECAM_MIN_MOTION = 0.008;
/** ...and that stays put: its centre's spread (10th to 90th percentile, each axis) within this many
 *  face widths. An inset's face sways and leans; a person who walks across the picture is no inset. */
const FACECAM_MAX_TRAVEL = 0.5;
/** In a stack, the screen takes at most this share of the output's height. */
const STACK_CONTENT_MAX = 0.6;
/** The facecam window: this many face heights tall (head and shoulders). */
const FACECAM_WINDOW_FACES = 2.4;

export function planReframe(detections: ShortDetections, director: DirectorSettings, output: OutputSize): Reframe {
  const { sourceWidth: W, sourceHeight: H, start, end } = detections;
  if (!(W > 0 && H > 0 && output.width > 0 && output.height > 0 && end > start)) throw new Error('planReframe: bad sizes or range');
  const sourceShots: DetectedShot[] = detections.shots?.length
    ? detections.shots
    : [{ start, end, transition: 'start', content: { x: 0, y: 0, width: W, height: H }, motion: [] }];
  const reframe: Reframe = {
    sourceWidth: W,
    sourceHeight: H,
    keyframes: [],
    segments: [],
    shots: sourceShots.map(({ start: s, end: e, transition, transitionEnd }) => ({
      start: s,
      end: e,
      transition,
      ...(transitionEnd !== undefined ? { transitionEnd } : {}),
    })),
  };
  // Each source shot is framed on its own, from the moment its picture takes over to the next's.
  sourceShots.forEach((shot, k) => {
    const from = k === 0 ? start : framingChangeAt(shot);
    const next = sourceShots[k + 1];
    const to = next ? framingChangeAt(next) : end;
    if (!(to > from)) return;
    const part = planShot(within(detections, from, to), validContent(shot.content, W, H), shot.motion, director, output);
    const last = reframe.keyframes[reframe.keyframes.length - 1];
    // Two keyframes at one time are a cut: the earlier window holds up to it, the later from it on.
    if (last && last.time < part.keyframes[0]!.time) reframe.keyframes.push({ ...last, time: part.keyframes[0]!.time });
    reframe.keyframes.push(...part.keyframes);
    reframe.segments.push(...part.segments);
  });
  reframe.quality = reframeQuality(detections, reframe);
  return reframe;
}

/** The detections of [from, to): samples, turns and speech in it (tracks no longer seen dropped). */
function within(d: ShortDetections, from: number, to: number): ShortDetections {
  const inRange = (t: number) => t >= from - 1e-9 && t < to - 1e-9;
  return {
    ...d,
    start: from,
    end: to,
    tracks: d.tracks.map((t) => ({ id: t.id, samples: t.samples.filter((x) => inRange(x.time)) })).filter((t) => t.samples.length > 0),
    turns: d.turns
      .filter((t) => t.end > from && t.start < to)
      .map((t) => ({ ...t, start: Math.max(from, t.start), end: Math.min(to, t.end) })),
    speech: d.speech.filter((x) => x.end > from && x.start < to).map((x) => ({ start: Math.max(from, x.start), end: Math.min(to, x.end) })),
  };
}

function validContent(b: Box, W: number, H: number): Box {
  const x = clampInt(Math.round(b.x), 0, W - 2);
  const y = clampInt(Math.round(b.y), 0, H - 2);
  const width = clampInt(Math.round(b.width), 2, W - x);
  const height = clampInt(Math.round(b.height), 2, H - y);
  return { x, y, width, height };
}

/** The framing of one source shot (no edit inside it). */
function planShot(
  detections: ShortDetections,
  content: Box,
  motion: number[],
  director: DirectorSettings,
  output: OutputSize,
): { keyframes: ReframeKeyframe[]; segments: ReframeSegment[] } {
  const { start, end } = detections;
  const all = new FaceIndex(detections);
  // Enough of the shot to matter: a face glimpsed for a frame or two is not framed.
  const seen = all.tracks.filter((t) => t.track.samples.length >= Math.min(3, all.timesIn(start, end).length));
  // A face seen for a moment that never speaks (a false detection in busy content, a passer-by)
  // neither sets the scale of who counts nor gets framed: a 0.6 s false face three times a facecam's
  // size once took the whole shot from it.
  const speaking = new Set(detections.turns.map((t) => t.trackId));
  const longest = Math.max(0, ...seen.map((t) => t.track.samples.length));
  const credible = seen.filter((t) => speaking.has(t.id) || t.track.samples.length >= FLEETING_TRACK_SHARE * longest);
  const largest = Math.max(0, ...credible.map((t) => t.medianHeight));
  const relevant = credible.filter((t) => t.medianHeight >= SMALL_FACE_RELATIVE * largest);
  const framed = relevant.filter((t) => t.medianHeight >= MIN_FACE_HEIGHT_FRACTION * content.height);
  const aspect = output.width / output.height;

  if (framed.length === 0) {
    // Nothing to follow (a slide, B-roll, a screen).
    const whole = wholePicture(content, aspect, start, end);
    return { segments: [whole.segment], keyframes: [whole.keyframe] };
  }

  // Only the faces that matter move or block the window.
  const faces = new FaceIndex({ ...detections, tracks: detections.tracks.filter((t) => relevant.some((r) => r.id === t.id)) });
  const facecam = facecamOf(faces, framed, content, motion);
  if (facecam !== undefined) {
    const panels = stackPanels(faces, facecam, content, output);
    return {
      segments: [{ start: r3(start), end: r3(end), layout: 'stack', tracks: [facecam] }],
      keyframes: [{ time: r3(start), ...panels[0]!, panels }],
    };
  }

  const shots = planShots(
    detections,
    framed.map((t) => t.id),
    faces,
  );
  const camera = new Camera(faces, content, director.facePaddingFactor);
  const keyframes: ReframeKeyframe[] = [];
  const segments: ReframeSegment[] = [];
  // Each shot's keyframes follow the last one's, which holds until the shot's first.
  const append = (keys: ReframeKeyframe[]) => {
    const last = keyframes[keyframes.length - 1];
    if (last && last.time < keys[0]!.time) keyframes.push({ ...last, time: keys[0]!.time });
    keyframes.push(...keys);
  };
  const halfOutput = { width: output.width, height: output.height / 2 };
  shots.forEach((shot, i) => {
    const pair = shot.pair?.every((id) => faces.presence(id, shot.start, shot.end) >= 0.8) ? shot.pair : undefined;
    if (shot.trackId === null && pair) {
      // Detection could not tell which of two speaks: both, split, each face whole in its own panel.
      segments.push({ start: r3(shot.start), end: r3(shot.end), layout: 'split', tracks: pair });
      append(camera.split(pair, shot.start, shot.end, halfOutput));
      return;
    }
    if (shot.trackId === null) {
      // Detection could not tell who speaks: the whole picture cannot show the wrong person.
      const whole = wholePicture(content, aspect, shot.start, shot.end);
      segments.push(whole.segment);
      append([whole.keyframe]);
      return;
    }
    const partner = director.maxSpeakersToFocus >= 2 ? splitPartner(shots, i, faces) : undefined;
    segments.push({
      start: r3(shot.start),
      end: r3(shot.end),
      layout: partner === undefined ? 'single' : 'split',
      tracks: partner === undefined ? [shot.trackId] : [shot.trackId, partner],
    });
    append(
      partner === undefined
        ? camera.follow(shot.trackId, shot.start, shot.end, aspect)
        : camera.split([shot.trackId, partner], shot.start, shot.end, halfOutput),
    );
  });
  return { keyframes, segments };
}

/** The whole picture over a blurred copy of itself, still, over [start, end). A picture already near
 *  the output's shape needs no bars: its largest window is nearly all of it. */
function wholePicture(content: Box, aspect: number, start: number, end: number): { segment: ReframeSegment; keyframe: ReframeKeyframe } {
  const full = largestWindow(content.width, content.height, aspect);
  const nearlyAll = full.width * full.height >= 0.9 * content.width * content.height;
  const box = nearlyAll ? centred(full, content.width, content.height) : { x: 0, y: 0, width: content.width, height: content.height };
  return {
    segment: { start: r3(start), end: r3(end), layout: nearlyAll ? 'single' : 'fit', tracks: [] },
    keyframe: { time: r3(start), ...box, x: box.x + content.x, y: box.y + content.y },
  };
}

/** The track of a facecam shot: the only face, small, off-centre and staying put, over a picture
 *  that changes. */
function facecamOf(faces: FaceIndex, framed: IndexedTrack[], content: Box, motion: number[]): number | undefined {
  if (framed.length !== 1 || faces.tracks.length !== 1 || motion.length !== MOTION_GRID_COLS * MOTION_GRID_ROWS) return undefined;
  const track = framed[0]!;
  if (track.medianHeight > FACECAM_MAX_HEIGHT * content.height) return undefined;
  const boxes = track.track.samples.map((s) => s.box);
  const cx = median(boxes.map((b) => b.x + b.width / 2));
  const cy = median(boxes.map((b) => b.y + b.height / 2));
  const offX = Math.abs(cx - (content.x + content.width / 2)) / content.width;
  const offY = Math.abs(cy - (content.y + content.height / 2)) / content.height;
  if (Math.max(offX, offY) < FACECAM_OFF_CENTRE) return undefined;
  const fw = median(boxes.map((b) => b.width));
  const travel = (values: number[]) => {
    const sorted = values.slice().sort((a, b) => a - b);
    return sorted[Math.floor(0.9 * (sorted.length - 1))]! - sorted[Math.floor(0.1 * (sorted.length - 1))]!;
  };
  if (Math.max(travel(boxes.map((b) => b.x + b.width / 2)), travel(boxes.map((b) => b.y + b.height / 2))) > FACECAM_MAX_TRAVEL * fw)
    return undefined;
  // The picture's motion away from the face (the face and a face-width around it left out).
  const W = faces.d.sourceWidth;
  const H = faces.d.sourceHeight;
  const fh = track.medianHeight;
  let sum = 0;
  let n = 0;
  for (let gy = 0; gy < MOTION_GRID_ROWS; gy++) {
    for (let gx = 0; gx < MOTION_GRID_COLS; gx++) {
      const x = ((gx + 0.5) * W) / MOTION_GRID_COLS;
      const y = ((gy + 0.5) * H) / MOTION_GRID_ROWS;
      const nearFace = Math.abs(x - cx) < 1.5 * fw && Math.abs(y - cy) < 1.5 * fh;
      const inContent = x >= content.x && x < content.x + content.width && y >= content.y && y < content.y + content.height;
      if (nearFace || !inContent) continue;
      sum += motion[gy * MOTION_GRID_COLS + gx]!;
      n++;
    }
  }
  return n > 0 && sum / n >= FACECAM_MIN_MOTION ? track.id : undefined;
}

/** A stack's panels: the facecam's window on top, the content below, each as wide as the output. */
function stackPanels(faces: FaceIndex, id: number, content: Box, output: OutputSize): [Box, Box] {
  const even = (v: number) => Math.max(2, Math.round(v / 2) * 2);
  const contentH = Math.min(even((output.width * content.height) / content.width), even(STACK_CONTENT_MAX * output.height));
  const topH = output.height - contentH;
  // The screen: all of it when it fits the width, else its middle at the panel's shape.
  const screenAspect = output.width / contentH;
  const screen = evenWindow(Math.min(content.height, content.width / screenAspect), screenAspect, content.width, content.height);
  const bottom = centred(screen, content.width, content.height);
  bottom.x += content.x;
  bottom.y += content.y;
  const track = faces.tracks.find((t) => t.id === id)!;
  const boxes = track.track.samples.map((s) => s.box);
  const cx = median(boxes.map((b) => b.x + b.width / 2));
  const cy = median(boxes.map((b) => b.y + b.height / 2));
  const camAspect = output.width / topH;
  const cam = evenWindow(Math.max(track.medianHeight * FACECAM_WINDOW_FACES, 16), camAspect, content.width, content.height);
  const top = {
    x: clampInt(Math.round(cx - cam.width / 2), content.x, content.x + content.width - cam.width),
    y: clampInt(Math.round(cy - FACE_CENTRE_Y * cam.height), content.y, content.y + content.height - cam.height),
    width: cam.width,
    height: cam.height,
  };
  return [top, bottom];
}

// ---- who is on screen when --------------------------------------------------------------------------

/**
 * Shots from the turns: each starts on its speaker's turn and lasts until another speaker's turn,
 * silences and unattributed speech included. Shots under MIN_HOLD_SEC give their time to the shot
 * before (the camera stays), or to the next one at the very start.
 */
function planShots(d: ShortDetections, framed: number[], faces: FaceIndex): Shot[] {
  const turns = d.turns
    .filter((t) => t.trackId !== null && framed.includes(t.trackId) && t.end > d.start && t.start < d.end)
    // A turn detection is not sure of is nobody's: its shot shows its two likeliest speakers split,
    // or the whole picture (planShot).
    .map((t): SpeakerTurn & { pair?: [number, number] } => {
      if (t.confidence === undefined || t.confidence >= LOW_CONFIDENCE || framed.length <= 1) return t;
      const pair: [number, number] | undefined =
        t.runnerUp != null && t.runnerUp !== t.trackId && framed.includes(t.runnerUp) ? [t.trackId!, t.runnerUp] : undefined;
      return { ...t, trackId: null, ...(pair ? { pair } : {}) };
    })
    .sort((a, b) => a.start - b.start);
  const raw: Shot[] = [];
  for (const turn of turns) {
    const last = raw[raw.length - 1];
    const shot: Shot = {
      start: Math.max(d.start, turn.start),
      end: d.end,
      trackId: turn.trackId,
      ...(turn.pair ? { pair: turn.pair } : {}),
    };
    if (last && sameFraming(last, shot)) continue;
    if (last) last.end = shot.start;
    raw.push(shot);
  }
  if (raw.length === 0) raw.push({ start: d.start, end: d.end, trackId: faces.mostProminent(framed) });
  raw[0]!.start = d.start;
  for (let i = 1; i < raw.length; i++) {
    const at = leadIn(raw[i]!, raw[i - 1]!, turns, faces);
    raw[i - 1]!.end = at;
    raw[i]!.start = at;
  }

  // Drop the shortest too-short shot until none is left, so a run of quick exchanges resolves to the
  // longer turns around it.
  const shots = raw.slice();
  for (;;) {
    let shortest = -1;
    for (let i = 0; i < shots.length; i++) {
      const len = shots[i]!.end - shots[i]!.start;
      if (shots.length > 1 && len < MIN_HOLD_SEC && (shortest < 0 || len < shots[shortest]!.end - shots[shortest]!.start)) shortest = i;
    }
    if (shortest < 0) break;
    const gone = shots[shortest]!;
    if (shortest > 0) shots[shortest - 1]!.end = gone.end;
    else shots[1]!.start = gone.start;
    shots.splice(shortest, 1);
    // Neighbours now adjacent with the same speaker are one shot.
    for (let i = shots.length - 1; i > 0; i--) {
      if (sameFraming(shots[i]!, shots[i - 1]!)) {
        shots[i - 1]!.end = shots[i]!.end;
        shots.splice(i, 1);
      }
    }
  }
  return shots;
}

/**
 * A new speaker's mouth opens before their first sound (a breath, the lips closing for a "b"); a cut
 * that shows them just as they start reads as on the turn, one on the sound itself as a beat late.
 * The cut moves back over the samples where the new speaker's mouth already moves (a quarter of its
 * median in the shot's turns) and moves more than the previous speaker's, up to LEAD_IN_MAX_SEC and
 * never before the previous speech ends. Only that far: a mouth may move for half a second before
 * the word, and a cut that long before it is early. (Detection puts the turn on its first sound; see
 * soundOnsets in the agent.)
 */
function leadIn(shot: Shot, before: Shot, turns: SpeakerTurn[], faces: FaceIndex): number {
  if (shot.trackId === null || before.trackId === null) return shot.start;
  const own = turns.filter((t) => t.trackId === shot.trackId && t.start >= shot.start && t.start < shot.end);
  const activity = own.flatMap((t) => faces.samplesIn(shot.trackId!, t.start, t.end).map((s) => s.mouthActivity));
  if (!activity.length) return shot.start;
  const threshold = 0.25 * median(activity);
  const previousSpeech = Math.max(
    before.start,
    ...turns.filter((t) => t.trackId !== shot.trackId && t.end <= shot.start + 1e-9).map((t) => t.end),
  );
  const floor = Math.max(previousSpeech, shot.start - LEAD_IN_MAX_SEC, before.start + MIN_HOLD_SEC);
  const samples = faces.samplesIn(shot.trackId!, floor, shot.start).reverse();
  let at = shot.start;
  for (const s of samples) {
    const other = faces.sampleNear(before.trackId!, s.time)?.mouthActivity ?? 0;
    if (!(s.mouthActivity >= threshold && s.mouthActivity > other)) break;
    at = s.time;
  }
  return at;
}

/** With split screen allowed: the other person of a back-and-forth, when both are visible now. */
function splitPartner(shots: Shot[], i: number, faces: FaceIndex): number | undefined {
  const self = shots[i]!;
  for (const other of [shots[i - 1], shots[i + 1]]) {
    if (!other || other.trackId === null || other.trackId === self.trackId) continue;
    if (faces.presence(other.trackId, self.start, self.end) >= 0.8 && faces.presence(self.trackId!, self.start, self.end) >= 0.8)
      return other.trackId;
  }
  return undefined;
}

// ---- faces over time ---------------------------------------------------------------------------------

interface IndexedTrack {
  id: number;
  track: FaceTrack;
  medianHeight: number;
}

class FaceIndex {
  readonly tracks: IndexedTrack[];
  readonly times: number[];

  constructor(readonly d: ShortDetections) {
    this.tracks = d.tracks
      .filter((t) => t.samples.length > 0)
      .map((t) => ({
        id: t.id,
        track: { id: t.id, samples: t.samples.slice().sort((a, b) => a.time - b.time) },
        medianHeight: median(t.samples.map((s) => s.box.height)),
      }));
    const step = 1 / (d.sampleFps > 0 ? d.sampleFps : 5);
    this.times = [];
    for (let t = d.start; t < d.end + 1e-9; t += step) this.times.push(t);
  }

  /** The track's box at `t`: interpolated between samples up to MAX_GAP_SEC apart, else the nearest
   *  sample within half a sampling step, else none. */
  boxAt(id: number, t: number): Box | undefined {
    const s = this.tracks.find((x) => x.id === id)?.track.samples;
    if (!s?.length) return undefined;
    const hi = s.findIndex((x) => x.time >= t);
    if (hi === 0 || (hi > 0 && s[hi]!.time === t)) return Math.abs(s[hi]!.time - t) <= this.halfStep() ? s[hi]!.box : undefined;
    if (hi < 0) return t - s[s.length - 1]!.time <= this.halfStep() ? s[s.length - 1]!.box : undefined;
    const a = s[hi - 1]!;
    const b = s[hi]!;
    if (b.time - a.time > MAX_GAP_SEC) {
      const near = t - a.time < b.time - t ? a : b;
      return Math.abs(near.time - t) <= this.halfStep() ? near.box : undefined;
    }
    const f = (t - a.time) / (b.time - a.time);
    return {
      x: lerp(a.box.x, b.box.x, f),
      y: lerp(a.box.y, b.box.y, f),
      width: lerp(a.box.width, b.box.width, f),
      height: lerp(a.box.height, b.box.height, f),
    };
  }

  samplesIn(id: number, start: number, end: number): TrackSample[] {
    return (this.tracks.find((x) => x.id === id)?.track.samples ?? []).filter((s) => s.time >= start && s.time < end);
  }

  sampleNear(id: number, t: number): TrackSample | undefined {
    const s = this.tracks.find((x) => x.id === id)?.track.samples ?? [];
    let best: TrackSample | undefined;
    for (const x of s) if (Math.abs(x.time - t) <= this.halfStep() && (!best || Math.abs(x.time - t) < Math.abs(best.time - t))) best = x;
    return best;
  }

  /** Every face visible at `t`, by track. */
  facesAt(t: number): Array<{ id: number; box: Box }> {
    const out: Array<{ id: number; box: Box }> = [];
    for (const tr of this.tracks) {
      const box = this.boxAt(tr.id, t);
      if (box) out.push({ id: tr.id, box });
    }
    return out;
  }

  get fps(): number {
    return this.d.sampleFps > 0 ? this.d.sampleFps : 5;
  }

  timesIn(start: number, end: number): number[] {
    const ts = this.times.filter((t) => t >= start - 1e-9 && t < end - 1e-9);
    return ts.length ? ts : [start];
  }

  /** Share of the sample times in [start, end) at which the track is visible. */
  presence(id: number, start: number, end: number): number {
    const ts = this.timesIn(start, end);
    return ts.filter((t) => this.boxAt(id, t)).length / ts.length;
  }

  /** With nobody speaking on screen: the face seen largest for longest. */
  mostProminent(ids: number[]): number {
    let best = ids[0]!;
    let bestScore = -1;
    for (const tr of this.tracks.filter((x) => ids.includes(x.id))) {
      const score = tr.track.samples.reduce((sum, s) => sum + s.box.width * s.box.height, 0);
      if (score > bestScore) [best, bestScore] = [tr.id, score];
    }
    return best;
  }

  private halfStep(): number {
    return 0.5 / (this.d.sampleFps > 0 ? this.d.sampleFps : 5) + 1e-6;
  }
}

// ---- the camera ----------------------------------------------------------------------------------------

class Camera {
  /** `bounds`: the picture the window stays within (the frame inside any black borders). */
  constructor(
    private readonly faces: FaceIndex,
    private readonly bounds: Box,
    private readonly padding: number,
  ) {}

  private get minX(): number {
    return this.bounds.x;
  }

  private get minY(): number {
    return this.bounds.y;
  }

  private maxX(size: { width: number }): number {
    return this.bounds.x + this.bounds.width - size.width;
  }

  private maxY(size: { height: number }): number {
    return this.bounds.y + this.bounds.height - size.height;
  }

  /** Keyframes that keep one track framed from `start` to `end` (the first at `start`). */
  follow(id: number, start: number, end: number, aspect: number): ReframeKeyframe[] {
    const times = this.faces.timesIn(start, end);
    const size = this.windowSize(id, times, aspect);
    const desired = this.desiredPath(id, times, size);
    const keys: ReframeKeyframe[] = [];
    let at = this.place(id, times, 0, size, this.holdTarget(id, times, 0, size, desired));
    keys.push({ time: r3(start), ...at });
    for (let i = 1; i < times.length; i++) {
      const t = times[i]!;
      const face = this.faces.boxAt(id, t);
      if (!face) continue; // no sight of the face: hold
      const { deadX, deadY } = deadZone(size, face);
      const want = this.clamp(desired[i]!, size);
      const drifted = Math.abs(want.x - at.x) > deadX || Math.abs(want.y - at.y) > deadY;
      const cutting = this.cutsAnyFace(at, t, id);
      if (!drifted && !cutting) continue;
      // A subject on the move (walking, leaning) is tracked continuously, not in pan-hold-pan pulses.
      const tracked = this.track(id, times, i, size, desired, at);
      if (tracked) {
        const last = keys[keys.length - 1]!;
        if (last.time < tracked.keys[0]!.time) keys.push({ ...at, time: tracked.keys[0]!.time });
        keys.push(...tracked.keys.slice(1));
        at = tracked.at;
        i = tracked.lastIndex;
        continue;
      }
      // The whole short is known: aim where the face will settle when the pan ends, not where it is now.
      let to = this.place(id, times, i, size, desired[i]!);
      let duration = this.panDuration(at, to, size, end - t);
      const j = Math.min(times.length - 1, i + Math.round(duration * this.faces.fps));
      if (j > i) {
        to = this.place(id, times, j, size, this.holdTarget(id, times, j, size, desired));
        duration = this.panDuration(at, to, size, end - t);
      }
      if (!cutting && Math.abs(to.x - at.x) <= deadX && Math.abs(to.y - at.y) <= deadY) continue;
      // A face that fills the window touches its edge with every wobble of the detector: moving the
      // window a pixel or two does not uncover it, it only shakes the picture.
      const nudge = Math.max(2, 0.02 * size.width);
      if (Math.abs(to.x - at.x) < nudge && Math.abs(to.y - at.y) < nudge) continue;
      const matched = this.panWithFace(times, i, size, desired, at, to, duration);
      if (matched) duration = matched[matched.length - 1]!.time - t;
      const pan =
        matched ??
        EASE_STEPS.map((f) => {
          const e = f * f * (3 - 2 * f);
          return { time: r3(t + f * duration), ...at, x: Math.round(lerp(at.x, to.x, e)), y: Math.round(lerp(at.y, to.y, e)) };
        });
      // A pan that would slice a face on its way (the listener it sweeps over, or the framed face it
      // cannot keep up with) is a cut instead.
      const clean =
        duration >= PAN_MIN_SEC - 1e-9 && this.faces.timesIn(t, t + duration).every((s) => !this.cutsAnyFace(interpolate(pan, s), s, id));
      const last = keys[keys.length - 1]!;
      if (last.time < r3(t)) keys.push({ ...at, time: r3(t) });
      if (clean) keys.push(...pan.slice(1));
      else keys.push({ ...to, time: r3(t) });
      at = to;
      while (i + 1 < times.length && times[i + 1]! < t + (clean ? duration : 0)) i++;
    }
    return keys;
  }

  /**
   * A pan from `at` (at sample `i`) to `to` that moves as the face does: the window covers the share of
   * the way that the face's desired window has covered since `i` (never going back), so it is still
   * while the face pauses (the turn of a sway, a stop mid-walk) and no pan runs on after the face has
   * stopped. Undefined when the face does not get there within PAN_MATCH_MAX_SEC, gets there in less
   * than PAN_MIN_SEC, or would take the window faster than TRACK_MAX_SPEED (an eased pan then).
   */
  private panWithFace(
    times: number[],
    i: number,
    size: { width: number; height: number },
    desired: Array<{ x: number; y: number }>,
    at: Box,
    to: Box,
    easedSec: number,
  ): ReframeKeyframe[] | undefined {
    const dx = to.x - at.x;
    const dy = to.y - at.y;
    const length = Math.hypot(dx, dy);
    if (length === 0) return undefined;
    // The face is already part of the way (the drift that set the pan off): the window covers its own
    // way in step with the face's rest of it.
    const from = this.clamp(desired[i]!, size);
    const need = ((to.x - from.x) * dx + (to.y - from.y) * dy) / length;
    if (need < 0.25 * length) return undefined;
    const along = (k: number) => {
      const c = this.clamp(desired[k]!, size);
      return ((c.x - from.x) * dx + (c.y - from.y) * dy) / length / need;
    };
    const path: Array<{ time: number; x: number; y: number }> = [{ time: times[i]!, x: at.x, y: at.y }];
    let share = 0;
    for (let k = i + 1; k < times.length && times[k]! - times[i]! <= Math.max(easedSec, PAN_MATCH_MAX_SEC); k++) {
      share = Math.min(1, Math.max(share, along(k)));
      const prev = path[path.length - 1]!;
      const x = Math.round(at.x + dx * share);
      const y = Math.round(at.y + dy * share);
      if (tooFast(prev, { time: times[k]!, x, y }, size)) return undefined;
      path.push({ time: times[k]!, x, y });
      // A face that gets there quicker than a pan may take is met by the eased pan (not a cut).
      if (share >= 1) return times[k]! - times[i]! >= PAN_MIN_SEC - 1e-9 ? keysAlong(path, at) : undefined;
    }
    return undefined;
  }

  /**
   * Where to hold the window from sample `from` on: the middle of the span the face's desired window
   * keeps to for as long as that span fits in the dead zone. A person who sways or shifts in their seat
   * then stays inside a window that does not move, instead of being chased by a pan each time they
   * reach one side of the dead zone.
   */
  private holdTarget(
    id: number,
    times: number[],
    from: number,
    size: { width: number; height: number },
    desired: Array<{ x: number; y: number }>,
  ): { x: number; y: number } {
    const face = this.faces.boxAt(id, times[from]!);
    if (!face) return desired[from]!;
    const { deadX, deadY } = deadZone(size, face);
    const first = this.clamp(desired[from]!, size);
    let [x0, x1, y0, y1] = [first.x, first.x, first.y, first.y];
    for (let k = from + 1; k < times.length; k++) {
      const c = this.clamp(desired[k]!, size);
      const [nx0, nx1, ny0, ny1] = [Math.min(x0, c.x), Math.max(x1, c.x), Math.min(y0, c.y), Math.max(y1, c.y)];
      if (nx1 - nx0 > 2 * deadX || ny1 - ny0 > 2 * deadY) break;
      [x0, x1, y0, y1] = [nx0, nx1, ny0, ny1];
    }
    return { x: (x0 + x1) / 2, y: (y0 + y1) / 2 };
  }

  /**
   * From sample `i`, where the window `at` has fallen behind the face: if the face keeps moving (its
   * smoothed path covers TRACK_MIN_SPEED window widths a second over the next half second), the window
   * follows that smoothed path, catching up from `at` over TRACK_CATCH_SEC, until the face slows
   * down. Where following would take the window faster than TRACK_MAX_SPEED (a whip pan, a subject
   * running through the frame), the window cuts to the face instead of chasing it. Undefined when the
   * face is not on the move (an ordinary eased pan re-frames it).
   */
  private track(
    id: number,
    times: number[],
    i: number,
    size: { width: number; height: number },
    desired: Array<{ x: number; y: number }>,
    at: Box,
  ): { keys: ReframeKeyframe[]; at: Box; lastIndex: number } | undefined {
    const fps = this.faces.fps;
    const half = Math.max(1, Math.round(TRACK_SMOOTH_SEC * fps));
    const smooth = (k: number) => {
      let x = 0;
      let y = 0;
      let n = 0;
      for (let j = Math.max(0, k - half); j <= Math.min(times.length - 1, k + half); j++) {
        const c = this.clamp(desired[j]!, size);
        x += c.x;
        y += c.y;
        n++;
      }
      return { x: x / n, y: y / n };
    };
    const ahead = Math.max(1, Math.round(0.5 * fps));
    const speed = (k: number) => {
      const a = smooth(k);
      const b = smooth(Math.min(times.length - 1, k + ahead));
      const dt = Math.max(1e-6, times[Math.min(times.length - 1, k + ahead)]! - times[k]!);
      return Math.hypot(b.x - a.x, b.y - a.y) / dt / size.width;
    };
    if (i + ahead >= times.length || speed(i) < TRACK_MIN_SPEED) return undefined;
    const t0 = times[i]!;
    const from = smooth(i);
    const offset = { x: at.x - from.x, y: at.y - from.y };
    const path: Array<{ time: number; x: number; y: number }> = [{ time: t0, x: at.x, y: at.y }];
    let k = i + 1;
    for (; k < times.length; k++) {
      const t = times[k]!;
      const keep = Math.max(0, 1 - (t - t0) / TRACK_CATCH_SEC);
      const p = smooth(k);
      const next = this.clamp({ x: Math.round(p.x + offset.x * keep), y: Math.round(p.y + offset.y * keep) }, size);
      const prev = path[path.length - 1]!;
      if (tooFast(prev, { time: t, ...next }, size)) {
        // Faster than any pan should go: one cut to where the face is, not a chase.
        const to = this.place(id, times, k, size, desired[k]!);
        const keys = keysAlong(path, at);
        keys.push({ ...at, time: r3(t), x: prev.x, y: prev.y }, { ...to, time: r3(t) });
        return { keys, at: to, lastIndex: k };
      }
      path.push({ time: t, ...next });
      if (keep === 0 && speed(k) < TRACK_MIN_SPEED / 2) break;
    }
    const keys = keysAlong(path, at);
    const last = keys[keys.length - 1]!;
    return { keys, at: { x: last.x, y: last.y, width: at.width, height: at.height }, lastIndex: Math.min(k, times.length - 1) };
  }

  /** One still keyframe whose panels frame each track (speaker first), stacked top to bottom. */
  split(ids: number[], start: number, end: number, panel: OutputSize): ReframeKeyframe[] {
    const times = this.faces.timesIn(start, end);
    const aspect = panel.width / panel.height;
    const panels = ids.map((id) => {
      const size = this.windowSize(id, times, aspect);
      const desired = this.desiredPath(id, times, size);
      return { ...this.place(id, times, 0, size, { x: median(desired.map((p) => p.x)), y: median(desired.map((p) => p.y)) }, true) };
    });
    return [{ time: r3(start), ...panels[0]!, panels }];
  }

  /** The window for a track: its padded face at the output's aspect, within the zoom limits, and
   *  never smaller than the largest box the face takes in the shot. */
  private windowSize(id: number, times: number[], aspect: number): { width: number; height: number } {
    const boxes = times.map((t) => this.faces.boxAt(id, t)).filter((b): b is Box => !!b);
    const largest = largestWindow(this.bounds.width, this.bounds.height, aspect);
    if (!boxes.length) return largest;
    const fw = median(boxes.map((b) => b.width));
    const fh = median(boxes.map((b) => b.height));
    const grow = 1 + 2 * this.padding;
    let h = Math.max(
      fh * grow,
      (fw * grow) / aspect,
      Math.max(...boxes.map((b) => b.height)) * (1 + 2 * FACE_MARGIN),
      (Math.max(...boxes.map((b) => b.width)) * (1 + 2 * FACE_MARGIN)) / aspect,
    );
    h = Math.min(largest.height, Math.max(h, MIN_ZOOM_FRACTION * largest.height));
    return evenWindow(h, aspect, this.bounds.width, this.bounds.height);
  }

  private panDuration(from: Box, to: Box, size: { width: number }, left: number): number {
    const distance = Math.hypot(to.x - from.x, to.y - from.y);
    return Math.min(PAN_MAX_SEC, Math.max(PAN_MIN_SEC, distance / (PAN_SPEED * size.width)), left);
  }

  private clamp(p: { x: number; y: number }, size: { width: number; height: number }): { x: number; y: number } {
    return { x: clampInt(p.x, this.minX, this.maxX(size)), y: clampInt(p.y, this.minY, this.maxY(size)) };
  }

  /** Where the window would sit to centre the face, smoothed over ±0.25 s against detector noise. */
  private desiredPath(id: number, times: number[], size: { width: number; height: number }): Array<{ x: number; y: number }> {
    const centres = times.map((t) => {
      const b = this.faces.boxAt(id, t);
      return b ? { t, x: b.x + b.width / 2 - size.width / 2, y: b.y + b.height / 2 - FACE_CENTRE_Y * size.height } : undefined;
    });
    let lastKnown = centres.find((c) => c);
    return centres.map((c, i) => {
      if (c) lastKnown = c;
      const near = centres.filter((o, j) => o && Math.abs(times[j]! - times[i]!) <= 0.25) as Array<{ x: number; y: number }>;
      if (!near.length)
        return { x: lastKnown?.x ?? (this.minX + this.maxX(size)) / 2, y: lastKnown?.y ?? (this.minY + this.maxY(size)) / 2 };
      return { x: median(near.map((o) => o.x)), y: median(near.map((o) => o.y)) };
    });
  }

  /**
   * The window of `size` nearest `desired` that holds the framed face wholly, and every other face
   * wholly in or wholly out, at the sample times from index `from` over the next MIN_HOLD_SEC (all of
   * them when `wholeSpan`). A face whose constraint cannot be met with the others is left out of it.
   */
  private place(
    id: number,
    times: number[],
    from: number,
    size: { width: number; height: number },
    desired: { x: number; y: number },
    wholeSpan = false,
  ): Box {
    const span = times.filter((t, j) => j >= from && (wholeSpan || t < times[from]! + MIN_HOLD_SEC));
    const own = span.map((t) => this.faces.boxAt(id, t)).filter((b): b is Box => !!b);
    const y = clampInt(Math.round(desired.y), this.minY, this.maxY(size));
    // Vertically: keep the face inside when the desired spot would cut it (a zoomed window).
    let top = y;
    for (const b of own) {
      if (b.y < top) top = Math.max(this.minY, Math.floor(b.y));
      if (b.y + b.height > top + size.height) top = Math.min(this.maxY(size), Math.ceil(b.y + b.height - size.height));
    }
    let allowed: Interval[] = [[this.minX, this.maxX(size)]];
    for (const b of own) {
      const m = FACE_MARGIN * b.width;
      const next = intersect(allowed, [[b.x + b.width + m - size.width, b.x - m]]);
      allowed = next.length ? next : intersect(allowed, [[b.x + b.width - size.width, b.x]]);
    }
    if (!allowed.length) allowed = [[this.minX, this.maxX(size)]];
    for (const t of span) {
      for (const f of this.faces.facesAt(t)) {
        if (f.id === id) continue;
        const b = f.box;
        const vOverlap = b.y < top + size.height && b.y + b.height > top;
        if (!vOverlap) continue;
        const vInside = b.y >= top && b.y + b.height <= top + size.height;
        const m = FACE_MARGIN * b.width;
        const out: Interval[] = [
          [-Infinity, b.x - m - size.width],
          [b.x + b.width + m, Infinity],
        ];
        const options = vInside ? [...out, [b.x + b.width + m - size.width, b.x - m] as Interval] : out;
        const next = intersect(allowed, options);
        if (next.length) allowed = next;
      }
    }
    return { x: nearestInt(allowed, desired.x), y: top, width: size.width, height: size.height };
  }

  /** Whether the window slices any face at `t` (the framed one: whether it is not wholly inside). */
  private cutsAnyFace(w: Box, t: number, framed?: number, ignore?: number): boolean {
    return this.faces.facesAt(t).some((f) => f.id !== ignore && (f.id === framed ? !contains(w, f.box) : slices(w, f.box)));
  }
}

// ---- geometry ------------------------------------------------------------------------------------------

/** How far the framed face's desired window may be from the window before the camera moves. */
function deadZone(size: { width: number; height: number }, face: Box): { deadX: number; deadY: number } {
  return { deadX: Math.max(0.06 * size.width, 0.25 * face.width), deadY: Math.max(0.06 * size.height, 0.25 * face.height) };
}

/** The keyframes of a window of `window`'s size moving along `path`, simplified. */
function keysAlong(path: Array<{ time: number; x: number; y: number }>, window: Box): ReframeKeyframe[] {
  return simplify(path).map((q) => ({ time: r3(q.time), ...window, x: q.x, y: q.y }));
}

/** Whether going from `a` to `b` takes the window faster than TRACK_MAX_SPEED widths a second. */
function tooFast(a: { time: number; x: number; y: number }, b: { time: number; x: number; y: number }, size: { width: number }): boolean {
  return Math.hypot(b.x - a.x, b.y - a.y) / (b.time - a.time) > TRACK_MAX_SPEED * size.width;
}

/** A tracked path without the points a straight line through their neighbours puts within a pixel. */
function simplify(path: Array<{ time: number; x: number; y: number }>): Array<{ time: number; x: number; y: number }> {
  const out = path.slice(0, 1);
  for (let k = 1; k < path.length - 1; k++) {
    const a = out[out.length - 1]!;
    const b = path[k + 1]!;
    const f = (path[k]!.time - a.time) / Math.max(1e-9, b.time - a.time);
    const off = Math.hypot(lerp(a.x, b.x, f) - path[k]!.x, lerp(a.y, b.y, f) - path[k]!.y);
    if (off > 1) out.push(path[k]!);
  }
  if (path.length > 1) out.push(path[path.length - 1]!);
  return out;
}

type Interval = [number, number];

function intersect(a: Interval[], b: Interval[]): Interval[] {
  const out: Interval[] = [];
  for (const [a0, a1] of a) {
    for (const [b0, b1] of b) {
      const lo = Math.max(a0, b0);
      const hi = Math.min(a1, b1);
      if (Math.ceil(lo) <= Math.floor(hi)) out.push([lo, hi]);
    }
  }
  return out.sort((p, q) => p[0] - q[0]);
}

function nearestInt(allowed: Interval[], v: number): number {
  let best = Math.round(v);
  let bestDist = Infinity;
  for (const [lo, hi] of allowed) {
    const c = clampInt(Math.round(v), Math.ceil(lo), Math.floor(hi));
    if (Math.abs(c - v) < bestDist) [best, bestDist] = [c, Math.abs(c - v)];
  }
  return best;
}

/** The largest window of `aspect` inside W x H, even-sized. */
export function largestWindow(W: number, H: number, aspect: number): { width: number; height: number } {
  return evenWindow(Math.min(H, W / aspect), aspect, W, H);
}

function evenWindow(height: number, aspect: number, W: number, H: number): { width: number; height: number } {
  let h = Math.max(2, Math.floor(Math.min(height, H) / 2) * 2);
  let w = Math.max(2, Math.round((h * aspect) / 2) * 2);
  if (w > W) {
    w = Math.floor(W / 2) * 2;
    h = Math.max(2, Math.min(Math.floor(H / 2) * 2, Math.round(w / aspect / 2) * 2));
  }
  return { width: w, height: h };
}

function centred(size: { width: number; height: number }, W: number, H: number): Box {
  return { x: Math.floor((W - size.width) / 2), y: Math.floor((H - size.height) / 2), ...size };
}

export function contains(w: Box, b: Box): boolean {
  const e = 0.5; // sub-pixel detector boxes against integer windows
  return b.x >= w.x - e && b.y >= w.y - e && b.x + b.width <= w.x + w.width + e && b.y + b.height <= w.y + w.height + e;
}

/** A face that the window's edge cuts: overlapping it without being wholly inside. */
export function slices(w: Box, b: Box): boolean {
  const overlaps = b.x < w.x + w.width && b.x + b.width > w.x && b.y < w.y + w.height && b.y + b.height > w.y;
  return overlaps && !contains(w, b);
}

const lerp = (a: number, b: number, f: number) => a + (b - a) * f;
const clampInt = (v: number, lo: number, hi: number) => Math.min(Math.max(v, lo), Math.max(lo, hi));
const r3 = (n: number) => Math.round(n * 1000) / 1000;

/** When the framing changes for a shot: a cut's first frame, a dissolve's middle. */
export function framingChangeAt(shot: SourceShot): number {
  return shot.transition === 'dissolve' && shot.transitionEnd !== undefined ? r3((shot.start + shot.transitionEnd) / 2) : shot.start;
}

function median(xs: number[]): number {
  if (!xs.length) return 0;
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

// ---- framing by hand (overrides.ts) -----------------------------------------------------------------

/** Keyframes that keep track `id` framed over [start, end), as the camera frames a speaker: for a face
 *  the user pinned, whoever detection judged to be speaking. */
export function followTrack(
  detections: ShortDetections,
  id: number,
  start: number,
  end: number,
  director: DirectorSettings,
  output: OutputSize,
): ReframeKeyframe[] {
  const d = within(detections, start, end);
  const bounds = { x: 0, y: 0, width: d.sourceWidth, height: d.sourceHeight };
  return new Camera(new FaceIndex(d), bounds, director.facePaddingFactor).follow(id, start, end, output.width / output.height);
}

/** One still keyframe whose two panels frame tracks `ids` (stacked top to bottom) over [start, end). */
export function splitTracks(
  detections: ShortDetections,
  ids: [number, number],
  start: number,
  end: number,
  director: DirectorSettings,
  output: OutputSize,
): ReframeKeyframe[] {
  const d = within(detections, start, end);
  const bounds = { x: 0, y: 0, width: d.sourceWidth, height: d.sourceHeight };
  return new Camera(new FaceIndex(d), bounds, director.facePaddingFactor).split(ids, start, end, {
    width: output.width,
    height: output.height / 2,
  });
}

/** A stack's two panels over [start, end): the facecam `id` on top, the whole picture below. */
export function stackTracks(detections: ShortDetections, id: number, start: number, end: number, output: OutputSize): [Box, Box] {
  const d = within(detections, start, end);
  return stackPanels(new FaceIndex(d), id, { x: 0, y: 0, width: d.sourceWidth, height: d.sourceHeight }, output);
}

/** The even window of `aspect` about a box's centre, as tall as it (shrunk to fit), inside W x H. */
export function windowAbout(box: Box, aspect: number, W: number, H: number): Box {
  const size = evenWindow(Math.min(box.height, H, W / aspect), aspect, W, H);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  return {
    x: clampInt(Math.round(cx - size.width / 2), 0, W - size.width),
    y: clampInt(Math.round(cy - size.height / 2), 0, H - size.height),
    ...size,
  };
}
