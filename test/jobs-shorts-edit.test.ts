import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { planReframe } from '@shorts/common/reframe/camera';
import type { ShortDetections } from '@shorts/common/reframe/types';
import type { Word } from '@shorts/common/text/transcript';
import type { Parsed } from './helpers/parsed.js';

// Editing a completed job's shorts in place (POST/PATCH/DELETE /api/jobs/:jobId/shorts[/:shortId]):
// no new job or charge, ids that never shift, renders that follow the new range, and a crop path
// planned again from the stored detections where the range was analysed.

let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('jobs_shorts_edit');
});
test.after.always(() => cluster?.close());

const LEFT = { x: 250, y: 250, width: 120, height: 150 };
const RIGHT = { x: 910, y: 250, width: 120, height: 150 };
/** Two people in a 1280x720 source over [start, start + 10): the left one speaks the first half. */
function detectionsFrom(start: number): ShortDetections {
  const times = Array.from({ length: 100 }, (_, i) => start + i / 10);
  const half = start + 5;
  return {
    version: 1,
    sourceWidth: 1280,
    sourceHeight: 720,
    start,
    end: start + 10,
    sampleFps: 10,
    speech: [{ start: start + 0.1, end: start + 9.9 }],
    tracks: [
      { id: 1, samples: times.map((time) => ({ time, box: LEFT, score: 0.95, mouthActivity: time < half ? 0.3 : 0 })) },
      { id: 2, samples: times.map((time) => ({ time, box: RIGHT, score: 0.95, mouthActivity: time >= half ? 0.3 : 0 })) },
    ],
    turns: [
      { start: start + 0.1, end: half - 0.1, trackId: 1 },
      { start: half + 0.1, end: start + 9.9, trackId: 2 },
    ],
  };
}
const OUTPUT = { width: 720, height: 1280 };
const WORDS: Word[] = Array.from({ length: 30 }, (_, i) => ({ text: `w${i}`, start: i + 0.2, end: i + 0.8 }));

async function job(organizationId: string): Promise<string> {
  const first = detectionsFrom(0);
  const second = detectionsFrom(10);
  return insertCompletedJob(cluster.app, {
    organizationId,
    words: WORDS,
    width: 1280,
    height: 720,
    durationSec: 200,
    shorts: [
      { startTime: 0, endTime: 10, title: 'First', detections: first, reframe: planReframe(first, DEFAULT_DIRECTOR, OUTPUT) },
      { startTime: 10, endTime: 20, title: 'Second', detections: second, reframe: planReframe(second, DEFAULT_DIRECTOR, OUTPUT) },
    ],
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output: OUTPUT },
  });
}

async function bearerFor(orgId: string) {
  const user = await createUser(cluster.app.db, { email: `shorts-${orgId}@example.com`, organizationId: orgId });
  return { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` };
}
async function shortsOf(key: string, id: string): Promise<Parsed[]> {
  return (await cluster.api('GET', `/api/jobs/${id}`, { key })).body.data.shorts;
}
async function ledger(orgId: string) {
  return cluster.app.db.one<{ n: string; credits: string; reserved: string }>(
    `SELECT (SELECT count(*) FROM credit_ledger WHERE organization_id = $1) AS n, credits, reserved_credits AS reserved FROM organizations WHERE id = $1`,
    [orgId],
  );
}
async function renderTask(key: string, id: string, target: number, options: Record<string, unknown> = {}) {
  const render = await cluster.api('POST', '/api/render', { key, body: { id, target, options } });
  if (render.status !== 201) return { status: render.status, payload: undefined };
  const task = await cluster.app.db.one<{ payload: Parsed }>(`SELECT payload FROM tasks WHERE subject_id = $1 AND type = 'render-short'`, [
    render.body.renderId,
  ]);
  return { status: 201, payload: task!.payload };
}

test('bad ranges and titles are 400s that change nothing; an unknown short is 404', async (t) => {
  const { org, key } = await cluster.org({ plan: 'free' });
  const id = await job(org.id);
  const before = await shortsOf(key, id);
  const cases: Array<[string, string, Record<string, unknown>, RegExp]> = [
    ['PATCH', '/shorts/0', { revision: 0, startTime: 6, endTime: 4 }, /endTime must be greater than startTime/],
    ['PATCH', '/shorts/0', { revision: 0, startTime: -1 }, /startTime/],
    ['PATCH', '/shorts/0', { revision: 0, endTime: 250 }, /source's duration \(200 s\)/],
    ['PATCH', '/shorts/0', { revision: 0, endTime: 0.5 }, /at least 1 second/],
    ['PATCH', '/shorts/0', { revision: 0, endTime: 95 }, /at most 90 seconds on the free plan/],
    ['PATCH', '/shorts/0', { revision: 0, title: '  ' }, /title/],
    ['PATCH', '/shorts/0', { startTime: 1 }, /revision/],
    ['POST', '/shorts', { revision: 0, title: 'New', startTime: 5 }, /endTime/],
    ['POST', '/shorts', { revision: 0, title: 'New', startTime: 150, endTime: 201 }, /source's duration/],
  ];
  for (const [method, suffix, body, message] of cases) {
    const res = await cluster.api(method, `/api/jobs/${id}${suffix}`, { key, body });
    t.is(res.status, 400, `${method} ${suffix} ${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
    t.regex(JSON.stringify(res.body), message);
  }
  t.is((await cluster.api('PATCH', `/api/jobs/${id}/shorts/7`, { key, body: { revision: 0, title: 'x' } })).status, 404);
  t.is((await cluster.api('DELETE', `/api/jobs/${id}/shorts/x?revision=0`, { key })).status, 404);
  t.is((await cluster.api('DELETE', `/api/jobs/${id}/shorts/0`, { key })).status, 400, 'revision is required');
  t.deepEqual(await shortsOf(key, id), before, 'nothing changed');
});

