import test from 'ava';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { CAPTION_PRESETS } from '@shorts/common/render/presets';
import type { ShortDetections } from '@shorts/common/reframe/types';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';

// The studio's preview asks POST /api/render/caption-position where a render would put its captions.
// Its answer must be the render's own decision for every caption preset and output size: the band
// depends on both (a large preset takes more lines; a square or landscape output frames the faces
// differently), so the short's one stored band (for the default style at its analysed size) cannot
// stand in for it. Each answer is checked against a real render request with the same body: the
// position its status reports and the style items its task carries. No agent runs: the decision is
// the coordinator's, made when the render is queued.

const SIZES = [
  { width: 720, height: 1280 },
  { width: 1080, height: 1920 },
  { width: 1080, height: 1080 },
  { width: 1920, height: 1080 },
];
const START = 1;
const END = 6;
const WORDS = 'Practice every single day and you will learn the craft faster than you ever thought possible today'
  .split(' ')
  .map((text, i) => ({ text, start: START + 0.1 + i * 0.28, end: START + 0.1 + i * 0.28 + 0.24 }));

/** One person low in a 640x360 picture, so the lower third of a tall crop falls on the face. */
function lowFace(): { detections: ShortDetections } {
  const times = Array.from({ length: 50 }, (_, i) => START + i / 10);
  const face = { x: 280, y: 240, width: 70, height: 85 };
  return {
    detections: {
      version: 1,
      sourceWidth: 640,
      sourceHeight: 360,
      start: START,
      end: END,
      sampleFps: 10,
      speech: [{ start: START, end: END }],
      tracks: [{ id: 1, samples: times.map((time) => ({ time, box: face, score: 0.95, mouthActivity: 0.3 })) }],
      turns: [{ start: START, end: END, trackId: 1 }],
    },
  };
}

let cluster: TestCluster;
let key: string;
let orgId: string;
let jobId: string;

test.before(async () => {
  cluster = await startCluster('render_caption_placement_api', { renderActiveLimit: 200 });
  const made = await cluster.org({ plan: 'business', credits: 10 });
  key = made.key;
  orgId = made.org.id;
  const { detections } = lowFace();
  const output = { width: 720, height: 1280 };
  jobId = await insertCompletedJob(cluster.app, {
    organizationId: orgId,
    words: WORDS,
    durationSec: 10,
    shorts: [{ startTime: START, endTime: END, reframe: planReframe(detections, DEFAULT_DIRECTOR, output), detections }],
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output },
  });
});
test.after.always(() => cluster?.close());

const countRenders = async (organizationId: string) =>
  (await cluster.app.db.one<{ n: number }>('SELECT count(*)::int AS n FROM renders WHERE organization_id = $1', [organizationId]))!.n;

test('for every caption preset and size, the answer is what a render with the same body decides', async (t) => {
  const stored = await cluster.app.db.one<{ band: string | null }>(
    `SELECT data -> 'shorts' -> 0 ->> 'captionBand' AS band FROM jobs WHERE id = $1`,
    [jobId],
  );
  const storedBand = stored?.band ?? 'bottom';
  const differing: string[] = [];
  for (const preset of CAPTION_PRESETS) {
    for (const size of SIZES) {
      const body = { id: jobId, target: 0, preset, size };
      const label = `${preset} ${size.width}x${size.height}`;
      const before = await countRenders(orgId);
      const answer = await cluster.api('POST', '/api/render/caption-position', { key, body });
      t.is(answer.status, 200, `${label}: ${JSON.stringify(answer.body)}`);
      t.is(await countRenders(orgId), before, `${label}: asking renders nothing`);
      t.is(answer.body.captionPreset, preset, label);
      t.deepEqual(answer.body.size, size, label);

      const created = await cluster.api('POST', '/api/render', { key, body });
      t.is(created.status, 201, label);
      const status = await cluster.api('GET', `/api/render/${created.body.renderId}`, { key });
      const { style, captionPreset: _preset, size: _size, ...position } = answer.body;
      t.deepEqual(position, status.body.captionPosition, `${label}: the band and why`);
      const task = await cluster.app.db.one<{ payload: { options: { style?: unknown[] } } }>(
        `SELECT payload FROM tasks WHERE subject_id = $1`,
        [created.body.renderId],
      );
      t.deepEqual(style, task!.payload.options.style ?? [], `${label}: the style items the render burns its captions with`);
      t.is((await cluster.api('POST', `/api/render/${created.body.renderId}/cancel`, { key, body: {} })).status, 202);
      if (position.position !== storedBand) differing.push(`${label}: ${position.position}`);
    }
  }
  // Why the preview asks: the stored band is right for the default style at its size only.
  t.log(`stored band ${storedBand}; renders placed elsewhere: ${differing.join(', ') || 'none'}`);
});

test('a position the style names is the style’s; an automatic one keeps off the low face', async (t) => {
  const named = await cluster.api('POST', '/api/render/caption-position', {
    key,
    body: { id: jobId, target: 0, preset: 'DEFAULT', size: SIZES[0], options: { style: [{ property: 'position', value: 'bottom' }] } },
  });
  t.is(named.status, 200);
  t.like(named.body, { position: 'bottom', chosenBy: 'style' });
  t.true(named.body.style.some((i: { property: string; value: string }) => i.property === 'position' && i.value === 'bottom'));

  const automatic = await cluster.api('POST', '/api/render/caption-position', {
    key,
    body: { id: jobId, target: 0, preset: 'DEFAULT', size: SIZES[0] },
  });
  t.like(automatic.body, { chosenBy: 'automatic', movedFromFace: true, faceOverlap: 0 });
  t.not(automatic.body.position, 'bottom');
});

test('refused as the render would be: another organization’s job, a missing id, a size beyond the plan', async (t) => {
  const other = await cluster.org({ plan: 'free' });
  const before = await countRenders(other.org.id);
  const foreign = await cluster.api('POST', '/api/render/caption-position', { key: other.key, body: { id: jobId, target: 0 } });
  t.is(foreign.status, 404);
  t.is(foreign.body.message, 'Job not found');
  const missing = await cluster.api('POST', '/api/render/caption-position', { key, body: { target: 0 } });
  t.is(missing.status, 400);
  t.regex(missing.body.message, /id \(a completed VideoShorts job id\) is required/);
  const freeJob = await insertCompletedJob(cluster.app, {
    organizationId: other.org.id,
    words: WORDS,
    shorts: [{ startTime: START, endTime: END }],
  });
  const big = { id: freeJob, target: 0, size: { width: 1080, height: 1920 } };
  const asked = await cluster.api('POST', '/api/render/caption-position', { key: other.key, body: big });
  const rendered = await cluster.api('POST', '/api/render', { key: other.key, body: big });
  t.is(asked.status, 403);
  const { requestId: _a, ...askedError } = asked.body;
  const { requestId: _r, ...renderError } = rendered.body;
  t.deepEqual(askedError, renderError);
  t.is(await countRenders(other.org.id), before);
});
