import test from 'ava';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { FFMPEG, makeTestVideo, serveFiles } from './helpers/media.js';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { resolveRender } from '../coordinator/src/renders/render-request.js';
import { insertFiles } from '../coordinator/src/files/files.js';

// The render request rules, without an agent: validation, preset precedence, plan rules, queue.

const execFileAsync = promisify(execFile);

let cluster: TestCluster;
const WORDS = [
  { text: 'hello', start: 0.5, end: 0.9 },
  { text: 'world', start: 1.0, end: 1.4 },
];

test.before(async () => {
  cluster = await startCluster('renders_api');
});
test.after.always(() => cluster?.close());

async function setup(plan = 'pro') {
  const { org, key } = await cluster.org({ plan });
  const jobId = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: WORDS,
    shorts: [
      { startTime: 0, endTime: 2 },
      { startTime: 2, endTime: 4 },
    ],
  });
  return { org, key, jobId };
}
const spec = async (renderId: string) =>
  (await cluster.app.db.one<{
    spec: {
      shortId: number;
      startTime: number;
      endTime: number;
      captionPreset: string;
      output: unknown;
      watermark: unknown;
      options: { maxWordsInPage?: number; waterMark?: { fileAppId: string } };
    };
  }>('SELECT spec FROM renders WHERE id = $1', [renderId]))!.spec;
const render = (key: string, body: unknown) => cluster.api('POST', '/api/render', { key, body });

test('create answers 201 {renderId}; target by id or index, as number or string', async (t) => {
  const { key, jobId } = await setup();
  for (const target of [1, '1']) {
    const r = await render(key, { id: jobId, target });
    t.is(r.status, 201);
    t.truthy(r.body.renderId);
    const s = await spec(r.body.renderId);
    t.is(s.shortId, 1);
    t.deepEqual([s.startTime, s.endTime], [2, 4]);
  }
  const status = await cluster.api('GET', `/api/render/${(await render(key, { id: jobId, target: 0 })).body.renderId}`, { key });
  t.like(status.body, { type: 'queued', status: 'QUEUED', progress: 0 });
  t.true(status.body.queuePosition >= 1);
});

test('validation: job, target, type', async (t) => {
  const { key, jobId } = await setup();
  const other = await setup();
  t.is((await render(key, { target: 0 })).status, 400);
  t.is((await render(key, { id: jobId })).status, 400);
  t.is((await render(key, { id: jobId, target: 'first' })).status, 400);
  t.is((await render(key, { id: jobId, target: -1 })).status, 400);
  t.is((await render(key, { id: jobId, target: 5 })).status, 404);
  t.is((await render(key, { id: jobId, target: 0, type: 'longVideo' })).status, 400);
  t.is((await render(key, { id: other.jobId, target: 0 })).status, 404, "another organization's job");
  const created = await cluster.api('POST', '/api/jobs', {
    key,
    body: { functionName: 'VideoShorts', fileUrl: 'https://example.com/a.mp4' },
  });
  const processing = await render(key, { id: created.body.id, target: 0 });
  t.is(processing.status, 400);
  t.regex(processing.body.message, /completed/);
  t.is((await render(key, { id: jobId, target: 0, options: { waterMark: { left: '10em' } } })).status, 400);
  t.is((await render(key, { id: jobId, target: 0, options: { waterMark: { blendMode: 'glow' } } })).status, 400);
  t.is((await render(key, { id: jobId, target: 0, preset: 'SPARKLES' })).status, 400);
});

