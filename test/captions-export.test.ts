import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Word } from '@shorts/common/text/transcript';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { FakeAgent } from './helpers/fake-agent.js';
import { agentTools } from './helpers/media.js';
import { launchChromium } from './helpers/browser.js';
import { needing } from './helpers/requirements.js';
import { buildStudio, CHROMIUM_TOOL, signInToNewJob, type Chromium } from './helpers/studio.js';

// Caption files (GET /api/jobs/:jobId/shorts/:shortId/captions.srt|.vtt|.json and
// /api/render/:renderId/captions.…): read back by ffmpeg, each cue within 40 ms of its words in the
// stored transcript on the short's clock, re-timed for jump cuts worked out here by hand (a long
// pause cut down to keepSec, a filler taken out), corrected words, ownership, a render's own words.

const run = promisify(execFile);
const TOLERANCE_SEC = 0.04;

let cluster: TestCluster;
let dir: string;
let chromium: Chromium | undefined;
test.before(async () => {
  cluster = await startCluster('captions_export');
  dir = await mkdtemp(path.join(os.tmpdir(), 'captions-export-'));
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// The short runs 10-18 s of the source. A 2.95 s pause after "fax" and a filler "um"; the times sit
// on the 25 fps frames the render's cuts snap to, so the cut lengths below are exact.
const SHORT = { startTime: 10, endTime: 18 };
const FPS = 25;
const WORDS: Word[] = [
  { text: 'before', start: 9.2, end: 9.6 },
  { text: 'the', start: 10.5, end: 10.7 },
  { text: 'quick', start: 10.7, end: 11.1 },
  { text: 'brown', start: 11.1, end: 11.5 },
  { text: 'fax', start: 11.5, end: 11.925 },
  { text: 'jumps', start: 14.875, end: 15.3 },
  { text: 'over', start: 15.4, end: 15.7 },
  { text: 'um', start: 15.8, end: 16.12 },
  { text: 'the', start: 16.2, end: 16.4 },
  { text: 'lazy', start: 16.4, end: 16.8 },
  { text: 'dog.', start: 16.8, end: 17.3 },
  { text: 'after', start: 18.4, end: 18.8 },
];
const inShort = WORDS.filter((w) => w.end > SHORT.startTime && w.start < SHORT.endTime);
/** Jump cuts by hand: the pause after "fax" keeps 0.15 s (keepSec), the filler goes whole. */
const PAUSE_CUT = 14.875 - 11.925 - 0.15;
const FILLER_CUT = 16.12 - 15.8;
const editedStart = (w: Word) => w.start - SHORT.startTime - (w.start >= 14.875 ? PAUSE_CUT : 0) - (w.start >= 16.12 ? FILLER_CUT : 0);

interface Cue {
  start: number;
  end: number;
  text: string;
}

const seconds = (ts: string) => {
  const [h, m, s] = ts.replace(',', '.').split(':');
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
};

/** Cues as ffmpeg reads the file: converted to SRT by ffmpeg, then parsed. */
async function ffmpegCues(t: ExecutionContext, text: string, ext: 'srt' | 'vtt'): Promise<Cue[]> {
  const file = path.join(dir, `${t.title.replace(/\W+/g, '-').slice(0, 40)}-${Math.random().toString(36).slice(2)}.${ext}`);
  await writeFile(file, text);
  const { stdout } = await run(agentTools().ffmpegPath, ['-v', 'error', '-i', file, '-f', 'srt', '-']);
  return stdout
    .replace(/\r/g, '')
    .trim()
    .split(/\n\s*\n/)
    .map((block) => {
      const lines = block.split('\n');
      const [from, to] = lines[1]!.split(' --> ');
      return { start: seconds(from!), end: seconds(to!), text: lines.slice(2).join(' ') };
    });
}

/** Every word of a WebVTT file with the time it is shown from: its cue's start, or its own cue timestamp. */
function vttWordTimes(vtt: string): Array<{ text: string; start: number }> {
  const out: Array<{ text: string; start: number }> = [];
  for (const block of vtt.split(/\n\s*\n/).slice(1)) {
    const lines = block.trim().split('\n');
    const timing = lines.findIndex((l) => l.includes('-->'));
    let at = seconds(lines[timing]!.split(' --> ')[0]!);
    for (const token of lines
      .slice(timing + 1)
      .join(' ')
      .split(' ')) {
      const m = /^(?:<([\d:.]+)>)?(.+)$/.exec(token)!;
      if (m[1]) at = seconds(m[1]);
      out.push({ text: m[2]!, start: at });
    }
  }
  return out;
}

async function fixture(organizationId: string): Promise<string> {
  return insertCompletedJob(cluster.app, { organizationId, words: WORDS, fps: FPS, durationSec: 30, shorts: [SHORT] });
}

test('SRT and WebVTT of a short: ffmpeg reads them back, every word shown within 40 ms of its transcript time', async (t) => {
  const { org, key } = await cluster.org();
  const id = await fixture(org.id);

  const srt = await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.srt`, { key });
  t.is(srt.status, 200, String(srt.body));
  t.regex(srt.headers.get('content-type')!, /^application\/x-subrip/);
  t.regex(srt.headers.get('content-disposition')!, /^attachment; filename="fixture-short-0\.srt"$/);
  const srtCues = await ffmpegCues(t, srt.body as string, 'srt');
  // Pages of at most 4 words (the platform default), a new one after the pause and the full stop.
  t.deepEqual(
    srtCues.map((c) => c.text),
    ['the quick brown fax', 'jumps over um the', 'lazy dog.'],
  );
  const firsts = [inShort[0]!, inShort[4]!, inShort[8]!];
  srtCues.forEach((c, i) => t.true(Math.abs(c.start - (firsts[i]!.start - SHORT.startTime)) <= TOLERANCE_SEC, `cue ${i} at ${c.start}`));
  t.false((srt.body as string).includes('before') || (srt.body as string).includes('after'), 'words outside the short are not captioned');

  const vtt = await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.vtt`, { key });
  t.is(vtt.status, 200);
  t.regex(vtt.headers.get('content-type')!, /^text\/vtt/);
  t.regex(vtt.headers.get('content-disposition')!, /filename="fixture-short-0\.vtt"/);
  const vttCues = await ffmpegCues(t, vtt.body as string, 'vtt');
  t.deepEqual(
    vttCues.map((c) => [c.text, c.start, c.end]),
    srtCues.map((c) => [c.text, c.start, c.end]),
    'ffmpeg reads the same cues from both files',
  );
  const timed = vttWordTimes(vtt.body as string);
  t.deepEqual(
    timed.map((w) => w.text),
    inShort.map((w) => w.text),
  );
  timed.forEach((w, i) =>
    t.true(Math.abs(w.start - (inShort[i]!.start - SHORT.startTime)) <= TOLERANCE_SEC, `${w.text} at ${w.start} (cue timestamp)`),
  );
  t.true((vtt.body as string).includes('<00:00:00.700>quick'), 'word-level timing as a WebVTT cue timestamp');

  const json = await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.json`, { key });
  t.is(json.status, 200);
  t.regex(json.headers.get('content-type')!, /^application\/json/);
  t.is(json.body.clock, 'short');
  t.deepEqual(
    json.body.words.map((w: Word) => [w.text, w.start, w.end]),
    inShort.map((w) => [w.text, +(w.start - SHORT.startTime).toFixed(3), +(w.end - SHORT.startTime).toFixed(3)]),
  );
  t.deepEqual(
    json.body.cues.map((c: { words: number[] }) => c.words),
    [
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ],
  );
});

test('jump cuts: cues shifted by the removed durations, the filler gone (SRT through ffmpeg, JSON word by word)', async (t) => {
  const { org, key } = await cluster.org();
  const id = await fixture(org.id);
  const query = 'removeSilences=true&removeFillers=true&maxWordsInPage=1';
  const kept = inShort.filter((w) => w.text !== 'um');

  const srt = await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.srt?${query}`, { key });
  t.is(srt.status, 200, String(srt.body));
  const cues = await ffmpegCues(t, srt.body as string, 'srt');
  t.deepEqual(
    cues.map((c) => c.text),
    kept.map((w) => w.text),
    'one word a cue, the filler absent',
  );
  cues.forEach((c, i) =>
    t.true(Math.abs(c.start - editedStart(kept[i]!)) <= TOLERANCE_SEC, `${c.text} at ${c.start}, expected ${editedStart(kept[i]!)}`),
  );
  // Without the cuts, "jumps" would be at 4.875 s of the short.
  t.true(cues[4]!.start < 2.2);

  const json = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.json?${query}`, { key })).body;
  json.words.forEach((w: Word, i: number) => t.true(Math.abs(w.start - editedStart(kept[i]!)) <= TOLERANCE_SEC, `${w.text} at ${w.start}`));
  t.deepEqual(
    json.jumpCuts.map((c: { reason: string }) => c.reason),
    ['silence', 'filler', 'silence'],
    'the pause, the filler and the quiet tail after the last word',
  );
  t.true(Math.abs(json.durationSec - (SHORT.endTime - SHORT.startTime - PAUSE_CUT - FILLER_CUT - (18 - 17.3 - 0.15))) <= TOLERANCE_SEC);

  // Explicitly off: the short's own clock uncut.
  const plain = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.json?removeSilences=false&removeFillers=false`, { key })).body;
  t.deepEqual(plain.jumpCuts, []);
  t.is(plain.words.find((w: Word) => w.text === 'jumps').start, 4.875);
});

