import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { DOMParser, type Element } from '@xmldom/xmldom';
import type { Word } from '@shorts/common/text/transcript';
import type { Box, Reframe } from '@shorts/common/reframe/types';
import { startCluster, type TestCluster } from './helpers/cluster.js';
import { insertCompletedJob } from './helpers/completed-job.js';
import { agentTools } from './helpers/media.js';
import { storeFile } from '../coordinator/src/files/store-file.js';
import { buildReframeGraph } from '../node-agent/src/media/reframe-graph.js';
import { launchChromium } from './helpers/browser.js';
import { needing } from './helpers/requirements.js';
import { buildStudio, CHROMIUM_TOOL, signInToNewJob, type Chromium } from './helpers/studio.js';

// Editor timelines (GET /api/jobs/:jobId/shorts/:shortId/timeline.fcpxml|.otio|.edl and
// /api/render/:renderId/timeline.…): FCPXML well-formed (xmllint) and read back by a small reader
// (Apple's DTD ships only with Final Cut Pro, so it is not validated against it), OTIO read back by a
// reader that checks its schema names and versions, the EDL parsed; clip in/out points equal the
// short's kept ranges to the frame, the cues equal the caption files', and the crop transform at each
// keyframe equals the crop path stored with the short, in numbers and in pictures: the first frame of
// each clip drawn by ffmpeg from the exported scale and position is the service's window (PSNR ≥ 35 dB).

const run = promisify(execFile);
/** xmllint (libxml2-utils; scripts/system-tools.mjs): on the PATH. */
const XMLLINT = process.env.PATH!.split(path.delimiter).some((d) => existsSync(path.join(d, 'xmllint')));
const FPS = 25;
const SW = 640;
const SH = 360;
const W = 1080;
const H = 1920;

