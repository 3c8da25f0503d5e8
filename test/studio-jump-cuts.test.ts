import test from 'ava';
import path from 'node:path';
import { startCluster, waitFor, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { launchChromium } from './helpers/browser.js';
import { needing } from './helpers/requirements.js';
import { makeSpeech, speechVideo } from './helpers/speech.js';
import { fliteAvailable } from './transcribe-synth.js';
import { planJumpCuts } from '@shorts/common/render/jump-cuts';
import { buildStudio, CHROMIUM_TOOL, signInToJobPage, studioUser } from './helpers/studio.js';

// The studio's jump cuts in a real browser: the render dialog's two switches, the removed ranges on
// the short's timeline, playback that skips them, and a render whose length says they were cut.

let cluster: TestCluster;
let chromium: Awaited<ReturnType<typeof launchChromium>>;
const TOOLS = { ...CHROMIUM_TOOL, flite: fliteAvailable() };

test.before(async () => {
  if (!Object.values(TOOLS).every(Boolean)) return;
  buildStudio();
  cluster = await startCluster('studio_jump_cuts');
  await cluster.startAgent();
  chromium = await launchChromium();
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
});

needing({ tools: TOOLS })(
  'the render dialog cuts silences and fillers: the timeline shows them, playback skips them, the render is shorter',
  async (t) => {
    const sp = await makeSpeech(path.join(cluster.dataDir, 'talk'), ['so', 'today', 1.5, 'um', 'we', 'talk', 2.0, 'about', 'cuts']);
    const source = await speechVideo(sp.wav, path.join(cluster.dataDir, 'talk.mp4'), sp.durationSec);
    const { org } = await cluster.org({ plan: 'pro', credits: 10, name: 'Cuts Org' });
    await studioUser(cluster, org.id, 'cuts@studio.test');
    const jobId = await insertCompletedJob(cluster.app, {
      organizationId: org.id,
      sourcePath: source,
      words: sp.words,
      width: 640,
      height: 360,
      fps: 25,
      shorts: [{ startTime: 0, endTime: sp.durationSec, title: 'Thinking aloud' }],
    });

    const base = cluster.app.httpUrl;
    const { page, pageErrors } = await signInToJobPage(chromium, base, 'cuts@studio.test', jobId, { ready: 'h2 >> text=Shorts' });
    await page.waitForFunction(
      () => (document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement)?.readyState >= 2,
      undefined,
      { timeout: 30_000 },
    );

    t.is(await page.locator('[data-testid="jump-cut"]').count(), 0, 'nothing marked before a switch is on');
    await page.check('text=Remove silences');
    await page.check('text=Remove filler words');
    // The marks are the render's plan: on the source's 25 fps frames (at 30 fps they would differ).
    const editing = { removeSilences: true, removeFillers: true };
    const plan = planJumpCuts({ start: 0, end: sp.durationSec, words: sp.words, editing, fps: 25 });
    t.true(plan.cuts.length >= 2);
    // Waited for until they equal the plan, not until their count does: with only silences on, the
    // filler 'um' is not yet merged into the pause's cut and the count is the same.
    const ranges = (p: typeof plan) => p.cuts.map((c) => [Number(c.start.toFixed(3)), Number(c.end.toFixed(3))]);
    const marksOnPage = () =>
      page
        .locator('[data-testid="jump-cut"]')
        .evaluateAll((els) => els.map((e) => [Number(e.getAttribute('data-start')), Number(e.getAttribute('data-end'))]));
    const marks = await waitFor(
      async () => {
        const now = await marksOnPage();
        return JSON.stringify(now) === JSON.stringify(ranges(plan)) ? now : undefined;
      },
      5000,
      'the cut marks of both switches',
    ).catch(async () => marksOnPage());
    t.deepEqual(marks, ranges(plan));
    t.notDeepEqual(ranges(planJumpCuts({ start: 0, end: sp.durationSec, words: sp.words, editing, fps: 30 })), ranges(plan));
    t.regex((await page.locator('[data-testid="jump-cut-summary"]').textContent())!, new RegExp(`${plan.removedSec.toFixed(1)} s`));

    // Playing from just before the long pause lands after it: the removed range is never played.
    const longest = [...plan.cuts].sort((a, b) => b.end - b.start - (a.end - a.start))[0]!;
    const seen = await page.evaluate(
      async ({ from, cut }) => {
        const v = document.querySelector('video[aria-label="Source video"]') as HTMLVideoElement;
        v.muted = true;
        v.currentTime = from;
        await new Promise((r) => v.addEventListener('seeked', r, { once: true }));
        const times: number[] = [];
        await v.play();
        const until = performance.now() + 1500;
        while (performance.now() < until) {
          times.push(v.currentTime);
          await new Promise((r) => requestAnimationFrame(r));
        }
        v.pause();
        return { inside: times.filter((x) => x > cut.start + 0.1 && x < cut.end - 0.1), last: times[times.length - 1]! };
      },
      { from: Math.max(0, longest.start - 0.3), cut: longest },
    );
    t.deepEqual(seen.inside, [], 'no time inside the removed range is played');
    t.true(seen.last > longest.end, `playback went on past the cut (at ${seen.last})`);

    // The render carries the switches: its length is the short less what was removed.
    await page.click('button.primary >> text=Render');
    await page.waitForSelector('[data-testid="render-status"] >> text=Rendered', { timeout: 180_000 });
    const rendered = (await page.locator('[data-testid="render-status"] .notice').textContent())!;
    const length = Number(/, ([\d.]+) s\)/.exec(rendered)?.[1]);
    t.true(
      Math.abs(length - (sp.durationSec - plan.removedSec)) < 0.15,
      `rendered ${rendered}, planned ${sp.durationSec - plan.removedSec}`,
    );
    t.deepEqual(pageErrors, []);
  },
);
