import test from 'ava';
import { reframeQuality } from '@shorts/common/reframe/quality';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { reframeSchema } from '@shorts/common/reframe/schema';
import type { Box, Reframe, ReframeKeyframe, ReframeSegment, ShortDetections, SpeakerTurn } from '@shorts/common/reframe/types';

// reframe.quality (issue 33): over a short's speech, the share pinned on a face on screen, the share
// with a face in the window shown, and the least sure turn; on hand-built detections and paths.

const FPS = 10;
const LEFT: Box = { x: 100, y: 200, width: 120, height: 150 };
const RIGHT: Box = { x: 1000, y: 200, width: 120, height: 150 };
/** A 9:16 window around each face of a 1280x720 source. */
const LEFT_WINDOW: Box = { x: 0, y: 0, width: 404, height: 720 };
const RIGHT_WINDOW: Box = { x: 876, y: 0, width: 404, height: 720 };

function detections(o: {
  speech: Array<{ start: number; end: number }>;
  turns?: SpeakerTurn[];
  faces?: Array<{ id: number; box: Box; from?: number; to?: number }>;
  start?: number;
  end?: number;
}): ShortDetections {
  const start = o.start ?? 0;
  const end = o.end ?? 4;
  const times = Array.from({ length: Math.round((end - start) * FPS) }, (_, i) => Math.round((start + i / FPS) * 1000) / 1000);
  return {
    version: 1,
    sourceWidth: 1280,
    sourceHeight: 720,
    start,
    end,
    sampleFps: FPS,
    speech: o.speech,
    tracks: (o.faces ?? [{ id: 1, box: LEFT }]).map((f) => ({
      id: f.id,
      samples: times
        .filter((time) => time >= (f.from ?? start) && time < (f.to ?? end))
        .map((time) => ({ time, box: f.box, score: 0.9, mouthActivity: 0 })),
    })),
    turns: o.turns ?? [],
  };
}

/** A path that holds `windows[i]` from `at[i]` on (a cut at each), one single segment per window. */
function path(windows: Box[], at: number[], end = 4, layout: ReframeSegment['layout'] = 'single'): Reframe {
  const keyframes: ReframeKeyframe[] = [];
  windows.forEach((w, i) => {
    if (i > 0) keyframes.push({ ...windows[i - 1]!, time: at[i]! });
    keyframes.push({ ...w, time: at[i]! });
  });
  const segments = windows.map((_, i) => ({ start: at[i]!, end: at[i + 1] ?? end, layout, tracks: [] }));
  return { sourceWidth: 1280, sourceHeight: 720, keyframes, segments };
}

const still = path([LEFT_WINDOW], [0]);

test('speakerOnScreenShare: the speech time of turns naming a face over all speech time', (t) => {
  const d = detections({
    speech: [{ start: 0, end: 4 }],
    turns: [
      { start: 0, end: 3, trackId: 1 },
      { start: 3, end: 4, trackId: null },
    ],
  });
  t.is(reframeQuality(d, still).speakerOnScreenShare, 0.75);
  // Turns outside speech do not count: 1 s identified inside 2 s of speech.
  const sparse = detections({
    speech: [
      { start: 0, end: 1 },
      { start: 3, end: 4 },
    ],
    turns: [
      { start: 0, end: 2.5, trackId: 1 },
      { start: 2.5, end: 4, trackId: null },
    ],
  });
  t.is(reframeQuality(sparse, still).speakerOnScreenShare, 0.5);
  // Speech with no turn at all is speech nobody on screen was found saying.
  t.is(reframeQuality(detections({ speech: [{ start: 0, end: 4 }] }), still).speakerOnScreenShare, 0);
});

test('speech time is the union of the spans heard within the short: overlaps once, outside the short not at all', (t) => {
  // Heard 0-2 and 1-3 (3 s together) plus 3.5-6 of which 3.5-4 is in the 0-4 short: 3.5 s of speech,
  // of which the turn names a face for 0-1.75 s: half.
  const d = detections({
    speech: [
      { start: 0, end: 2 },
      { start: 1, end: 3 },
      { start: 3.5, end: 6 },
    ],
    turns: [{ start: 0, end: 1.75, trackId: 1 }],
  });
  t.is(reframeQuality(d, still).speakerOnScreenShare, 0.5);
});

test('faceInWindowShare: a window that leaves the only face for half the speech gives 0.5', (t) => {
  const d = detections({ speech: [{ start: 0, end: 4 }], turns: [{ start: 0, end: 4, trackId: 1 }] });
  const away = path([LEFT_WINDOW, RIGHT_WINDOW], [0, 2]);
  t.is(reframeQuality(d, away).faceInWindowShare, 0.5);
  t.is(reframeQuality(d, still).faceInWindowShare, 1);
  // Either of two faces counts: with someone on the right too, the window always shows a face.
  const two = detections({
    speech: [{ start: 0, end: 4 }],
    faces: [
      { id: 1, box: LEFT },
      { id: 2, box: RIGHT },
    ],
  });
  t.is(reframeQuality(two, away).faceInWindowShare, 1);
});

test('faceInWindowShare: a face wholly inside within 1 px counts; one the edge cuts does not', (t) => {
  const d = (box: Box) => detections({ speech: [{ start: 0, end: 4 }], faces: [{ id: 1, box }] });
  const edge = LEFT_WINDOW.x + LEFT_WINDOW.width; // 404
  t.is(reframeQuality(d({ ...LEFT, x: edge - LEFT.width + 0.8 }), still).faceInWindowShare, 1, '0.8 px over');
  t.is(reframeQuality(d({ ...LEFT, x: edge - LEFT.width + 3 }), still).faceInWindowShare, 0, '3 px over: sliced');
});

