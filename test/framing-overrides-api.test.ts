import test from 'ava';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { createUser } from '../coordinator/src/tenancy/tenancy.js';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { planReframe } from '@shorts/common/reframe/camera';
import { shownAt } from '@shorts/common/reframe/window';
import type { Box, Reframe } from '@shorts/common/reframe/types';
import type { Word } from '@shorts/common/text/transcript';
import type { Parsed } from './helpers/parsed.js';
import { LEFT, RIGHT, holds, twoFacesLeftSpeaks } from './helpers/two-faces.js';

// Framing by hand (PUT /api/jobs/:jobId/shorts/:shortId/framing): spans where the window is held, the
// layout forced or a face pinned, stored on the short, served in `reframe` in both retrieve forms,
// versioned like the other short edits, free, and followed by renders.

let cluster: TestCluster;
test.before(async () => {
  cluster = await startCluster('framing_overrides_api');
});
test.after.always(() => cluster?.close());

const OUTPUT = { width: 720, height: 1280 };
const WORDS: Word[] = Array.from({ length: 30 }, (_, i) => ({ text: `w${i}`, start: i + 0.2, end: i + 0.8 }));

async function job(organizationId: string, withDetections = true): Promise<string> {
  const d = twoFacesLeftSpeaks();
  return insertCompletedJob(cluster.app, {
    organizationId,
    words: WORDS,
    width: 1280,
    height: 720,
    durationSec: 200,
    shorts: [
      withDetections
        ? { startTime: 0, endTime: 10, title: 'First', detections: d, reframe: planReframe(d, DEFAULT_DIRECTOR, OUTPUT) }
        : { startTime: 0, endTime: 10, title: 'First' },
      { startTime: 20, endTime: 30, title: 'Second' },
    ],
    ...(withDetections ? { reframePlan: { director: { ...DEFAULT_DIRECTOR }, output: OUTPUT } } : {}),
  });
}

async function bearerFor(orgId: string) {
  const user = await createUser(cluster.app.db, { email: `framing-${orgId}@example.com`, organizationId: orgId });
  return { authorization: `Bearer ${await cluster.app.signer.issue(user.id)}` };
}
const framing = (id: string, short: number | string) => `/api/jobs/${id}/shorts/${short}/framing`;
async function keyView(key: string, id: string): Promise<Parsed> {
  return (await cluster.api('GET', `/api/jobs/${id}`, { key })).body.data;
}
async function ledger(orgId: string) {
  return cluster.app.db.one<{ n: string; credits: string; reserved: string; jobs: string }>(
    `SELECT (SELECT count(*) FROM credit_ledger WHERE organization_id = $1) AS n, credits, reserved_credits AS reserved,
       (SELECT count(*) FROM jobs WHERE organization_id = $1) AS jobs FROM organizations WHERE id = $1`,
    [orgId],
  );
}
const centreX = (b: Box) => b.x + b.width / 2;

const OVERRIDES = [
  // The window held over the right person's side while the left one speaks.
  { start: 1, end: 3, kind: 'window', window: { x: 800, y: 0, width: 406, height: 720 } },
  { start: 4, end: 6, kind: 'layout', layout: 'fit' },
  { start: 7, end: 9, kind: 'face', trackId: 2 },
];