test("the corrected words are captioned, at the corrected words' times", async (t) => {
  const { org, key } = await cluster.org();
  const id = await fixture(org.id);
  const patched = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: {
      revision: 0,
      edits: [
        { op: 'replace', index: 4, text: 'fox' },
        { op: 'split', index: 9, texts: ['la', 'zy'] },
      ],
    },
  });
  t.is(patched.status, 200, JSON.stringify(patched.body));
  const srt = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.srt?maxWordsInPage=1`, { key })).body as string;
  const cues = await ffmpegCues(t, srt, 'srt');
  t.true(
    cues.some((c) => c.text === 'fox'),
    srt,
  );
  t.false(cues.some((c) => c.text === 'fax'));
  const zy = cues.find((c) => c.text === 'zy')!;
  t.true(Math.abs(zy.start - (16.6 - SHORT.startTime)) <= TOLERANCE_SEC, 'a split word part starts where the edit put it');
});

test("a render's captions: the words, page size and jump cuts it was asked with, then the cuts it made; another organization's are 404", async (t) => {
  const { org, key } = await cluster.org();
  const id = await fixture(org.id);
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id, target: 0, options: { maxWordsInPage: 2, editing: { removeSilences: true, removeFillers: true } } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const renderId = created.body.renderId as string;
  // Words corrected after the render was asked do not change what it burns in.
  const patched = await cluster.api('PATCH', `/api/jobs/${id}/transcription`, {
    key,
    body: { revision: 0, edits: [{ op: 'replace', index: 9, text: 'sleepy' }] },
  });
  t.is(patched.status, 200);

  const vtt = await cluster.api('GET', `/api/render/${renderId}/captions.vtt`, { key });
  t.is(vtt.status, 200, String(vtt.body));
  t.regex(vtt.headers.get('content-disposition')!, new RegExp(`filename="render-${renderId}\\.vtt"`));
  const cues = await ffmpegCues(t, vtt.body as string, 'vtt');
  t.deepEqual(
    cues.map((c) => c.text),
    ['the quick', 'brown fax', 'jumps over', 'the lazy', 'dog.'],
  );
  const kept = inShort.filter((w) => w.text !== 'um');
  const timed = vttWordTimes(vtt.body as string);
  t.deepEqual(
    timed.map((w) => w.text),
    kept.map((w) => w.text),
  );
  timed.forEach((w, i) => t.true(Math.abs(w.start - editedStart(kept[i]!)) <= TOLERANCE_SEC, `${w.text} at ${w.start}`));

  const json = await cluster.api('GET', `/api/render/${renderId}/captions.json`, { key });
  t.is(json.body.renderId, renderId);
  t.is(json.body.maxWordsInPage, 2);
  const srt = await cluster.api('GET', `/api/render/${renderId}/captions.srt`, { key });
  t.deepEqual(
    (await ffmpegCues(t, srt.body as string, 'srt')).map((c) => [c.text, c.start]),
    cues.map((c) => [c.text, c.start]),
  );
  // Once done, the cuts its agent reports it made win: here it heard voice in the pause (as it does
  // when analysis stored no voice activity) and kept 0.4 s more of it than the words alone would.
  const agent = await new FakeAgent(cluster.app.grpcAddress, undefined, 'captions').register(['render-short']);
  try {
    const task = await agent.lease(3000);
    t.is(task?.type, 'render-short');
    const upload = async (name: string) => {
      const url = await agent.uploadUrl(task!, name);
      const put = await fetch(url.url, {
        method: 'PUT',
        body: new Uint8Array(100),
        headers: { 'content-type': 'application/octet-stream' },
      });
      t.is(put.status, 201);
      return url.object_key;
    };
    const made = {
      keep: [
        { start: 10, end: 12.4 },
        { start: 14.8, end: 15.8 },
        { start: 16.12, end: 17.44 },
      ],
      cuts: [
        { start: 12.4, end: 14.8, reason: 'silence' },
        { start: 15.8, end: 16.12, reason: 'filler' },
        { start: 17.44, end: 18, reason: 'silence' },
      ],
      removedSec: 3.28,
      fillerWords: [{ text: 'um', start: 15.8, end: 16.12 }],
    };
    await agent.complete(task!.task_id, task!.lease_token, {
      objectKey: await upload('render.mp4'),
      sizeBytes: 100,
      contentType: 'video/mp4',
      durationSec: 4.72,
      thumbnailKey: await upload('render.jpg'),
      jumpCuts: made,
    });
  } finally {
    agent.close();
  }
  t.is((await cluster.api('GET', `/api/render/${renderId}`, { key })).body.type, 'done');
  const done = (await cluster.api('GET', `/api/render/${renderId}/captions.json`, { key })).body;
  t.deepEqual(
    done.jumpCuts.map((c: { start: number }) => c.start),
    [12.4, 15.8, 17.44],
  );
  const jumps = done.words.find((w: Word) => w.text === 'jumps');
  t.true(Math.abs(jumps.start - (14.875 - SHORT.startTime - 2.4)) <= TOLERANCE_SEC, `jumps at ${jumps.start}`);
  t.false(done.words.some((w: Word) => w.text === 'um'));
  t.true(Math.abs(done.durationSec - 4.72) <= TOLERANCE_SEC);

  // The short's own captions follow the correction.
  const short = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.srt`, { key })).body as string;
  t.true(short.includes('sleepy'));

  const other = await cluster.org();
  for (const url of [
    `/api/render/${renderId}/captions.srt`,
    `/api/render/${renderId}/captions.json`,
    `/api/jobs/${id}/shorts/0/captions.vtt`,
    `/api/jobs/${id}/shorts/0/captions.json`,
  ]) {
    const res = await cluster.api('GET', url, { key: other.key });
    t.is(res.status, 404, url);
    t.is(typeof res.body.message, 'string');
  }
  t.is((await cluster.api('GET', `/api/jobs/${id}/shorts/7/captions.srt`, { key })).status, 404, 'no such short');
  t.is((await cluster.api('GET', `/api/render/not-a-render/captions.srt`, { key })).status, 404);
  t.is((await cluster.api('GET', `/api/render/${renderId}/captions.srt`)).status, 401);
});