test('faceInWindowShare: no face detected is no face in the window; a face counts only near its samples', (t) => {
  t.is(reframeQuality(detections({ speech: [{ start: 0, end: 4 }], faces: [] }), still).faceInWindowShare, 0);
  // The face is seen 0-1 s only (last sample 0.9 s, reaching one sample interval on): 0-1 s of 4 s of speech.
  const gone = detections({ speech: [{ start: 0, end: 4 }], faces: [{ id: 1, box: LEFT, to: 1 }] });
  t.is(reframeQuality(gone, still).faceInWindowShare, 0.25);
});

test('faceInWindowShare: a split counts a face in either panel; a fit shows every face', (t) => {
  const d = detections({ speech: [{ start: 0, end: 4 }], faces: [{ id: 2, box: RIGHT }] });
  const top = { x: 0, y: 0, width: 640, height: 568 };
  const bottom = { x: 640, y: 0, width: 640, height: 568 };
  const split: Reframe = {
    sourceWidth: 1280,
    sourceHeight: 720,
    keyframes: [{ ...top, time: 0, panels: [top, bottom] }],
    segments: [{ start: 0, end: 4, layout: 'split', tracks: [1, 2] }],
  };
  t.is(reframeQuality(d, split).faceInWindowShare, 1, 'in the bottom panel');
  t.is(
    reframeQuality(d, { ...split, segments: [{ start: 0, end: 4, layout: 'single', tracks: [1] }] }).faceInWindowShare,
    0,
    'same window alone',
  );
  const fit = path([{ x: 0, y: 0, width: 1280, height: 720 }], [0], 4, 'fit');
  t.is(reframeQuality(d, { ...fit, keyframes: [{ ...LEFT_WINDOW, time: 0 }] }).faceInWindowShare, 1, 'fit: the whole content');
});

test('lowestConfidenceSpan: the least sure turn in the speech, the earliest of equals, a no-face turn included', (t) => {
  const d = detections({
    speech: [{ start: 0.2, end: 3.9 }],
    turns: [
      { start: 0.2, end: 1.2, trackId: 1, confidence: 0.9 },
      { start: 1.2, end: 2.0004, trackId: 2, confidence: 0.41234 },
      { start: 2.0004, end: 3, trackId: 1, confidence: 0.41234 },
      { start: 3, end: 3.9, trackId: null, confidence: 0.6 },
    ],
  });
  t.deepEqual(reframeQuality(d, still).lowestConfidenceSpan, { start: 1.2, end: 2, confidence: 0.412 });
  const voiceOver = detections({
    speech: [{ start: 0, end: 4 }],
    turns: [
      { start: 0, end: 2, trackId: 1, confidence: 0.8 },
      { start: 2, end: 4, trackId: null, confidence: 0.3 },
    ],
  });
  t.deepEqual(reframeQuality(voiceOver, still).lowestConfidenceSpan, { start: 2, end: 4, confidence: 0.3 });
});

test('turns without a confidence (stored before it was measured) read as sure', (t) => {
  const d = detections({
    speech: [{ start: 0, end: 4 }],
    turns: [
      { start: 0, end: 1, trackId: 1 },
      { start: 1, end: 3, trackId: 2, confidence: 0.95 },
      { start: 3, end: 4, trackId: 1 },
    ],
  });
  t.deepEqual(reframeQuality(d, still).lowestConfidenceSpan, { start: 1, end: 3, confidence: 0.95 });
  const old = detections({
    speech: [{ start: 0, end: 4 }],
    turns: [
      { start: 0.5, end: 2, trackId: 1 },
      { start: 2, end: 4, trackId: 2 },
    ],
  });
  t.deepEqual(reframeQuality(old, still).lowestConfidenceSpan, { start: 0.5, end: 2, confidence: 1 });
});

test('a short with no speech has nothing to miss: both shares 1, no span', (t) => {
  const d = detections({ speech: [], faces: [], turns: [{ start: 0, end: 4, trackId: null, confidence: 0.1 }] });
  t.deepEqual(reframeQuality(d, path([RIGHT_WINDOW], [0])), { speakerOnScreenShare: 1, faceInWindowShare: 1, lowestConfidenceSpan: null });
  // Speech only outside the short's range is none.
  const outside = detections({ start: 10, end: 14, speech: [{ start: 4, end: 9.5 }], faces: [] });
  t.is(reframeQuality(outside, path([RIGHT_WINDOW], [10], 14)).lowestConfidenceSpan, null);
});

test('planReframe carries the quality of the path it plans, and the stored shape parses', (t) => {
  const d = detections({
    speech: [{ start: 0.5, end: 3.5 }],
    faces: [{ id: 1, box: LEFT }],
    turns: [
      { start: 0.5, end: 2.5, trackId: 1, confidence: 0.7 },
      { start: 2.5, end: 3.5, trackId: null, confidence: 0.2 },
    ],
  });
  const r = planReframe(d, DEFAULT_DIRECTOR, { width: 1080, height: 1920 });
  t.deepEqual(r.quality, {
    speakerOnScreenShare: 0.667,
    faceInWindowShare: 1,
    lowestConfidenceSpan: { start: 2.5, end: 3.5, confidence: 0.2 },
  });
  t.deepEqual(reframeSchema.parse(r).quality, r.quality);
  t.throws(() => reframeSchema.parse({ ...r, quality: { ...r.quality, faceInWindowShare: 1.5 } }));
});