test("another organization's job is 404 for every short edit", async (t) => {
  const owner = await cluster.org();
  const other = await cluster.org();
  const id = await job(owner.org.id);
  const before = await shortsOf(owner.key, id);
  t.is((await cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, { key: other.key, body: { revision: 0, title: 'Mine now' } })).status, 404);
  t.is(
    (await cluster.api('POST', `/api/jobs/${id}/shorts`, { key: other.key, body: { revision: 0, title: 'x', startTime: 1, endTime: 5 } }))
      .status,
    404,
  );
  t.is((await cluster.api('DELETE', `/api/jobs/${id}/shorts/0?revision=0`, { key: other.key })).status, 404);
  t.deepEqual(await shortsOf(owner.key, id), before);
});

test('a stale revision is 409 and changes nothing; of two edits on one revision, one wins', async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id);
  const [a, b] = await Promise.all([
    cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, { key, body: { revision: 0, title: 'From A' } }),
    cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, { key, body: { revision: 0, title: 'From B' } }),
  ]);
  t.deepEqual([a.status, b.status].sort(), [200, 409]);
  const winner = a.status === 200 ? 'From A' : 'From B';
  const loser = a.status === 409 ? a : b;
  t.regex(loser.body.message, /revision 1, not 0/);
  t.is((await shortsOf(key, id))[0].content, winner, "the winner's edit stands");
  const stale = await cluster.api('DELETE', `/api/jobs/${id}/shorts/1?revision=0`, { key });
  t.is(stale.status, 409);
  t.is((await shortsOf(key, id)).length, 2, 'the stale removal removed nothing');
  const bearer = (await cluster.api('GET', `/api/jobs/${id}?organizationId=${org.id}`, { headers: await bearerFor(org.id) })).body;
  t.is(bearer.data.shortsRevision, 1);
});