test('malformed ids are 404, never a query error; null optional fields count as omitted', async (t) => {
  const { key, jobId } = await setup();
  for (const renderId of ['%00', 'abc%00def', 'not-a-render', jobId]) {
    const r = await cluster.api('GET', `/api/render/${renderId}`, { key });
    t.is(r.status, 404, renderId);
    t.like(r.body, { error: 'Not Found', message: 'Render not found', code: 'not_found' });
  }
  for (const brandPresetId of ['\u0000', 'x\u0000y', 'not-a-preset']) {
    const r = await render(key, { id: jobId, target: 0, brandPresetId });
    t.is(r.status, 404, JSON.stringify(brandPresetId));
    t.is(r.body.message, 'Brand preset not found for this organization');
  }
  t.is((await render(key, { id: 'x\u0000', target: 0 })).status, 404, 'a malformed job id');

  const nulls = await render(key, { id: jobId, target: '1', type: null, brandPresetId: null, preset: null, size: null, options: null });
  t.is(nulls.status, 201, JSON.stringify(nulls.body));
  const s = await spec(nulls.body.renderId);
  t.like(s, { shortId: 1, captionPreset: 'DEFAULT', output: { width: 720, height: 1280 } });

  const mistyped = await render(key, { id: 42, target: true });
  t.is(mistyped.status, 400);
  t.regex(mistyped.body.message, /id must be a string/);
  t.regex(mistyped.body.message, /target must be the short id or index/);
  t.regex(
    (await render(key, {})).body.message,
    /id \(a completed VideoShorts job id\) is required.*target \(the short id or index\) is required/,
  );
});

test('preset precedence: brandPresetId, then preset, then the active default, then platform defaults; options win field by field', async (t) => {
  const { key, jobId } = await setup('business');
  const mk = async (body: object) => (await cluster.api('POST', '/api/organizations/brandings', { key, body })).body;
  const brand = await mk({
    name: 'Brand',
    preset: 'VIRAL',
    options: { maxWordsInPage: 2, style: [{ property: 'color', value: '#ff0000' }] },
    size: { width: 1080, height: 1080 },
  });
  const org = (await cluster.app.db.one<{ id: string }>('SELECT organization_id AS id FROM jobs WHERE id = $1', [jobId]))!.id;
  const [logoId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: org, name: 'logo.png', type: 'image', sizeBytes: 10, objectKey: `orgs/${org}/logo.png` }]),
  );
  const def = await mk({
    name: 'Default',
    preset: 'GRAPES',
    isDefault: true,
    options: { maxWordsInPage: 6, waterMark: { fileAppId: logoId, left: '10px' } },
  });
  t.truthy(brand.id && def.id, JSON.stringify([brand, def]));

  const s1 = await spec((await render(key, { id: jobId, target: 0, brandPresetId: brand.id, preset: 'DEFAULT' })).body.renderId);
  t.is(s1.captionPreset, 'VIRAL', 'brandPresetId wins over preset');
  t.is(s1.options.maxWordsInPage, 2);
  t.deepEqual(s1.output, { width: 1080, height: 1080 }, 'the preset size is honoured on business');

  const s2 = await spec((await render(key, { id: jobId, target: 0, preset: 'DEFAULT' })).body.renderId);
  t.is(s2.captionPreset, 'DEFAULT', 'a sent preset beats the organization default');
  t.is(s2.options.waterMark, undefined);

  const s3 = await spec((await render(key, { id: jobId, target: 0, options: { maxWordsInPage: 3 } })).body.renderId);
  t.is(s3.captionPreset, 'GRAPES', 'the active default applies when nothing is named');
  t.is(s3.options.maxWordsInPage, 3, 'explicit options win');
  t.is(s3.options.waterMark?.fileAppId, logoId, 'the default supplies what the request omits');
  t.deepEqual(s3.watermark, { objectKey: `orgs/${org}/logo.png` });
  t.deepEqual(s3.output, { width: 720, height: 1280 });

  await cluster.api('PUT', `/api/organizations/brandings/${def.id}`, { key, body: { isActive: false } });
  const s4 = await spec((await render(key, { id: jobId, target: 0 })).body.renderId);
  t.is(s4.captionPreset, 'DEFAULT', 'an inactive default is not applied: platform defaults');
  t.is(s4.options.maxWordsInPage, 4);

  const inactive = await render(key, { id: jobId, target: 0, brandPresetId: def.id });
  t.is(inactive.status, 400);
  t.is(inactive.body.message, 'Selected brand preset is inactive');
  const unknown = await render(key, { id: jobId, target: 0, brandPresetId: 'nope' });
  t.is(unknown.status, 404);
  t.is(unknown.body.message, 'Brand preset not found for this organization');
  const foreign = await setup('business');
  const theirs = (await cluster.api('POST', '/api/organizations/brandings', { key: foreign.key, body: { name: 'theirs' } })).body;
  t.is((await render(key, { id: jobId, target: 0, brandPresetId: theirs.id })).status, 404);
});

