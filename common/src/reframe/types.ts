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
}

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
}

export type ReframeLayout = 'single' | 'split' | 'fit';

/** The crop window at a moment; between two keyframes the window is their linear interpolation.
 *  In a split segment, `panels` are the windows stacked top to bottom (the speaker's first). */
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
}

/** Director settings that shape the path (contract 2.9 `director`). */
export interface DirectorSettings {
  facePaddingFactor: number;
  maxSpeakersToFocus: number;
}