let cluster: TestCluster;
let dir: string;
let sourcePath: string;
let chromium: Chromium | undefined;
test.before(async () => {
  cluster = await startCluster('timeline_export');
  dir = await mkdtemp(path.join(os.tmpdir(), 'timeline-export-'));
  sourcePath = path.join(dir, 'source.mp4');
  // A moving test pattern: each frame differs, so a window one frame or a few pixels off shows.
  await run(agentTools().ffmpegPath, [
    ...['-v', 'error', '-f', 'lavfi', '-i', `testsrc2=s=${SW}x${SH}:r=${FPS}:d=20`],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', '-g', '25', '-pix_fmt', 'yuv420p', sourcePath],
  ]);
});
test.after.always(async () => {
  await chromium?.close();
  await cluster?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

// The short runs 10-18 s of the source (the caption export's words: a long pause after "fax", a filler).
const SHORT = { startTime: 10, endTime: 18 };
const WORDS: Word[] = [
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
];
// The crop path: a pan, a camera cut to a smaller window at 14 s, a pan, a jump of the window at 16.6 s.
const KEYS = [
  { time: 10, x: 40, y: 0, width: 202, height: 360 },
  { time: 12, x: 300, y: 0, width: 202, height: 360 },
  { time: 14, x: 300, y: 0, width: 202, height: 360 },
  { time: 14, x: 400, y: 30, width: 170, height: 302 },
  { time: 16, x: 200, y: 30, width: 170, height: 302 },
  { time: 16.6, x: 200, y: 30, width: 170, height: 302 },
  { time: 16.6, x: 60, y: 10, width: 170, height: 302 },
];
const REFRAME: Reframe = {
  sourceWidth: SW,
  sourceHeight: SH,
  keyframes: KEYS,
  segments: [{ start: 10, end: 18, layout: 'single', tracks: [0] }],
};

/** The stored path's window at a source time, worked out here: linear, the later keyframe at a step. */
function windowAt(t: number): Box {
  let i = 0;
  while (i + 1 < KEYS.length && KEYS[i + 1]!.time <= t + 1e-9) i++;
  const a = KEYS[i]!;
  const b = KEYS[i + 1];
  if (!b || b.time === a.time) return { x: a.x, y: a.y, width: a.width, height: a.height };
  const f = (t - a.time) / (b.time - a.time);
  return { x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f, width: a.width, height: a.height };
}

async function fixture(organizationId: string): Promise<string> {
  return insertCompletedJob(cluster.app, {
    organizationId,
    sourcePath,
    words: WORDS,
    fps: FPS,
    width: SW,
    height: SH,
    durationSec: 20,
    shorts: [{ ...SHORT, title: 'Fox', reframe: REFRAME }],
  });
}

// ---- readers ----------------------------------------------------------------------------------------

/** FCPXML rational seconds ("0s", "12s", "1001/30000s") in frames of FPS. */
const frames = (time: string) => {
  const m = /^(\d+)(?:\/(\d+))?s$/.exec(time);
  if (!m) throw new Error(`not a FCPXML time: ${time}`);
  const v = (Number(m[1]) / Number(m[2] ?? 1)) * FPS;
  if (Math.abs(v - Math.round(v)) > 1e-9) throw new Error(`${time} is not on a frame`);
  return Math.round(v);
};

interface FcpKey {
  frame: number;
  scale: [number, number];
  position: [number, number];
}
interface FcpClip {
  offset: number;
  start: number;
  duration: number;
  keys: FcpKey[];
  titles: Array<{ offset: number; duration: number; text: string }>;
}

/** The parts of an FCPXML 1.10 project this service writes, checked as it reads them. */
function readFcpxml(xml: string) {
  const doc = new DOMParser().parseFromString(xml, 'text/xml');
  const root = doc.documentElement!;
  if (root.tagName !== 'fcpxml') throw new Error('root is not fcpxml');
  const [major, minor] = root.getAttribute('version')!.split('.').map(Number);
  const children = (e: Element, name: string) => Array.from(e.childNodes).filter((n): n is Element => (n as Element).tagName === name);
  const one = (e: Element, name: string) => {
    const found = children(e, name);
    if (found.length !== 1) throw new Error(`${e.tagName} has ${found.length} ${name}`);
    return found[0]!;
  };
  const resources = one(root, 'resources');
  const byId = new Map(
    // The resources' element children (formats and assets), not the whitespace between them.
    Array.from(resources.children).map((n) => [n.getAttribute('id'), n]),
  );
  const sequence = one(one(one(one(root, 'library'), 'event'), 'project'), 'sequence');
  const format = byId.get(sequence.getAttribute('format'))!;
  const clips: FcpClip[] = children(one(sequence, 'spine'), 'asset-clip').map((c) => {
    const asset = byId.get(c.getAttribute('ref'))!;
    if (asset.tagName !== 'asset') throw new Error('asset-clip names no asset');
    if (one(c, 'adjust-conform').getAttribute('type') !== 'none') throw new Error('the source is conformed');
    const transform = one(c, 'adjust-transform');
    const pair = (s: string) => s.split(' ').map(Number) as [number, number];
    const params = new Map(children(transform, 'param').map((p) => [p.getAttribute('name'), p]));
    const animated = (name: string) =>
      params.has(name)
        ? children(one(params.get(name)!, 'keyframeAnimation'), 'keyframe').map((k) => ({
            frame: frames(k.getAttribute('time')!),
            value: pair(k.getAttribute('value')!),
          }))
        : null;
    const positions = animated('position');
    const scales = animated('scale');
    const start = frames(c.getAttribute('start')!);
    const keys: FcpKey[] = positions
      ? positions.map((p, i) => ({ frame: p.frame, position: p.value, scale: scales![i]!.value }))
      : [{ frame: start, position: pair(transform.getAttribute('position')!), scale: pair(transform.getAttribute('scale')!) }];
    return {
      offset: frames(c.getAttribute('offset')!),
      start,
      duration: frames(c.getAttribute('duration')!),
      keys,
      titles: children(c, 'title').map((title) => ({
        offset: frames(title.getAttribute('offset')!),
        duration: frames(title.getAttribute('duration')!),
        text: one(one(title, 'text'), 'text-style').textContent!,
      })),
    };
  });
  return { version: major! * 100 + minor!, format, sequence, clips, byId, notes: children(sequence, 'note').map((n) => n.textContent) };
}

const SCHEMAS = [
  'Timeline.1',
  'Stack.1',
  'Track.1',
  'Clip.1',
  'Clip.2',
  'Gap.1',
  'ExternalReference.1',
  'RationalTime.1',
  'TimeRange.1',
  'Marker.2',
  'Effect.1',
];
type Otio = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Every OTIO_SCHEMA in the file is one OTIO 0.15+ reads; the required fields of each are there. */
function checkOtio(node: unknown, seen = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => checkOtio(n, seen));
  else if (node && typeof node === 'object') {
    const o = node as Otio;
    if ('OTIO_SCHEMA' in o) {
      if (!SCHEMAS.includes(o.OTIO_SCHEMA)) throw new Error(`unknown schema ${o.OTIO_SCHEMA}`);
      seen.add(o.OTIO_SCHEMA);
      const need: Record<string, string[]> = {
        'Timeline.1': ['tracks', 'name', 'metadata'],
        'Stack.1': ['children', 'name'],
        'Track.1': ['children', 'kind', 'name'],
        'Clip.2': ['source_range', 'media_references', 'active_media_reference_key'],
        'Gap.1': ['source_range'],
        'ExternalReference.1': ['target_url', 'available_range'],
        'RationalTime.1': ['rate', 'value'],
        'TimeRange.1': ['start_time', 'duration'],
        'Marker.2': ['marked_range', 'name'],
      };
      for (const key of need[o.OTIO_SCHEMA] ?? []) if (!(key in o)) throw new Error(`${o.OTIO_SCHEMA} without ${key}`);
      if (o.OTIO_SCHEMA === 'RationalTime.1' && (typeof o.rate !== 'number' || typeof o.value !== 'number'))
        throw new Error('bad RationalTime');
    }
    Object.values(o).forEach((v) => checkOtio(v, seen));
  }
  return seen;
}
const rtFrames = (t: Otio) => t.value * (FPS / t.rate);

/** CMX3600 events: number, reel, channels, transition, source in/out, record in/out (frames at 25). */
function readEdl(edl: string) {
  const tc = (s: string) => {
    const [h, m, sec, f] = s.split(':').map(Number);
    return ((h! * 60 + m!) * 60 + sec!) * FPS + f!;
  };
  const lines = edl.split('\n');
  if (!/^TITLE: /.test(lines[0]!) || lines[1] !== 'FCM: NON-DROP FRAME') throw new Error('no EDL header');
  const events = lines
    .map((l) =>
      /^(\d{3})\s+(\S+)\s+(\S+)\s+C\s+(\d\d:\d\d:\d\d:\d\d) (\d\d:\d\d:\d\d:\d\d) (\d\d:\d\d:\d\d:\d\d) (\d\d:\d\d:\d\d:\d\d)\s*$/.exec(l),
    )
    .filter((m) => m !== null)
    .map((m) => ({
      n: Number(m[1]),
      reel: m[2],
      channels: m[3],
      sourceIn: tc(m[4]!),
      sourceOut: tc(m[5]!),
      recordIn: tc(m[6]!),
      recordOut: tc(m[7]!),
    }));
  return { events, comments: lines.filter((l) => l.startsWith('*')) };
}

/** The window a transform shows, solved back from FCPXML's scale and position (hundredths of H, y up). */
function windowOf(k: FcpKey): Box {
  const [sx, sy] = k.scale;
  const dx = (k.position[0] * H) / 100;
  const dy = (-k.position[1] * H) / 100;
  const width = W / sx;
  const height = H / sy;
  return { x: SW / 2 - dx / sx - width / 2, y: SH / 2 - dy / sy - height / 2, width, height };
}

/** The frames `indices` (from the short's start) as the render's own crop graph (reframe-graph.ts)
 *  draws the short, in one raw yuv420p file (no colour conversion on the way), in order. */
async function renderedFrames(indices: number[]): Promise<string> {
  const graph: string[] = [];
  const target = { start: SHORT.startTime, end: SHORT.endTime, width: W, height: H, sourceWidth: SW, sourceHeight: SH };
  const out = buildReframeGraph(REFRAME, target, graph);
  graph.push(`[${out}]select='${indices.map((n) => `eq(n,${n})`).join('+')}'[picked]`);
  const file = path.join(dir, 'rendered.nut');
  await run(agentTools().ffmpegPath, [
    ...['-v', 'error', '-ss', String(SHORT.startTime), '-to', String(SHORT.endTime), '-i', sourcePath, '-filter_complex', graph.join(';')],
    ...['-map', '[picked]', '-fps_mode', 'passthrough', '-frames:v', String(indices.length), '-c:v', 'rawvideo', '-y', file],
  ]);
  return file;
}

/** PSNR between ffmpeg's crop of `window` at source frame `frame` scaled to W x H (or the `index`th
 *  frame of a rendered file), and the same frame drawn as an editor draws the transform: the whole
 *  source scaled by (sx, sy) about its centre, moved by the position, over black. One frame each. */
async function psnr(frame: number, window: Box | { file: string; index: number }, k: FcpKey): Promise<number> {
  const [sx, sy] = k.scale;
  const dx = (k.position[0] * H) / 100;
  const dy = (-k.position[1] * H) / 100;
  const w = Math.round(SW * sx);
  const h = Math.round(SH * sy);
  const left = Math.round(W / 2 + dx - w / 2);
  const top = Math.round(H / 2 + dy - h / 2);
  const at = String(frame / FPS);
  const reference =
    'file' in window
      ? `[0:v]select=eq(n\\,${window.index}),setpts=PTS-STARTPTS,trim=end_frame=1,format=yuv420p[a];`
      : `[0:v]crop=${window.width}:${window.height}:${window.x}:${window.y}:exact=1,scale=${W}:${H}:flags=bicubic,format=yuv420p,trim=end_frame=1[a];`;
  const graph =
    reference +
    `[1:v]scale=${w}:${h}:flags=bicubic[s];color=black:s=${W}x${H}:r=${FPS}[bg];[bg][s]overlay=${left}:${top}:shortest=1,format=yuv420p,trim=end_frame=1[b];[a][b]psnr`;
  const { stderr } = await run(agentTools().ffmpegPath, [
    ...['-v', 'info', '-nostats', ...('file' in window ? ['-i', window.file] : ['-ss', at, '-i', sourcePath]), '-ss', at, '-i', sourcePath],
    ...['-filter_complex', graph, '-frames:v', '1', '-f', 'null', '-'],
  ]);
  const m = /average:(\S+)/.exec(stderr);
  if (!m) throw new Error(stderr);
  return m[1] === 'inf' ? Infinity : Number(m[1]);
}

// ---- tests ------------------------------------------------------------------------------------------

needing({ tools: { xmllint: XMLLINT } })(
  "FCPXML of a short: well-formed, a 1080x1920 sequence at the source's rate, the short's in/out points, the crop at each keyframe the stored path's window (numbers and PSNR ≥ 35 dB), the cues as titles",
  async (t) => {
    const { org, key } = await cluster.org();
    const id = await fixture(org.id);
    const res = await cluster.api('GET', `/api/jobs/${id}/shorts/0/timeline.fcpxml`, { key });
    t.is(res.status, 200, String(res.body));
    t.regex(res.headers.get('content-type')!, /^application\/xml/);
    t.is(res.headers.get('content-disposition'), 'attachment; filename="fixture-short-0.fcpxml"');
    const xml = res.body as string;
    const file = path.join(dir, 'short.fcpxml');
    await writeFile(file, xml);
    await t.notThrowsAsync(run('xmllint', ['--noout', file]), 'xmllint reads it');

    const fcp = readFcpxml(xml);
    t.true(fcp.version >= 110, `version ${fcp.version}`);
    t.is(fcp.format.getAttribute('width'), String(W));
    t.is(fcp.format.getAttribute('height'), String(H));
    t.is(frames(fcp.format.getAttribute('frameDuration')!), 1);
    const asset = fcp.byId.get('r3')!;
    t.is(frames(asset.getAttribute('duration')!), 20 * FPS, "the source's duration");
    t.is(asset.getElementsByTagName('media-rep')[0]!.getAttribute('src'), 'source.mp4');

    // Clips back to back from the short's start to its end, cut where the crop steps (14 s, 16.6 s).
    t.deepEqual(
      fcp.clips.map((c) => [c.offset, c.start, c.duration]),
      [
        [0, 250, 100],
        [100, 350, 65],
        [165, 415, 35],
      ],
    );
    t.is(frames(fcp.sequence.getAttribute('duration')!), 200);

    // Each keyframe: the window its scale and position show is the stored path's at that moment.
    const keys = fcp.clips.flatMap((c) => c.keys);
    t.deepEqual(
      keys.map((k) => k.frame),
      [250, 300, 349, 350, 400, 414, 415, 449],
    );
    for (const k of keys) {
      const shown = windowOf(k);
      const expected = windowAt(k.frame / FPS);
      for (const side of ['x', 'y', 'width', 'height'] as const) {
        t.true(Math.abs(shown[side] - expected[side]) < 0.01, `frame ${k.frame} ${side}: ${shown[side]} vs ${expected[side]}`);
      }
    }
    // In pictures: the first frame of each clip (the start of each crop piece), and the service's crop.
    for (const clip of fcp.clips) {
      const expected = windowAt(clip.start / FPS);
      const db = await psnr(clip.start, expected, clip.keys[0]!);
      t.log(`clip at frame ${clip.start}: ${db.toFixed(1)} dB`);
      t.true(db >= 35, `clip at ${clip.start}: ${db} dB`);
    }
    // And against the render's own crop graph (node-agent reframe-graph.ts) drawing those frames.
    const rendered = await renderedFrames(fcp.clips.map((c) => c.offset));
    for (const [i, clip] of fcp.clips.entries()) {
      const db = await psnr(clip.start, { file: rendered, index: i }, clip.keys[0]!);
      t.log(`clip at frame ${clip.start} against the render graph: ${db.toFixed(1)} dB`);
      t.true(db >= 35, `clip at ${clip.start} against the render graph: ${db} dB`);
    }
    // The check sees a window 24 px off.
    const first = fcp.clips[0]!;
    t.true((await psnr(first.start, { ...windowAt(10), x: 64 }, first.keys[0]!)) < 25, 'a wrong window is told apart');

    // The caption files' cues, as titles at the same frames.
    const captions = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.json`, { key })).body;
    const titles = fcp.clips.flatMap((c) => c.titles.map((x) => ({ ...x, at: c.offset + x.offset - c.start })));
    t.deepEqual(
      titles.map((x) => [x.text, x.at, x.at + x.duration]),
      captions.cues.map((c: { text: string; start: number; end: number }) => [c.text, Math.round(c.start * FPS), Math.round(c.end * FPS)]),
    );
    t.deepEqual(fcp.notes, [], 'single windows only: nothing approximated');
  },
);

test('OTIO of a short with jump cuts: known schemas and versions, each kept range its own clip back to back, the cues as markers', async (t) => {
  const { org, key } = await cluster.org();
  const id = await fixture(org.id);
  const query = 'removeSilences=true&removeFillers=true';
  const res = await cluster.api('GET', `/api/jobs/${id}/shorts/0/timeline.otio?${query}`, { key });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.regex(res.headers.get('content-type')!, /^application\/json/);
  t.is(res.headers.get('content-disposition'), 'attachment; filename="fixture-short-0.otio"');
  const otio = res.body as Otio;
  const seen = checkOtio(otio);
  for (const schema of [
    'Timeline.1',
    'Stack.1',
    'Track.1',
    'Clip.2',
    'Gap.1',
    'ExternalReference.1',
    'RationalTime.1',
    'TimeRange.1',
    'Marker.2',
  ]) {
    t.true(seen.has(schema), schema);
  }
  t.is(otio.OTIO_SCHEMA, 'Timeline.1');
  t.deepEqual(
    otio.tracks.children.map((tr: Otio) => [tr.name, tr.kind]),
    [
      ['Video', 'Video'],
      ['Captions', 'Video'],
    ],
  );
  const captions = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.json?${query}`, { key })).body;
  t.true(captions.jumpCuts.length >= 2);
  // What the render keeps: the short less its cuts.
  const keep: Array<[number, number]> = [];
  let from = SHORT.startTime;
  for (const c of captions.jumpCuts) {
    if (c.start > from) keep.push([from, c.start]);
    from = c.end;
  }
  if (from < SHORT.endTime) keep.push([from, SHORT.endTime]);

  const video = otio.tracks.children[0];
  // Clips split only where a kept range ends or the crop steps; joined back they are the kept ranges.
  const ranges: Array<[number, number]> = [];
  for (const clip of video.children) {
    t.is(clip.OTIO_SCHEMA, 'Clip.2');
    t.is(clip.media_references.DEFAULT_MEDIA.target_url, 'source.mp4');
    const a = rtFrames(clip.source_range.start_time);
    const b = a + rtFrames(clip.source_range.duration);
    const last = ranges[ranges.length - 1];
    if (last && last[1] === a) last[1] = b;
    else ranges.push([a, b]);
  }
  t.deepEqual(
    ranges,
    keep.map(([a, b]) => [Math.round(a * FPS), Math.round(b * FPS)]),
  );
  const total = video.children.reduce((s: number, c: Otio) => s + rtFrames(c.source_range.duration), 0);
  t.is(total, Math.round(captions.durationSec * FPS), "back to back: the edited short's length");
  // The transform of each clip: the stored path's window at its first frame (after the cut it is the
  // window where the kept range starts, rounded to whole pixels as the render's remap rounds it).
  for (const clip of video.children) {
    const [first] = clip.effects[0].metadata.shorts.keyframes;
    const expected = windowAt(rtFrames(first.time) / FPS);
    t.true(
      Math.abs(first.window.x - expected.x) <= 0.5 && Math.abs(first.window.y - expected.y) <= 0.5,
      JSON.stringify([first.window, expected]),
    );
    t.is(first.scale.y, H / expected.height);
    t.true(Math.abs(first.position.x - -first.scale.x * (first.window.x + first.window.width / 2 - SW / 2)) < 1e-6);
  }
  const markers = otio.tracks.children[1].markers;
  t.deepEqual(
    markers.map((m: Otio) => [m.name, rtFrames(m.marked_range.start_time)]),
    captions.cues.map((c: { text: string; start: number }) => [c.text, Math.round(c.start * FPS)]),
  );
  t.false(
    markers.some((m: Otio) => /\bum\b/.test(m.name)),
    'the filler is cut from the cues',
  );
});