test('overrides are stored, served in both forms, versioned, free, and change the path only in their spans', async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id);
  const before = await ledger(org.id);
  const planned: Reframe = (await keyView(key, id)).shorts[0].reframe;
  // The camera follows the speaker (left) throughout.
  for (const time of [2, 5, 8]) t.true(holds(shownAt(planned, time).boxes[0]!, LEFT), `planned at ${time}`);

  const res = await cluster.api('PUT', framing(id, 0), { key, body: { revision: 0, overrides: OVERRIDES } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.is(res.body.revision, 1);
  t.deepEqual(res.body.short.reframe.overrides, OVERRIDES);
  t.false('plannedReframe' in res.body.short, "the camera's own path is not served");

  const data = await keyView(key, id);
  t.is(data.shortsRevision, 1);
  const r: Reframe = data.shorts[0].reframe;
  t.deepEqual(r.overrides, OVERRIDES, 'API-key form');
  const bearer = await cluster.api('GET', `/api/jobs/${id}?organizationId=${org.id}`, { headers: await bearerFor(org.id) });
  t.deepEqual(bearer.body.data.shorts[0].reframe, r, 'bearer form serves the same path');
  t.is(bearer.body.data.shortsRevision, 1);

  // In the window's span: a 9:16 window about the window's centre, at its height.
  const held = shownAt(r, 2);
  t.is(held.layout, 'single');
  t.true(Math.abs(centreX(held.boxes[0]!) - 1002) <= 2, JSON.stringify(held));
  t.is(held.boxes[0]!.height, 720);
  t.true(holds(held.boxes[0]!, RIGHT));
  // The forced layout, and the pinned face followed.
  t.is(shownAt(r, 5).layout, 'fit');
  t.deepEqual(shownAt(r, 5).boxes[0], { x: 0, y: 0, width: 1280, height: 720 });
  t.true(holds(shownAt(r, 8).boxes[0]!, RIGHT), 'the pinned face');
  t.deepEqual(r.segments.find((s) => s.start === 7)?.tracks, [2]);
  // Elsewhere the camera's path stands.
  for (const time of [0.5, 3.5, 6.5, 9.5]) t.deepEqual(shownAt(r, time), shownAt(planned, time), `outside the spans at ${time}`);

  // No job, no charge, no task.
  t.deepEqual(await ledger(org.id), before);
  t.is((await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE organization_id = $1`, [org.id]))!.n, 0);
  t.is((await cluster.app.db.one<{ n: number }>(`SELECT count(*)::int AS n FROM renders WHERE organization_id = $1`, [org.id]))!.n, 0);

  // Renders use it: the stored path as it is, and a render of another shape plans again with them.
  const render = await cluster.api('POST', '/api/render', { key, body: { id, target: 0 } });
  t.is(render.status, 201, JSON.stringify(render.body));
  const task = await cluster.app.db.one<{ payload: Parsed }>(`SELECT payload FROM tasks WHERE subject_id = $1`, [render.body.renderId]);
  t.deepEqual(task!.payload.reframe.overrides, OVERRIDES);
  const square = await cluster.api('POST', '/api/render', { key, body: { id, target: 0, size: { width: 1080, height: 1080 } } });
  t.is(square.status, 201, JSON.stringify(square.body));
  const sq = await cluster.app.db.one<{ payload: Parsed }>(`SELECT payload FROM tasks WHERE subject_id = $1`, [square.body.renderId]);
  t.deepEqual(sq!.payload.recompute?.overrides, OVERRIDES, 'a render planned again carries the overrides');

  // Undo: the previous list (none) gives the camera's path back, as a new revision.
  const undo = await cluster.api('PUT', framing(id, 0), { key, body: { revision: 1, overrides: [] } });
  t.is(undo.status, 200, JSON.stringify(undo.body));
  t.is(undo.body.revision, 2);
  const after = await keyView(key, id);
  t.deepEqual(after.shorts[0].reframe, planned);
  // Redo.
  const redo = await cluster.api('PUT', framing(id, 0), { key, body: { revision: 2, overrides: OVERRIDES } });
  t.deepEqual((await keyView(key, id)).shorts[0].reframe, r, JSON.stringify(redo.body));
});

test('bad overrides are 400s naming the fault, a stale revision 409, and nothing changes', async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id);
  const before = await keyView(key, id);
  const cases: Array<[unknown[], RegExp]> = [
    [[{ start: 8, end: 12, kind: 'layout', layout: 'fit' }], /reaches outside the short \(0–10 s\)/],
    [[{ start: 3, end: 2, kind: 'layout', layout: 'fit' }], /end must be greater than start/],
    [[{ start: 1, end: 2, kind: 'layout', layout: 'zoom' }], /layout/],
    [[{ start: 1, end: 2, kind: 'tilt' }], /kind/],
    [[{ start: 1, end: 2, kind: 'face', trackId: 9 }], /face 9 is not one detection saw in that span \(faces seen: 1, 2\)/],
    [[{ start: 1, end: 2, kind: 'window', window: { x: 1000, y: 0, width: 406, height: 720 } }], /inside the 1280x720 source/],
    [[{ start: 1, end: 2, kind: 'window' }], /window/],
  ];
  for (const [overrides, message] of cases) {
    const res = await cluster.api('PUT', framing(id, 0), { key, body: { revision: 0, overrides } });
    t.is(res.status, 400, `${JSON.stringify(overrides)}: ${JSON.stringify(res.body)}`);
    t.regex(JSON.stringify(res.body), message);
  }
  t.is((await cluster.api('PUT', framing(id, 0), { key, body: { overrides: [] } })).status, 400, 'revision is required');
  t.is((await cluster.api('PUT', framing(id, 0), { key, body: { revision: 5, overrides: [] } })).status, 409);
  t.is((await cluster.api('PUT', framing(id, 7), { key, body: { revision: 0, overrides: [] } })).status, 404);
  // A short without detections has no faces to pin.
  const noFaces = await cluster.api('PUT', framing(id, 1), {
    key,
    body: { revision: 0, overrides: [{ start: 21, end: 22, kind: 'face', trackId: 1 }] },
  });
  t.is(noFaces.status, 400);
  t.regex(noFaces.body.message, /no face was seen there/);
  t.deepEqual(await keyView(key, id), before, 'nothing changed');
});

test("another organization's job is 404 and is not changed", async (t) => {
  const owner = await cluster.org();
  const other = await cluster.org();
  const id = await job(owner.org.id);
  const before = await keyView(owner.key, id);
  const res = await cluster.api('PUT', framing(id, 0), { key: other.key, body: { revision: 0, overrides: OVERRIDES } });
  t.is(res.status, 404);
  t.deepEqual(await keyView(owner.key, id), before);
});

test('a short without a path gets one from its overrides; a trim keeps them, clipped', async (t) => {
  const { org, key } = await cluster.org();
  const id = await job(org.id, false);
  t.is((await keyView(key, id)).shorts[0].reframe, null);
  const window = { x: 0, y: 0, width: 406, height: 720 };
  const res = await cluster.api('PUT', framing(id, 0), {
    key,
    body: { revision: 0, overrides: [{ start: 2, end: 8, kind: 'window', window }] },
  });
  t.is(res.status, 200, JSON.stringify(res.body));
  const r: Reframe = (await keyView(key, id)).shorts[0].reframe;
  t.deepEqual(shownAt(r, 5).boxes[0], window, 'the window held');
  t.true(Math.abs(centreX(shownAt(r, 1).boxes[0]!) - 640) <= 2, 'the centre crop elsewhere');

  const trim = await cluster.api('PATCH', `/api/jobs/${id}/shorts/0`, { key, body: { revision: 1, startTime: 4, endTime: 9 } });
  t.is(trim.status, 200, JSON.stringify(trim.body));
  const trimmed: Reframe = (await keyView(key, id)).shorts[0].reframe;
  t.deepEqual(trimmed.overrides, [{ start: 4, end: 8, kind: 'window', window }]);
  t.deepEqual(shownAt(trimmed, 6).boxes[0], window);

  // Cleared: back to the centre crop the short had (no path).
  const cleared = await cluster.api('PUT', framing(id, 0), { key, body: { revision: 2, overrides: [] } });
  t.is(cleared.status, 200);
  t.is((await keyView(key, id)).shorts[0].reframe, null);
});

test('the OpenAPI document describes the route and the overrides in `reframe`', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  const op = doc.paths['/api/jobs/{jobId}/shorts/{shortId}/framing']?.put;
  t.truthy(op, 'PUT framing documented');
  t.regex(JSON.stringify(doc.components.schemas.Reframe ?? doc), /overrides/);
  t.regex(JSON.stringify(op.requestBody), /"window"/);
});
