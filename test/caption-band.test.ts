import test from 'ava';
import { captionBandFor, chooseCaptionBand, withCaptionBand } from '@shorts/common/reframe/caption-band';
import type { Box, Reframe, ShortDetections } from '@shorts/common/reframe/types';

// The band captions take when no one chose one: away from the face the path frames, judged on the
// 9:16 output (common/src/reframe/caption-band.ts). The render and the preview both go through it.

const OUTPUT = { width: 720, height: 1280 };
const times = Array.from({ length: 30 }, (_, i) => i / 10);
const detections = (faces: Record<number, Box>): ShortDetections => ({
  version: 1,
  sourceWidth: 1280,
  sourceHeight: 720,
  start: 0,
  end: 3,
  sampleFps: 10,
  speech: [],
  turns: [],
  tracks: Object.entries(faces).map(([id, box]) => ({
    id: Number(id),
    samples: times.map((time) => ({ time, box, score: 0.9, mouthActivity: 0 })),
  })),
});
const single = (x: number): Reframe => ({
  sourceWidth: 1280,
  sourceHeight: 720,
  keyframes: [{ time: 0, x, y: 0, width: 405, height: 720 }],
  segments: [{ start: 0, end: 3, layout: 'single', tracks: [1] }],
});

test('a framed face in the lower third sends captions to the top; one higher up keeps the lower third', (t) => {
  t.is(captionBandFor(single(400), detections({ 1: { x: 540, y: 500, width: 140, height: 170 } }), OUTPUT), 'top');
  t.is(captionBandFor(single(400), detections({ 1: { x: 540, y: 200, width: 140, height: 170 } }), OUTPUT), 'bottom');
  // Low, but outside the window the path shows: not the framed face.
  t.is(captionBandFor(single(0), detections({ 1: { x: 900, y: 500, width: 140, height: 170 } }), OUTPUT), 'bottom');
  t.is(captionBandFor(null, detections({ 1: { x: 540, y: 500, width: 140, height: 170 } }), OUTPUT), 'bottom');
});

test('two people stacked in a split frame, one in each half: the middle band, between them', (t) => {
  const top = { x: 100, y: 0, width: 405, height: 360 };
  const bottom = { x: 800, y: 0, width: 405, height: 360 };
  const split: Reframe = {
    sourceWidth: 1280,
    sourceHeight: 720,
    keyframes: [{ time: 0, ...top, panels: [top, bottom] }],
    segments: [{ start: 0, end: 3, layout: 'split', tracks: [1, 2] }],
  };
  // Faces in the middle of each panel: at about a quarter and three quarters of the frame's height.
  t.is(
    captionBandFor(
      split,
      detections({ 1: { x: 250, y: 120, width: 110, height: 130 }, 2: { x: 950, y: 120, width: 110, height: 130 } }),
      OUTPUT,
    ),
    'center',
  );
});

test('the band is added only where no style item places the captions and it is not where the style puts them', (t) => {
  t.deepEqual(withCaptionBand(undefined, 'DEFAULT', 'top'), [{ property: 'position', value: 'top' }]);
  const placed = [{ property: 'bottom', value: '400px' }];
  t.is(withCaptionBand(placed, 'DEFAULT', 'top'), placed);
  t.is(
    withCaptionBand(undefined, 'HORMOZI', 'center'),
    undefined,
    'a preset that centres its captions keeps them there when the middle is clear',
  );
  t.deepEqual(
    withCaptionBand(undefined, 'HORMOZI', 'bottom'),
    [{ property: 'position', value: 'bottom' }],
    'and moves them when it is not',
  );
  const items = [{ property: 'color', value: '#fff' }];
  t.is(withCaptionBand(items, 'DEFAULT', 'bottom'), items, 'the lower third changes nothing');
});

test("every automatic place is checked against the framed face: the preset's own band when clear, else the first clear one", (t) => {
  // A face in the middle of the 9:16 frame (source y 250-470 of 720: 35-65 % of the height).
  const middle = detections({ 1: { x: 540, y: 250, width: 180, height: 220 } });
  t.like(chooseCaptionBand(single(400), middle, OUTPUT, { preset: 'HORMOZI' }), { band: 'bottom', covered: 0, moved: true });
  t.like(chooseCaptionBand(single(400), middle, OUTPUT, { preset: 'DEFAULT' }), { band: 'bottom', covered: 0, moved: false });
  // VIRAL sits higher (560 px above the bottom of 1920): the face at 50-74 % reaches it; DEFAULT's lower third is clear.
  const lowish = detections({ 1: { x: 540, y: 360, width: 150, height: 170 } });
  t.like(chooseCaptionBand(single(400), lowish, OUTPUT, { preset: 'VIRAL' }), { band: 'top', covered: 0, moved: true });
  // A face filling the frame's height: no band is clear; the one crossing it least is kept, and says so.
  const tall = detections({ 1: { x: 500, y: 0, width: 300, height: 720 } });
  const stuck = chooseCaptionBand(single(400), tall, OUTPUT, { preset: 'DEFAULT' });
  t.is(stuck.covered, stuck.moments, 'crossed at every moment');
  t.is(stuck.band, 'bottom', "the style's own band when all are crossed alike");
  // No detections: the style's own place, nothing moved.
  t.like(chooseCaptionBand(single(400), null, OUTPUT, { preset: 'HORMOZI' }), { band: 'center', covered: 0, moved: false });
});