test('plan rules for size: free and starter only 720x1280; pro short side 1080 / long 1920, business 2160 / 3840, even sides', async (t) => {
  for (const plan of ['free', 'starter']) {
    const { key, jobId } = await setup(plan);
    t.is((await render(key, { id: jobId, target: 0, size: { width: 720, height: 1280 } })).status, 201);
    const r = await render(key, { id: jobId, target: 0, size: { width: 1080, height: 1920 } });
    t.is(r.status, 403, plan);
    t.regex(r.body.message, /720x1280/);
  }
  const pro = await setup('pro');
  const proSize = async (width: number, height: number) =>
    (await render(pro.key, { id: pro.jobId, target: 0, size: { width, height } })).status;
  // DECISIONS.md: 1080x1920, 1920x1080 and 1080x1080 are pro sizes.
  t.is(await proSize(1080, 1920), 201, 'the standard short size');
  t.is(await proSize(1920, 1080), 201, 'landscape');
  t.is(await proSize(1080, 1080), 201, 'square');
  t.is(await proSize(720, 1280), 201, "the default format is every plan's");
  const tooBig = await render(pro.key, { id: pro.jobId, target: 0, size: { width: 1082, height: 1920 } });
  t.is(tooBig.status, 403, 'a short side beyond 1080 is not allowed on pro');
  t.regex(tooBig.body.message, /1080x1920/);
  t.is(await proSize(1080, 1922), 403, 'a long side beyond 1920');
  t.is(await proSize(1200, 1200), 403, 'a square beyond 1080');
  t.is(await proSize(721, 1280), 400);
  const business = await setup('business');
  const businessSize = async (width: number, height: number) =>
    (await render(business.key, { id: business.jobId, target: 0, size: { width, height } })).status;
  t.is(await businessSize(2160, 3840), 201);
  t.is(await businessSize(3840, 2160), 201);
  t.is(await businessSize(2160, 2160), 201);
  t.is(await businessSize(2162, 3840), 403);
  t.is(await businessSize(2160, 3842), 403);
  t.is(await businessSize(4000, 1000), 403);
});

test("a default preset's size is not honoured on free plans", (t) => {
  const resolved = resolveRender({
    body: { id: 'j', target: 0 },
    plan: 'free',
    explicitPreset: undefined,
    defaultPreset: { id: 'p', preset: 'VIRAL', size: { width: 1080, height: 1080 }, options: {}, isActive: true },
  });
  t.deepEqual(resolved.size, { width: 720, height: 1280, name: '9:16' });
  t.is(resolved.captionPreset, 'VIRAL');
});

test.serial("queue positions count every organization's renders ahead, 1 for the next to start", async (t) => {
  await cluster.app.db.query(`UPDATE tasks SET state = 'cancelled' WHERE type = 'render-short' AND state = 'queued'`);
  const a = await setup();
  const b = await setup();
  const ids: string[] = [];
  for (const who of [a, b, a]) ids.push((await render(who.key, { id: who.jobId, target: 0 })).body.renderId);
  const positions = [];
  for (const [i, id] of ids.entries())
    positions.push((await cluster.api('GET', `/api/render/${id}`, { key: (i === 1 ? b : a).key })).body.queuePosition);
  t.deepEqual(positions, [1, 2, 3]);
  t.is((await cluster.api('GET', `/api/render/${ids[0]}`, { key: b.key })).status, 404, "another organization's render is missing");
});

