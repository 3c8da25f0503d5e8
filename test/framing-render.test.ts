import test from 'ava';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { makeHalvesVideo, redBlueShares } from './helpers/media.js';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { planReframe } from '@shorts/common/reframe/camera';
import { oneSpeakerDetections } from './helpers/reframe-fixtures.js';

// A real agent renders a short whose framing was set by hand: measured on the rendered frames, the
// picture follows the override (the left half pinned) where the camera framed the right one, both
// from the stored path and from a path the agent plans again for another shape.

let cluster: TestCluster;
let source: string;

test.before(async () => {
  cluster = await startCluster('framing_render');
  // Left half pure red, right half pure blue: which half a frame shows is its colour.
  source = path.join(cluster.dataDir, 'halves.mp4');
  await makeHalvesVideo(source, { seconds: 4 });
  await cluster.startAgent();
});
test.after.always(() => cluster?.close());

/** A speaker on the blue (right) side for the whole short: the camera frames the right half. */
const detections = () =>
  oneSpeakerDetections({ sourceWidth: 1280, sourceHeight: 720, seconds: 4, face: { x: 900, y: 250, width: 120, height: 150 } });

async function render(key: string, id: string, size: { width: number; height: number }): Promise<string> {
  const created = await cluster.api('POST', '/api/render', { key, body: { id, target: 0, size } });
  if (created.status !== 201) throw new Error(JSON.stringify(created.body));
  const done = await waitFor(
    async () => {
      const r = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      return r.body.type === 'done' || r.body.type === 'error' ? r.body : undefined;
    },
    180_000,
    'render',
  );
  if (done.type !== 'done') throw new Error(JSON.stringify(done));
  const file = path.join(cluster.dataDir, `${created.body.renderId}.mp4`);
  await writeFile(file, Buffer.from(await (await fetch(done.url)).arrayBuffer()));
  return file;
}

test('a render follows a window pinned by hand, from the stored path and from one planned again', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const d = detections();
  const output = { width: 720, height: 1280 };
  const id = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    sourcePath: source,
    words: [],
    width: 1280,
    height: 720,
    durationSec: 4,
    shorts: [{ startTime: 0, endTime: 4, detections: d, reframe: planReframe(d, DEFAULT_DIRECTOR, output) }],
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output },
  });
  // From 2 s on, the window held over the left (red) half.
  const put = await cluster.api('PUT', `/api/jobs/${id}/shorts/0/framing`, {
    key,
    body: { revision: 0, overrides: [{ start: 2, end: 4, kind: 'window', window: { x: 0, y: 0, width: 406, height: 720 } }] },
  });
  t.is(put.status, 200, JSON.stringify(put.body));

  // 9:16, the path's own shape: the stored path, overrides applied on the coordinator.
  const tall = await render(key, id, { width: 360, height: 640 });
  const tallBefore = await redBlueShares(tall, 1, 360, 640);
  const tallAfter = await redBlueShares(tall, 3, 360, 640);
  t.true(tallBefore.blue > 0.9, `the camera's framing (right) before the override: ${JSON.stringify(tallBefore)}`);
  t.true(tallAfter.red > 0.9, `the pinned left half during it: ${JSON.stringify(tallAfter)}`);

  // Square: another shape, so the agent plans the path again and applies the overrides itself.
  const square = await render(key, id, { width: 360, height: 360 });
  const squareBefore = await redBlueShares(square, 1, 360, 360);
  const squareAfter = await redBlueShares(square, 3, 360, 360);
  t.true(squareBefore.blue > 0.75, `square, before: ${JSON.stringify(squareBefore)}`);
  t.true(squareAfter.red > 0.75, `square, during: ${JSON.stringify(squareAfter)}`);
});