test('a cue longer than 42 characters is two balanced lines, which ffmpeg reads as one cue', async (t) => {
  const { org, key } = await cluster.org();
  const words = ['running', 'through', 'thirty', 'cameras', 'without', 'missing', 'anybody', 'talking', 'quietly', 'outside'].map(
    (text, i) => ({ text, start: 1 + i * 0.4, end: 1.35 + i * 0.4 }),
  );
  const id = await insertCompletedJob(cluster.app, { organizationId: org.id, words, shorts: [{ startTime: 0, endTime: 6 }] });
  const srt = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.srt?maxWordsInPage=10`, { key })).body as string;
  const lines = srt.trim().split('\n').slice(2);
  t.deepEqual(lines, ['running through thirty cameras without', 'missing anybody talking quietly outside']);
  const cues = await ffmpegCues(t, srt, 'srt');
  t.is(cues.length, 1);
  t.is(cues[0]!.text, words.map((w) => w.text).join(' '));
  const vtt = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.vtt?maxWordsInPage=10`, { key })).body as string;
  t.is(vttWordTimes(vtt).length, 10);
  t.is(vtt.trim().split('\n').length, 6, 'header, blank line, number, timing and two lines');
});

test('the OpenAPI document names the six caption routes with their media types', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  for (const [base, ext, type] of [
    ['/api/jobs/{jobId}/shorts/{shortId}', 'srt', 'application/x-subrip'],
    ['/api/jobs/{jobId}/shorts/{shortId}', 'vtt', 'text/vtt'],
    ['/api/jobs/{jobId}/shorts/{shortId}', 'json', 'application/json'],
    ['/api/render/{renderId}', 'srt', 'application/x-subrip'],
    ['/api/render/{renderId}', 'vtt', 'text/vtt'],
    ['/api/render/{renderId}', 'json', 'application/json'],
  ] as const) {
    const op = doc.paths[`${base}/captions.${ext}`]?.get;
    t.truthy(op?.responses['200'].content[type].example, `${base}/captions.${ext}`);
  }
});

