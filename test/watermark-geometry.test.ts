// The studio's preview and the agent's compositing place a watermark with one function; these tests
// check that the box the preview draws (as percentages of its 9:16 frame) is the box the agent's
// filter graph scales the image to and overlays at, for several frame sizes and placements.
import test from 'ava';
import { boxPercent, placeWatermark, placementFromBox } from '@shorts/common/render/watermark-geometry';
import { buildWatermarkFilter, type WatermarkPlacement } from '../node-agent/src/media/blend.js';

/** The box the agent's graph draws: `scale=W:H` of the image and `overlay=x=X:y=Y` onto the frame. */
function agentBox(p: WatermarkPlacement, frameWidth: number, frameHeight: number, imageWidth: number, imageHeight: number) {
  const { filter } = buildWatermarkFilter({
    ...p,
    videoLabel: 'v',
    imageLabel: '1:v',
    outLabel: 'out',
    frameWidth,
    frameHeight,
    imageWidth,
    imageHeight,
    opacity: 1,
    blendMode: 'normal',
  });
  const scale = /scale=(\d+):(\d+)/.exec(filter);
  const overlay = /overlay=x=(\d+):y=(\d+)/.exec(filter);
  if (!scale || !overlay) throw new Error(`no scale/overlay in ${filter}`);
  return { x: Number(overlay[1]), y: Number(overlay[2]), w: Number(scale[1]), h: Number(scale[2]) };
}

/** What the studio lays over a preview `previewWidth` px wide, back in output pixels. */
function studioBox(
  p: WatermarkPlacement,
  frameWidth: number,
  frameHeight: number,
  imageWidth: number,
  imageHeight: number,
  previewWidth: number,
) {
  const pct = boxPercent(placeWatermark(p, frameWidth, frameHeight, imageWidth, imageHeight), frameWidth, frameHeight);
  const previewHeight = (previewWidth * frameHeight) / frameWidth;
  const onPreview = {
    x: (pct.left / 100) * previewWidth,
    y: (pct.top / 100) * previewHeight,
    w: (pct.width / 100) * previewWidth,
    h: (pct.height / 100) * previewHeight,
  };
  const k = frameWidth / previewWidth;
  return { x: onPreview.x * k, y: onPreview.y * k, w: onPreview.w * k, h: onPreview.h * k };
}

const CASES: Array<{ frame: [number, number]; image: [number, number]; placement: WatermarkPlacement }> = [
  { frame: [1080, 1920], image: [431, 120], placement: { left: '40px', top: '40px', width: '300px' } },
  { frame: [720, 1280], image: [431, 120], placement: { left: '40px', top: '40px', width: '300px' } },
  { frame: [1080, 1920], image: [200, 200], placement: { left: 'calc(100% - 240px)', bottom: '5%', width: '200px' } },
  { frame: [720, 1280], image: [64, 32], placement: { left: '10%', top: '50%', width: '25%' } },
  { frame: [360, 640], image: [120, 40], placement: {} },
  { frame: [1920, 1080], image: [300, 100], placement: { left: '100px', bottom: '60px' } },
];

for (const {
  frame: [fw, fh],
  image: [iw, ih],
  placement,
} of CASES) {
  test(`the preview draws the watermark where the agent composites it: ${fw}x${fh}, ${JSON.stringify(placement)}`, (t) => {
    const agent = agentBox(placement, fw, fh, iw, ih);
    for (const previewWidth of [240, 270, 390]) {
      const studio = studioBox(placement, fw, fh, iw, ih, previewWidth);
      for (const key of ['x', 'y', 'w', 'h'] as const) {
        t.true(
          Math.abs(studio[key] - agent[key]) < 1e-6,
          `${key} at preview width ${previewWidth}: studio ${studio[key]}, agent ${agent[key]}`,
        );
      }
    }
  });
}

test('a box dragged in the studio is stored as output px that the render reads back to the same box', (t) => {
  const image = { width: 431, height: 120 };
  for (const dragged of [
    { x: 40, y: 40, w: 300 },
    { x: 612.4, y: 1503.6, w: 180.5 },
    { x: -20, y: 0, w: 1080 },
  ]) {
    const placement = placementFromBox(dragged);
    t.regex(placement.left, /^-?\d+px$/);
    t.regex(placement.top, /^-?\d+px$/);
    t.regex(placement.width, /^\d+px$/);
    const box = placeWatermark(placement, 1080, 1920, image.width, image.height);
    t.deepEqual({ x: box.x, y: box.y, w: box.w }, { x: Math.round(dragged.x), y: Math.round(dragged.y), w: Math.round(dragged.w) });
    t.is(box.h, Math.round((box.w * image.height) / image.width));
  }
});

test('a placement the render refuses is refused by the shared geometry too', (t) => {
  t.throws(() => placeWatermark({ left: '40em' }, 1080, 1920, 100, 100), { message: /waterMark\.left must be a length/ });
});
