// The data of speaker-aware reframing, shared by the agent that computes it, the coordinator that
// stores and serves it, and the render that follows it. Times are seconds on the SOURCE's clock (the
// same clock as a short's startTime/endTime); boxes are in source pixels (the upright frame ffmpeg
// decodes).

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One face found in one sampled frame. Keypoints follow BlazeFace's order:
 *  right eye, left eye, nose tip, mouth centre, right ear tragion, left ear tragion (as [x, y]). */
export interface FaceDetection extends Box {
  score: number;
  keypoints: Array<[number, number]>;
}

/** A face followed across sampled frames. `mouthActivity` is motion energy around the mouth keypoint
 *  between this sample and the previous one of the same track, normalised by face size (0 = still). */
export interface TrackSample {
  time: number;
  box: Box;
  score: number;
  mouthActivity: number;
}

export interface FaceTrack {
  id: number;
  samples: TrackSample[];
}

/** Who speaks when: a turn names the track judged to be speaking, or null when speech is heard but no
 *  visible face is speaking (voice-over, a face too small, the speaker off screen). */
export interface SpeakerTurn {
  start: number;
  end: number;
  trackId: number | null;
  /** How sure detection is of this choice, 0-1: how far the chosen face's lips matched the voice
   *  better than the next likeliest face's (or than nobody's). Absent in detections stored before it
   *  was measured (read as sure). */
  confidence?: number;
  /** The likeliest other choice (a track; null: nobody visible), where detection measured it: with
   *  the chosen face, the pair a split shows when the choice is not sure. */
  runnerUp?: number | null;
}

/** How a shot of the source begins: the short's first moment, a hard cut (on the cut's first frame),
 *  or a dissolve or fade (a span: `start` to `transitionEnd`, the framing changing at its middle). */
export type ShotTransition = 'start' | 'cut' | 'dissolve';

/** A continuous stretch of the source between two edits, on the source clock. */
export interface SourceShot {
  start: number;
  end: number;
  transition: ShotTransition;
  /** Dissolves only: when the blend into this shot is complete. */
  transitionEnd?: number;
}

/** A shot as detection saw it: what of the picture is content, and where the picture changes. */
export interface DetectedShot extends SourceShot {
  /** The picture inside black borders baked into the source (the whole frame when there are none). */
  content: Box;
  /** How much each cell of a MOTION_GRID_COLS x MOTION_GRID_ROWS grid over the frame changes between
   *  samples, averaged over the shot (mean absolute difference, 0-1), rows top to bottom. */
  motion: number[];
}

export const MOTION_GRID_COLS = 16;
export const MOTION_GRID_ROWS = 9;

/** Everything reframing knows about one short, kept so that a render with other director settings can
 *  recompute the camera path without a new detection pass. */
export interface ShortDetections {
  version: 1;
  sourceWidth: number;
  sourceHeight: number;
  start: number;
  end: number;
  sampleFps: number;
  /** Seconds where voice activity detection heard speech. */
  speech: Array<{ start: number; end: number }>;
  tracks: FaceTrack[];
  turns: SpeakerTurn[];
  /** The source's shots over [start, end), in order, no track spanning two; absent in detections
   *  stored before shots were detected (then the short is one shot). */
  shots?: DetectedShot[];
}

/** single: one moving window; split: two people stacked; fit: the whole picture over a blurred copy of
 *  itself; stack: a facecam on top and the screen it sits on below. */
export type ReframeLayout = 'single' | 'split' | 'fit' | 'stack';

/** The crop window at a moment; between two keyframes the window is their linear interpolation.
 *  In a split or stack segment, `panels` are the windows stacked top to bottom (the speaker's or the
 *  facecam's first), each filling the output's width. */
export interface ReframeKeyframe extends Box {
  time: number;
  panels?: Box[];
}

export interface ReframeSegment {
  start: number;
  end: number;
  layout: ReframeLayout;
  /** Track ids shown in this segment (the speaker first); empty for a fallback. */
  tracks: number[];
}

/** The crop path of one short, as the API serves it under `reframe`. */
export interface Reframe {
  sourceWidth: number;
  sourceHeight: number;
  keyframes: ReframeKeyframe[];
  segments: ReframeSegment[];
  /** The source's shots within the short; absent on paths planned before shots were detected. */
  shots?: SourceShot[];
  /** How well detection and the path served the short's speech (quality.ts); absent on paths planned
   *  before it was measured. */
  quality?: ReframeQuality;
  /** The framing the user set by hand (overrides.ts), already applied to the keyframes and segments;
   *  absent when none. */
  overrides?: FramingOverride[];
}

/** A span of a short framed by hand, on the source clock; of two overlapping, the later in the list
 *  wins. window: the window held still there (its centre and height; its shape is the output's);
 *  layout: the layout forced there, framed as the camera would; face: the window follows that track. */
export type FramingOverride =
  | { start: number; end: number; kind: 'window'; window: Box }
  | { start: number; end: number; kind: 'layout'; layout: ReframeLayout }
  | { start: number; end: number; kind: 'face'; trackId: number };

/** How far a short's crop path can be trusted, measured over its speech (quality.ts). A short with no
 *  speech has nothing to miss: both shares 1, no span. */
export interface ReframeQuality {
  /** Share (0-1) of the short's speech time whose speaker detection identified as an on-screen face. */
  speakerOnScreenShare: number;
  /** Share (0-1) of the short's speech time with at least one detected face wholly inside the window shown (any panel). */
  faceInWindowShare: number;
  /** The speech span where detection was least sure who speaks, null when the short has no speech (or
   *  detection named no turn in it). */
  lowestConfidenceSpan: { start: number; end: number; confidence: number } | null;
}

/** Director settings that shape the path (contract 2.9 `director`). */
export interface DirectorSettings {
  facePaddingFactor: number;
  maxSpeakersToFocus: number;
}