test("a job's renders are listed after the fact, newest first, per short on request; another organization sees 404", async (t) => {
  const { key, jobId } = await setup();
  const first = (await render(key, { id: jobId, target: 0, preset: 'VIRAL' })).body.renderId;
  const second = (await render(key, { id: jobId, target: 1, size: { width: 1080, height: 1920 } })).body.renderId;
  const list = await cluster.api('GET', `/api/jobs/${jobId}/renders`, { key });
  t.is(list.status, 200, JSON.stringify(list.body));
  t.deepEqual(
    list.body.data.map((r: { renderId: string; shortId: number }) => [r.renderId, r.shortId]),
    [
      [second, 1],
      [first, 0],
    ],
  );
  t.like(list.body.data[0], { output: { width: 1080, height: 1920 }, type: 'queued', status: 'QUEUED', progress: 0 });
  t.like(list.body.data[1], { captionPreset: 'VIRAL' });
  t.false(Number.isNaN(Date.parse(list.body.data[0].createdAt)));
  const ofShort = await cluster.api('GET', `/api/jobs/${jobId}/renders?shortId=0`, { key });
  t.deepEqual(
    ofShort.body.data.map((r: { renderId: string }) => r.renderId),
    [first],
  );
  t.is((await cluster.api('GET', `/api/jobs/${jobId}/renders?shortId=-1`, { key })).status, 400);

  const other = await cluster.org();
  t.is((await cluster.api('GET', `/api/jobs/${jobId}/renders`, { key: other.key })).status, 404);
  t.is((await cluster.api('GET', `/api/jobs/nope/renders`, { key })).status, 404);
});

test('a watermark URL is checked at creation as a brand preset does: a video there is a 400 naming the watermark, and no render is made', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'renders-api-wm-'));
  // A video over the 10 MB watermark limit (incompressible noise), a small one, and a real image.
  const large = await makeTestVideo(path.join(dir, 'large.mp4'), { seconds: 12, width: 640, height: 360, pattern: 'testsrc2' });
  await writeFile(large, Buffer.concat([await readFile(large), randomBytes(11_000_000)]));
  const small = await makeTestVideo(path.join(dir, 'small.mp4'));
  const png = path.join(dir, 'logo.png');
  await execFileAsync(FFMPEG, ['-y', '-loglevel', 'error', '-f', 'lavfi', '-i', 'color=red:s=64x64', '-frames:v', '1', png]);
  const media = await serveFiles({ 'large.mp4': large, 'small.mp4': small, 'logo.png': png });
  try {
    const { org, key, jobId } = await setup();
    const renders = async () => (await cluster.app.db.query('SELECT 1 FROM renders WHERE organization_id = $1', [org.id])).length;
    for (const [file, message] of [
      ['large.mp4', /^Watermark import refused \(too large\): the image is larger than 10 MB$/],
      ['small.mp4', /^Watermark import refused \(unsupported format\)/],
    ] as const) {
      const r = await render(key, { id: jobId, target: 0, options: { waterMark: { waterMarkUrl: media.url(file) } } });
      t.is(r.status, 400, file);
      t.is(r.body.error, 'Bad Request');
      t.regex(r.body.message, message, file);
    }
    t.is(await renders(), 0, 'a refused render leaves nothing behind');
    const ok = await render(key, { id: jobId, target: 0, options: { waterMark: { waterMarkUrl: media.url('logo.png') } } });
    t.is(ok.status, 201, JSON.stringify(ok.body));
    t.deepEqual((await spec(ok.body.renderId)).watermark, { url: media.url('logo.png') });
  } finally {
    await media.close();
    await rm(dir, { recursive: true, force: true });
  }
});
