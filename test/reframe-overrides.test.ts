import test from 'ava';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { applyOverrides, centreCropPath, checkOverrides, planWithOverrides, type OverrideContext } from '@shorts/common/reframe/overrides';
import { shownAt } from '@shorts/common/reframe/window';
import { InvalidInput } from '@shorts/common/invalid-input';
import type { FramingOverride, Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { LEFT, RIGHT, holds, twoFacesLeftSpeaks } from './helpers/two-faces.js';

// Overrides spliced into a planned path (common/src/reframe/overrides.ts): what each kind shows in
// its span, the camera's path kept outside it, and a path the render can follow (times in order,
// segments in order and unbroken).

const OUTPUT = { width: 720, height: 1280 };
const ctx = (d: ShortDetections | null = twoFacesLeftSpeaks(), output = OUTPUT): OverrideContext => ({
  start: 0,
  end: 10,
  sourceWidth: 1280,
  sourceHeight: 720,
  detections: d,
  director: DEFAULT_DIRECTOR,
  output,
});

/** What the render needs of a path: keyframe times never go back, segments in order without gaps. */
function wellFormed(t: { true(v: boolean, m?: string): void }, r: Reframe) {
  r.keyframes.forEach((k, i) => i > 0 && t.true(k.time >= r.keyframes[i - 1]!.time, `keyframe ${i} in order`));
  r.segments.forEach((s, i) => {
    t.true(s.end > s.start, `segment ${i} not empty`);
    if (i > 0) t.true(Math.abs(s.start - r.segments[i - 1]!.end) < 1e-6, `segment ${i} follows the one before`);
  });
}

test('each kind in its span, the planned path outside, a well-formed path', (t) => {
  const planned = planReframe(twoFacesLeftSpeaks(), DEFAULT_DIRECTOR, OUTPUT);
  const overrides: FramingOverride[] = [
    { start: 1, end: 2, kind: 'face', trackId: 2 },
    { start: 3, end: 4, kind: 'layout', layout: 'split' },
    { start: 5, end: 6, kind: 'layout', layout: 'stack' },
    { start: 7, end: 8, kind: 'layout', layout: 'fit' },
    { start: 8.5, end: 9.5, kind: 'window', window: { x: 500, y: 0, width: 406, height: 720 } },
  ];
  const r = applyOverrides(planned, overrides, ctx());
  wellFormed(t, r);
  t.deepEqual(r.overrides, overrides);
  t.true(holds(shownAt(r, 1.5).boxes[0]!, RIGHT), 'the pinned face');
  const split = shownAt(r, 3.5);
  t.is(split.layout, 'split');
  t.true(holds(split.boxes[0]!, LEFT) && holds(split.boxes[1]!, RIGHT), 'the speaker on top, the other face below');
  const stack = shownAt(r, 5.5);
  t.is(stack.layout, 'stack');
  t.true(holds(stack.boxes[0]!, LEFT), 'the face on top of a stack');
  t.deepEqual(shownAt(r, 7.5), { layout: 'fit', boxes: [{ x: 0, y: 0, width: 1280, height: 720 }] });
  t.deepEqual(shownAt(r, 9), { layout: 'single', boxes: [{ x: 500, y: 0, width: 406, height: 720 }] });
  for (const time of [0.5, 2.5, 4.5, 6.5, 8.2, 9.8]) t.deepEqual(shownAt(r, time), shownAt(planned, time), `the camera's at ${time}`);
  // The quality figure measures the path as it is now: the face in window share still counted.
  t.truthy(r.quality);
});

test('of two overlapping, the later wins; a window keeps its centre and height at another shape', (t) => {
  const planned = planReframe(twoFacesLeftSpeaks(), DEFAULT_DIRECTOR, OUTPUT);
  const r = applyOverrides(
    planned,
    [
      { start: 2, end: 8, kind: 'layout', layout: 'fit' },
      { start: 4, end: 6, kind: 'face', trackId: 2 },
    ],
    ctx(),
  );
  wellFormed(t, r);
  t.is(shownAt(r, 3).layout, 'fit');
  t.true(holds(shownAt(r, 5).boxes[0]!, RIGHT));
  t.is(shownAt(r, 7).layout, 'fit');

  const square = planWithOverrides(twoFacesLeftSpeaks(), DEFAULT_DIRECTOR, { width: 1080, height: 1080 }, [
    { start: 0, end: 10, kind: 'window', window: { x: 0, y: 100, width: 300, height: 400 } },
  ]);
  t.deepEqual(shownAt(square, 5).boxes[0], { x: 0, y: 100, width: 400, height: 400 }, 'square, about the same centre, kept inside');
  t.is(square.segments.length, 1);
});

test('without detections: split takes the two halves; faces cannot be pinned or stacked; empty list is the path back', (t) => {
  const base = centreCropPath(ctx(null));
  const split = applyOverrides(base, [{ start: 0, end: 10, kind: 'layout', layout: 'split' }], ctx(null));
  const [top, bottom] = shownAt(split, 5).boxes;
  t.true(top!.x + top!.width <= 640 + 1 && bottom!.x >= 640 - 1, JSON.stringify(split.keyframes));
  for (const o of [
    { start: 1, end: 2, kind: 'face', trackId: 1 },
    { start: 1, end: 2, kind: 'layout', layout: 'stack' },
  ] as FramingOverride[]) {
    t.throws(() => checkOverrides([o], ctx(null)), { instanceOf: InvalidInput });
  }
  const { overrides: _applied, ...path } = split;
  t.deepEqual(applyOverrides(split, [], ctx(null)), path, 'no overrides: the path as it was, unmarked');
});