test('EDL of a short: the kept ranges as events with source and record timecodes to the frame, what it drops said in comments', async (t) => {
  const { org, key } = await cluster.org();
  const id = await fixture(org.id);
  const plain = await cluster.api('GET', `/api/jobs/${id}/shorts/0/timeline.edl`, { key });
  t.is(plain.status, 200, String(plain.body));
  t.regex(plain.headers.get('content-type')!, /^text\/plain/);
  t.is(plain.headers.get('content-disposition'), 'attachment; filename="fixture-short-0.edl"');
  t.deepEqual(
    readEdl(plain.body as string).events.map((e) => [e.sourceIn, e.sourceOut, e.recordIn, e.recordOut]),
    [[250, 450, 0, 200]],
    'one event: the crop steps are no cuts in an EDL',
  );

  const query = 'removeSilences=true&removeFillers=true';
  const cut = await cluster.api('GET', `/api/jobs/${id}/shorts/0/timeline.edl?${query}`, { key });
  const edl = readEdl(cut.body as string);
  const captions = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/captions.json?${query}`, { key })).body;
  const expected: Array<[number, number]> = [];
  let from = SHORT.startTime;
  for (const c of captions.jumpCuts) {
    if (c.start > from) expected.push([from, c.start]);
    from = c.end;
  }
  if (from < SHORT.endTime) expected.push([from, SHORT.endTime]);
  t.true(expected.length >= 3);
  let record = 0;
  t.deepEqual(
    edl.events.map((e) => [e.n, e.reel, e.channels, e.sourceIn, e.sourceOut, e.recordIn, e.recordOut]),
    expected.map(([a, b], i) => {
      const [sIn, sOut] = [Math.round(a * FPS), Math.round(b * FPS)];
      const row = [i + 1, 'AX', 'AA/V', sIn, sOut, record, record + sOut - sIn];
      record += sOut - sIn;
      return row;
    }),
  );
  const comments = edl.comments.join('\n');
  t.regex(comments, /FROM CLIP NAME: source\.mp4/);
  t.regex(comments, /NOT CARRIED: THE CROP/);
  t.regex(comments, /NOT CARRIED: \d+ CAPTION TITLES/);
});

test("a render's timelines: its shape 1920 high, its watermark as a still on its own track; another organization's are 404", async (t) => {
  const { org, key } = await cluster.org();
  const id = await fixture(org.id);
  const logo = await storeFile(cluster.app, { organizationId: org.id, name: 'logo.png', source: Buffer.alloc(100, 1), type: 'image' });
  const created = await cluster.api('POST', '/api/render', {
    key,
    body: { id, target: 0, options: { maxWordsInPage: 2, waterMark: { fileAppId: logo.id, left: '10px', top: '10px' } } },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const renderId = created.body.renderId as string;

  const otio = await cluster.api('GET', `/api/render/${renderId}/timeline.otio`, { key });
  t.is(otio.status, 200, JSON.stringify(otio.body));
  t.is(otio.headers.get('content-disposition'), `attachment; filename="render-${renderId}.otio"`);
  checkOtio(otio.body);
  const tracks = otio.body.tracks.children;
  t.deepEqual(
    tracks.map((tr: Otio) => tr.name),
    ['Video', 'Watermark', 'Captions'],
  );
  const still = tracks[1].children[0];
  t.is(still.media_references.DEFAULT_MEDIA.target_url, 'logo.png', "the organization's image, by its name");
  t.is(rtFrames(still.source_range.duration), 200, 'over the whole short');
  const captions = (await cluster.api('GET', `/api/render/${renderId}/captions.json`, { key })).body;
  t.deepEqual(
    tracks[2].markers.map((m: Otio) => m.name),
    captions.cues.map((c: { text: string }) => c.text),
    'two words a cue, as the render was asked',
  );

  const fcp = await cluster.api('GET', `/api/render/${renderId}/timeline.fcpxml`, { key });
  t.is(fcp.status, 200);
  const doc = readFcpxml(fcp.body as string);
  t.is(doc.format.getAttribute('width'), String(W));
  const video = new DOMParser().parseFromString(fcp.body as string, 'text/xml').getElementsByTagName('video')[0]!;
  t.is(video.getAttribute('lane'), '2');
  t.is(frames(video.getAttribute('duration')!), 200);
  const edl = await cluster.api('GET', `/api/render/${renderId}/timeline.edl`, { key });
  t.regex(edl.body as string, /NOT CARRIED: THE WATERMARK STILL logo\.png/);

  const other = await cluster.org();
  for (const ext of ['fcpxml', 'otio', 'edl']) {
    for (const url of [`/api/render/${renderId}/timeline.${ext}`, `/api/jobs/${id}/shorts/0/timeline.${ext}`]) {
      const res = await cluster.api('GET', url, { key: other.key });
      t.is(res.status, 404, url);
      t.is(typeof res.body.message, 'string');
    }
  }
  t.is((await cluster.api('GET', `/api/jobs/${id}/shorts/3/timeline.otio`, { key })).status, 404, 'no such short');
  t.is((await cluster.api('GET', `/api/render/${renderId}/timeline.edl`)).status, 401);
});

test('the OpenAPI document names the six timeline routes with their media types', async (t) => {
  const doc = (await cluster.api('GET', '/openapi.json')).body;
  for (const base of ['/api/jobs/{jobId}/shorts/{shortId}', '/api/render/{renderId}']) {
    for (const [ext, type] of [
      ['fcpxml', 'application/xml'],
      ['otio', 'application/json'],
      ['edl', 'text/plain'],
    ] as const) {
      const op = doc.paths[`${base}/timeline.${ext}`]?.get;
      t.truthy(op?.responses['200'].content[type].example, `${base}/timeline.${ext}`);
    }
  }
});

needing({ tools: CHROMIUM_TOOL })(
  "the studio's timeline links beside a short download its FCPXML, OTIO and EDL with the session",
  async (t) => {
    buildStudio();
    chromium = await launchChromium();
    const links = '[data-testid="timeline-files"]';
    const { pageErrors, download } = await signInToNewJob(cluster, chromium, 'timelines@studio.test', fixture, links);
    const fcpxml = await download('Download the edit of “Fox” as FCPXML');
    t.is(fcpxml.name, 'fixture-short-0.fcpxml');
    t.is(readFcpxml(fcpxml.text).clips.length, 3);
    const otio = await download('Download the edit of “Fox” as OTIO');
    t.is(otio.name, 'fixture-short-0.otio');
    t.true(checkOtio(JSON.parse(otio.text)).has('Timeline.1'));
    const edl = await download('Download the edit of “Fox” as EDL');
    t.is(edl.name, 'fixture-short-0.edl');
    t.is(readEdl(edl.text).events.length, 1);
    t.deepEqual(pageErrors, []);
  },
);

test('fit and split segments: the fit window whole in the frame, the split as its first panel, and the sequence notes what is approximated', async (t) => {
  const { org, key } = await cluster.org();
  const panels = [
    { x: 20, y: 0, width: 300, height: 270 },
    { x: 330, y: 40, width: 300, height: 270 },
  ];
  const reframe: Reframe = {
    sourceWidth: SW,
    sourceHeight: SH,
    keyframes: [
      { time: 10, x: 40, y: 0, width: 202, height: 360 },
      { time: 12, x: 0, y: 0, width: SW, height: SH },
      { time: 14, x: 40, y: 0, width: 202, height: 360, panels },
    ],
    segments: [
      { start: 10, end: 12, layout: 'single', tracks: [0] },
      { start: 12, end: 14, layout: 'fit', tracks: [] },
      { start: 14, end: 18, layout: 'split', tracks: [0, 1] },
    ],
  };
  const id = await insertCompletedJob(cluster.app, {
    organizationId: org.id,
    words: WORDS,
    fps: FPS,
    width: SW,
    height: SH,
    durationSec: 20,
    shorts: [{ ...SHORT, reframe }],
  });
  const otio = (await cluster.api('GET', `/api/jobs/${id}/shorts/0/timeline.otio`, { key })).body as Otio;
  const clips = otio.tracks.children[0].children as Otio[];
  t.deepEqual(
    clips.map((c) => [c.metadata.shorts.layout, rtFrames(c.source_range.start_time), rtFrames(c.source_range.duration)]),
    [
      ['single', 250, 50],
      ['fit', 300, 50],
      ['split', 350, 100],
    ],
  );
  const [fit] = clips[1]!.effects[0].metadata.shorts.keyframes;
  t.deepEqual(
    [fit.scale.x, fit.scale.y, fit.position.x, fit.position.y],
    [W / SW, W / SW, 0, 0],
    'the whole picture, as wide as the frame, centred',
  );
  const [split] = clips[2]!.effects[0].metadata.shorts.keyframes;
  t.deepEqual(split.window, panels[0]);
  t.is(split.scale.x, W / panels[0]!.width, 'the top panel as wide as the frame');
  t.is(otio.metadata.shorts.notes.length, 2);

  const fcp = readFcpxml((await cluster.api('GET', `/api/jobs/${id}/shorts/0/timeline.fcpxml`, { key })).body as string);
  t.is(fcp.clips.length, 3);
  t.regex(fcp.notes.join(' '), /fit: .*blurred.*split: |split: .*fit: .*blurred/);
});