test('trim, add and remove: ids never shift or get reused, renders use the new range and words, no credits charged', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const id = await job(org.id);
  const before = await ledger(org.id);

  // Trim the first short inside its analysed range: words and path follow.
  const trimmed = await cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, {
    key,
    body: { revision: 0, startTime: 2, endTime: 8, title: 'Trimmed' },
  });
  t.is(trimmed.status, 200, JSON.stringify(trimmed.body));
  t.like(trimmed.body, { revision: 1, short: { id: 0, title: 'Trimmed', startTime: 2, endTime: 8, text: 'w2 w3 w4 w5 w6 w7' } });
  const path = trimmed.body.short.reframe;
  t.truthy(path, 'reframed from the stored detections');
  t.falsy(trimmed.body.short.reframeStale);
  t.true(
    path.keyframes.every((k: { time: number }) => k.time >= 2 && k.time <= 8),
    JSON.stringify(path.keyframes.map((k: { time: number }) => k.time)),
  );
  t.is(path.keyframes[0].time, 2);
  t.deepEqual(
    path.segments.map((s: { tracks: number[] }) => s.tracks),
    [[1], [2]],
    'left speaker, then the cut to the right one',
  );
  t.true(path.segments[1].start > 4 && path.segments[1].start <= 5.1, `cut at the turn (${path.segments[1].start})`);
  // Its quality figure is measured again over the new range: of 6 s of speech, 2-4.9 and 5.1-8 name a
  // face (the untrimmed short's: 9.6 of 9.8 s, 0.98).
  t.deepEqual(path.quality, {
    speakerOnScreenShare: 0.967,
    faceInWindowShare: 1,
    lowestConfidenceSpan: { start: 2, end: 4.9, confidence: 1 },
  });

  const trimmedRender = await renderTask(key, id, 0);
  t.like(trimmedRender.payload, { shortId: 0, startTime: 2, endTime: 8, recompute: null });
  t.deepEqual(trimmedRender.payload.reframe, path, 'the render follows the re-planned path');
  t.deepEqual(
    trimmedRender.payload.words.map((w: Word) => w.text),
    ['w2', 'w3', 'w4', 'w5', 'w6', 'w7'],
  );

  // Add a short: the next id, reframed from the detections that cover it.
  const added = await cluster.api('POST', `/api/jobs/${id}/shorts`, {
    key,
    body: { revision: 1, title: 'Inside the second', startTime: 12, endTime: 14 },
  });
  t.is(added.status, 201, JSON.stringify(added.body));
  t.like(added.body, { revision: 2, short: { id: 2, startTime: 12, endTime: 14, text: 'w12 w13' } });
  t.false('cropObjectKey' in added.body.short, 'no internal storage key in the answer');
  t.false('plannedReframe' in added.body.short);
  t.true(added.body.short.reframe.keyframes.every((k: { time: number }) => k.time >= 12 && k.time <= 14));

  // Remove the first: the others keep their ids; a new short never takes the removed id.
  const removed = await cluster.api('DELETE', `/api/jobs/${id}/shorts/0?revision=2`, { key });
  t.is(removed.status, 200, JSON.stringify(removed.body));
  const another = await cluster.api('POST', `/api/jobs/${id}/shorts`, {
    key,
    body: { revision: 3, title: 'Late', startTime: 30, endTime: 40 },
  });
  t.is(another.status, 201);
  t.is(another.body.short.id, 3);
  t.is(another.body.short.reframe, null, 'no detections cover it: centre crop');
  const shorts = await shortsOf(key, id);
  t.deepEqual(
    shorts.map((s) => [s.id, s.content]),
    [
      ['1', 'Second'],
      ['2', 'Inside the second'],
      ['3', 'Late'],
    ],
  );
  t.is((await cluster.app.db.one<{ n: number }>(`SELECT shorts_count AS n FROM jobs WHERE id = $1`, [id]))!.n, 3);

  // Renders: the removed short is gone, the others render their own ranges, words and detections.
  t.is((await renderTask(key, id, 0)).status, 404);
  const second = await renderTask(key, id, 1, { director: { intelligence: { maxSpeakersToFocus: 2 } } });
  t.is(second.status, 201);
  t.like(second.payload, { shortId: 1, startTime: 10, endTime: 20 });
  t.is(second.payload.recompute.detections.start, 10, 'short 1 still plans from its own detections');
  const addedRender = await renderTask(key, id, 2, { director: { intelligence: { maxSpeakersToFocus: 2 } } });
  t.like(addedRender.payload, { shortId: 2, startTime: 12, endTime: 14 });
  t.deepEqual(
    addedRender.payload.words.map((w: Word) => w.text),
    ['w12', 'w13'],
  );
  t.deepEqual(
    [addedRender.payload.recompute.detections.start, addedRender.payload.recompute.detections.end],
    [12, 14],
    'planned over the new range only',
  );

  const after = await ledger(org.id);
  t.deepEqual(after, before, 'no credits charged or reserved');
  t.is(
    (await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE organization_id = $1`, [org.id]))!.n,
    1,
    'no new job',
  );
});

test('a range outside what was analysed keeps the centre crop and says so; renders use the new range', async (t) => {
  const { org, key } = await cluster.org({ plan: 'pro' });
  const id = await job(org.id);
  const moved = await cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, { key, body: { revision: 0, startTime: 5, endTime: 15 } });
  t.is(moved.status, 200, JSON.stringify(moved.body));
  t.like(moved.body.short, { reframe: null, reframeStale: true, startTime: 5, endTime: 15 });
  t.true((await shortsOf(key, id))[0].reframeStale);
  const render = await renderTask(key, id, 0, { director: { intelligence: { maxSpeakersToFocus: 2 } } });
  t.like(render.payload, { startTime: 5, endTime: 15, reframe: null, recompute: null });
  t.deepEqual(
    render.payload.words.map((w: Word) => w.text),
    ['w5', 'w6', 'w7', 'w8', 'w9', 'w10', 'w11', 'w12', 'w13', 'w14'],
  );
  // Back inside: planned again, no longer stale.
  const back = await cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, { key, body: { revision: 1, startTime: 1, endTime: 9 } });
  t.truthy(back.body.short.reframe);
  t.falsy(back.body.short.reframeStale);
});

test('the OpenAPI document has the short-editing routes', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  t.truthy(doc.paths['/api/jobs/{jobId}/shorts'].post);
  t.truthy(doc.paths['/api/jobs/{jobId}/shorts/{shortId}'].patch);
  t.truthy(doc.paths['/api/jobs/{jobId}/shorts/{shortId}'].delete);
});
