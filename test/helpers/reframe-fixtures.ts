// Hand-made reframe data for the render tests: a crop path that splits then fits, and the detections
// of one speaker seen throughout a short. (helpers/reframe.ts detects them from real video.)
import type { Box, FaceTrack, Reframe, ShortDetections } from '@shorts/common/reframe/types';

/** Two speakers stacked, `panels` top first (the top one also the path's window), from `start` to
 *  `at`; then the whole source frame fitted until `end`. The picture comes from pieces trimmed and
 *  concatenated, so a render's frames are on concat's clock. `tracks`: the panels' speakers. */
export function splitThenFit(o: {
  sourceWidth: number;
  sourceHeight: number;
  start: number;
  at: number;
  end: number;
  panels: [Box, Box];
  tracks: [number, number];
}): Reframe {
  const [top, bottom] = o.panels;
  return {
    sourceWidth: o.sourceWidth,
    sourceHeight: o.sourceHeight,
    keyframes: [
      { time: o.start, ...top, panels: [{ ...top }, { ...bottom }] },
      { time: o.at, x: 0, y: 0, width: o.sourceWidth, height: o.sourceHeight },
    ],
    segments: [
      { start: o.start, end: o.at, layout: 'split', tracks: [...o.tracks] },
      { start: o.at, end: o.end, layout: 'fit', tracks: [] },
    ],
  };
}

/** One speaker, at `face`, talking from 0.1 s to 0.1 s before the end of a short of `seconds` on a
 *  `sourceWidth` x `sourceHeight` source, seen at 10 samples a second: the camera frames that face. */
export function oneSpeakerDetections(o: { sourceWidth: number; sourceHeight: number; seconds: number; face: Box }): ShortDetections {
  const times = Array.from({ length: o.seconds * 10 }, (_, i) => i / 10);
  return {
    version: 1,
    sourceWidth: o.sourceWidth,
    sourceHeight: o.sourceHeight,
    start: 0,
    end: o.seconds,
    sampleFps: 10,
    speech: [{ start: 0.1, end: o.seconds - 0.1 }],
    tracks: [{ id: 1, samples: times.map((time) => ({ time, box: o.face, score: 0.95, mouthActivity: 0.3 })) }],
    turns: [{ start: 0.1, end: o.seconds - 0.1, trackId: 1 }],
  };
}

/** A face track sampled `fps` times a second for `seconds`, its box beside the others' (x = id x 500),
 *  its mouth activity at each time from `activity`: speaker attribution's input made by hand. */
export function syntheticTrack(id: number, fps: number, seconds: number, activity: (t: number) => number): FaceTrack {
  return {
    id,
    samples: Array.from({ length: seconds * fps }, (_, i) => ({
      time: i / fps,
      box: { x: id * 500, y: 100, width: 100, height: 100 },
      score: 0.9,
      mouthActivity: activity(i / fps),
    })),
  };
}
