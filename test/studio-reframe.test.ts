import test from 'ava';
import { drawCrop, qualityLine, stackedPanels, type Crop } from '../coordinator/studio/src/reframe.js';

// The studio's 9:16 preview draws each layout as the render does (node-agent/src/media/reframe-graph.ts):
// checked here on a stand-in canvas that records what is drawn where.

function recordDraws(crop: Crop, layout: Parameters<typeof drawCrop>[3], width: number, height: number) {
  const draws: Array<{ source: number[]; target: number[]; filter?: string }> = [];
  const canvas = {
    fillStyle: '' as unknown,
    filter: 'none',
    fillRect() {},
    drawImage(_image: 'video', sx: number, sy: number, sw: number, sh: number, dx: number, dy: number, dw: number, dh: number) {
      draws.push({ source: [sx, sy, sw, sh], target: [dx, dy, dw, dh], ...(canvas.filter !== 'none' ? { filter: canvas.filter } : {}) });
    },
  };
  drawCrop(canvas, 'video', crop, layout, width, height);
  return draws;
}

const facecam = { x: 1440, y: 0, width: 480, height: 360 };
const screen = { x: 0, y: 0, width: 1000, height: 1080 };

test('stack: the facecam on top as tall as its window at the frame width, the screen below taking the rest', (t) => {
  const draws = recordDraws({ ...facecam, panels: [facecam, screen] }, 'stack', 270, 480);
  // 270 * 360 / 480 = 202.5, on whole pixels.
  t.deepEqual(draws, [
    { source: [1440, 0, 480, 360], target: [0, 0, 270, 203] },
    { source: [0, 0, 1000, 1080], target: [0, 203, 270, 277] },
  ]);
});

test('stack: a facecam window taller than the frame still leaves the screen a strip', (t) => {
  const tall = { x: 0, y: 0, width: 100, height: 1000 };
  const placed = stackedPanels('stack', { ...tall, panels: [tall, screen] }, 270, 480)!;
  t.deepEqual(
    placed.map((p) => [p.top, p.height]),
    [
      [0, 478],
      [478, 2],
    ],
  );
});

test("split: two equal halves whatever the windows' shapes", (t) => {
  const draws = recordDraws({ ...facecam, panels: [facecam, screen] }, 'split', 270, 480);
  t.deepEqual(
    draws.map((d) => d.target),
    [
      [0, 0, 270, 240],
      [0, 240, 270, 240],
    ],
  );
});

test('fit: the window whole and centred over a blurred fill of itself; single: the window fills the frame; no panels: one window', (t) => {
  const wide = { x: 0, y: 0, width: 1920, height: 1080 };
  const fit = recordDraws(wide, 'fit', 270, 480);
  // First the fill: the picture scaled to cover the whole frame (480 tall, 853.3 wide), blurred, as
  // the render draws it; no black bars left.
  t.is(fit.length, 2);
  t.deepEqual(
    fit[0]!.target.map((v) => Math.round(v * 10) / 10),
    [-291.7, 0, 853.3, 480],
  );
  t.regex(fit[0]!.filter ?? '', /^blur\(\d+px\)$/);
  t.deepEqual(fit[1], { source: [0, 0, 1920, 1080], target: [0, (480 - 151.875) / 2, 270, 151.875] }, 'then the picture itself, sharp');
  t.deepEqual(
    recordDraws(facecam, 'single', 270, 480).map((d) => d.target),
    [[0, 0, 270, 480]],
  );
  t.deepEqual(
    recordDraws(facecam, 'stack', 270, 480).map((d) => d.target),
    [[0, 0, 270, 480]],
    'a stack keyframe without panels',
  );
});

test('reframe.quality beside a short: one compact line, warning when the speaker is on screen for under 80 % of the speech', (t) => {
  t.deepEqual(
    qualityLine({
      speakerOnScreenShare: 0.934,
      faceInWindowShare: 1,
      lowestConfidenceSpan: { start: 12.42, end: 14, confidence: 0.413 },
    }),
    { text: 'Speaker on screen 93 % · face in frame 100 % · least sure 12.4–14.0 s (0.41)', warn: false },
  );
  t.deepEqual(qualityLine({ speakerOnScreenShare: 0.799, faceInWindowShare: 0.5, lowestConfidenceSpan: null }), {
    text: 'Speaker on screen 79 % · face in frame 50 %',
    warn: true,
  });
  const enough = qualityLine({ speakerOnScreenShare: 0.8, faceInWindowShare: 0.29, lowestConfidenceSpan: null });
  t.deepEqual(enough, { text: 'Speaker on screen 80 % · face in frame 29 %', warn: false }, '80 % is enough');
});