needing({ tools: CHROMIUM_TOOL })(
  "the studio's caption links beside a short download its files with the session, following the jump-cut switches",
  async (t) => {
    buildStudio();
    chromium = await launchChromium();
    const links = '[data-testid="caption-files"]';
    const { page, pageErrors, download } = await signInToNewJob(cluster, chromium, 'captions@studio.test', fixture, links);
    const srt = await download('Download the captions of “Short 0” as SRT');
    t.is(srt.name, 'fixture-short-0.srt');
    t.deepEqual(
      (await ffmpegCues(t, srt.text, 'srt')).map((c) => c.text),
      ['the quick brown fax', 'jumps over um the', 'lazy dog.'],
    );
    const vtt = await download('Download the captions of “Short 0” as VTT');
    t.is(vtt.name, 'fixture-short-0.vtt');
    t.true(vtt.text.startsWith('WEBVTT'));
    const json = await download('Download the captions of “Short 0” as JSON');
    t.is(JSON.parse(json.text).words.length, inShort.length);

    // The render dialog's switch: the short's files lose the filler, as the render would.
    await page.check('text=Remove filler words');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="caption-files"] a')?.getAttribute('href')?.includes('removeFillers=true'),
    );
    const cut = await download('Download the captions of “Short 0” as SRT');
    t.notRegex(cut.text, /\bum\b/);
    t.regex(cut.text, /\bjumps over\b/);
    t.deepEqual(pageErrors, []);
  },
);
