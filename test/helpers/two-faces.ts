// A made-up detection both the override planner's tests and the framing API's tests plan on: two
// people side by side in a 1280x720 source, the left one speaking throughout, so a plain plan follows
// LEFT and any override that shows RIGHT is visible.
import type { Box, ShortDetections } from '@shorts/common/reframe/types';

export const LEFT = { x: 250, y: 250, width: 120, height: 150 };
export const RIGHT = { x: 910, y: 250, width: 120, height: 150 };

/** Two people in a 1280x720 source over [0, 10) sampled at 10 fps: the left one speaks throughout. */
export function twoFacesLeftSpeaks(): ShortDetections {
  const times = Array.from({ length: 100 }, (_, i) => i / 10);
  return {
    version: 1,
    sourceWidth: 1280,
    sourceHeight: 720,
    start: 0,
    end: 10,
    sampleFps: 10,
    speech: [{ start: 0.1, end: 9.9 }],
    tracks: [
      { id: 1, samples: times.map((time) => ({ time, box: LEFT, score: 0.95, mouthActivity: 0.3 })) },
      { id: 2, samples: times.map((time) => ({ time, box: RIGHT, score: 0.95, mouthActivity: 0 })) },
    ],
    turns: [{ start: 0.1, end: 9.9, trackId: 1 }],
  };
}

/** Whether the face box lies wholly inside the window. */
export const holds = (w: Box, face: Box) =>
  face.x >= w.x && face.x + face.width <= w.x + w.width && face.y >= w.y && face.y + face.height <= w.y + w.height;
