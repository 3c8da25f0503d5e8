import test from 'ava';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { launchChromium, type Page } from './helpers/browser.js';
import { makeTestVideo } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { insertFiles } from '../coordinator/src/files/files.js';
import type { Word } from '@shorts/common/text/transcript';
import { titleFromTranscript } from '@shorts/common/text/title';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { ShortDetections } from '@shorts/common/reframe/types';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, studioUser } from './helpers/studio.js';

// The render history beside a short: each render says its preset, size, jump cuts on or off, layout,
// duration and date, and downloads as "<short title> – <preset> – <size>.mp4". The title field says
// whether the title is made from the transcript or typed.

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
const TOOLS = CHROMIUM_TOOL;
const WORDS: Word[] = ['We', 'counted', 'forty', 'cats', 'in', 'the', 'house.'].map((text, i) => ({
  text,
  start: 0.5 + i * 0.4,
  end: 0.8 + i * 0.4,
}));
const TITLE = titleFromTranscript(WORDS, 0, WORDS.length - 1);

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  buildStudio();
  cluster = await startCluster('studio_history');
  chromium = await launchChromium();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

/** A framed short (one face, the whole time): its crop path's layout is `single`. */
function framedShort() {
  const times = Array.from({ length: 30 }, (_, i) => i / 10);
  const detections: ShortDetections = {
    version: 1,
    sourceWidth: 640,
    sourceHeight: 360,
    start: 0,
    end: 3.3,
    sampleFps: 10,
    speech: [{ start: 0.5, end: 3.2 }],
    tracks: [
      { id: 1, samples: times.map((time) => ({ time, box: { x: 280, y: 100, width: 70, height: 85 }, score: 0.95, mouthActivity: 0.3 })) },
    ],
    turns: [{ start: 0.5, end: 3.2, trackId: 1 }],
  };
  const output = { width: 1080, height: 1920 };
  return {
    reframe: planReframe(detections, DEFAULT_DIRECTOR, output),
    detections,
    reframePlan: { director: { ...DEFAULT_DIRECTOR }, output },
  };
}

/** Marks a queued render done, as an agent's result would: its MP4 a file of the organization. */
async function finish(orgId: string, jobId: string, renderId: string, lengthSec: number): Promise<void> {
  const key = `orgs/${orgId}/renders/${renderId}.mp4`;
  const { size } = await cluster.app.store.put(key, Buffer.from('not really an mp4'));
  const [fileId] = await cluster.app.db.tx((c) =>
    insertFiles(c, [{ organizationId: orgId, jobId, name: `${renderId}.mp4`, type: 'video', sizeBytes: size, objectKey: key, lengthSec }]),
  );
  await cluster.app.db.query(`UPDATE renders SET status = 'done', progress = 1, file_id = $2, size_bytes = $3 WHERE id = $1`, [
    renderId,
    fileId,
    size,
  ]);
}

const text = async (page: Page, item: string, id: string) => (await page.locator(`${item} [data-testid="${id}"]`).textContent())!.trim();

needing({ tools: TOOLS }).serial(
  'each render in the history says preset, size, jump cuts, layout, duration and date, and downloads as title – preset – size',
  async (t) => {
    const source = path.join(cluster.dataDir, 'history.mp4');
    await makeTestVideo(source, { seconds: 4, width: 640, height: 360, gop: 5 });
    const { org, key } = await cluster.org({ plan: 'business', credits: 10 });
    await studioUser(cluster, org.id, 'history@studio.test');
    const preset = await cluster.api('POST', '/api/organizations/brandings', { key, body: { name: 'Channel look', preset: 'DEFAULT' } });
    t.is(preset.status, 200, JSON.stringify(preset.body));
    const framed = framedShort();
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      words: WORDS,
      shorts: [{ startTime: 0, endTime: 3.3, title: TITLE, startId: 0, endId: WORDS.length - 1, ...framed }],
      reframePlan: framed.reframePlan,
    });
    // Two renders: a square one with the brand preset and filler words cut, done; a plain one, queued.
    const first = await cluster.api('POST', '/api/render', {
      key,
      body: {
        id: jobId,
        target: 0,
        brandPresetId: preset.body.id,
        size: { width: 1080, height: 1080 },
        options: { editing: { removeFillers: true } },
      },
    });
    t.is(first.status, 201, JSON.stringify(first.body));
    await finish(org.id, jobId, first.body.renderId, 2.9);
    const second = await cluster.api('POST', '/api/render', { key, body: { id: jobId, target: 0, preset: 'HORMOZI' } });
    t.is(second.status, 201, JSON.stringify(second.body));

    const { page, pageErrors } = await signInToJobPage(chromium, cluster.app.httpUrl, 'history@studio.test', jobId, {
      ready: '[data-testid="short-render"]',
      viewport: { width: 1366, height: 1400 },
    });
    const done = `[data-testid="short-render"][data-render-id="${first.body.renderId}"]`;
    const queued = `[data-testid="short-render"][data-render-id="${second.body.renderId}"]`;
    await page.waitForSelector(`${done}[data-state="done"]`);
    t.is(await text(page, done, 'render-preset'), 'Channel look');
    t.is(await text(page, done, 'render-size'), '1080x1080');
    t.is(await text(page, done, 'render-jump-cuts'), 'jump cuts on (filler words)');
    t.is(await text(page, done, 'render-layout'), 'layout single');
    t.is(await text(page, done, 'render-duration'), '0:02.9', "a done render's own length");
    const date = await page.getAttribute(`${done} [data-testid="render-date"]`, 'datetime');
    t.true(Math.abs(Date.parse(date!) - Date.now()) < 120_000, `date ${date}`);
    t.is(await page.getAttribute(`${done} [data-testid="render-download"]`, 'download'), `${TITLE} – Channel look – 1080x1080.mp4`);

    t.is(await text(page, queued, 'render-preset'), 'HORMOZI');
    t.is(await text(page, queued, 'render-size'), '720x1280');
    t.is(await text(page, queued, 'render-jump-cuts'), 'jump cuts off');
    t.is(await text(page, queued, 'render-duration'), '0:03.3', "a queued render: the short's seconds");

    // The title field says where the title came from; a typed one is the user's.
    const source_ = page.locator('[data-testid="title-source"]');
    t.regex((await source_.textContent())!, /from the transcript/);
    t.is(await source_.getAttribute('data-source'), 'transcript');
    await page.fill('#adj-title', 'Cats, counted');
    await page.click('button:has-text("Save short")');
    await waitFor(async () => ((await source_.getAttribute('data-source')) === 'user' ? true : undefined), 15_000, 'your title');
    t.regex((await source_.textContent())!, /your title/);
    t.deepEqual(pageErrors, []);
    await page.close();
  },
);
