import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { editedTime, planJumpCuts } from '@shorts/common/render/jump-cuts';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import type { Reframe } from '@shorts/common/reframe/types';
import { remapReframe } from '../node-agent/src/media/jump-cut-graph.js';
import { prepareRender, type RenderSpec } from '../node-agent/src/media/render-args.js';

// The render side of jump cuts: captions and the crop path on the edited clock.

const FPS = 25;
const WORDS = [
  { text: 'so', start: 0.1, end: 0.4 },
  { text: 'today', start: 0.5, end: 0.9 },
  { text: 'um', start: 1.6, end: 1.9 },
  { text: 'we', start: 3.1, end: 3.3 },
  { text: 'talk', start: 3.4, end: 3.8 },
  { text: 'uh', start: 3.9, end: 4.1 },
  { text: 'now', start: 4.2, end: 4.6 },
];

test('captions are re-timed onto the edited clock and never show a removed word', async (t) => {
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'jump-cut-captions-'));
  t.teardown(() => rm(workDir, { recursive: true, force: true }));
  const edit = planJumpCuts({ start: 0, end: 5, words: WORDS, editing: { removeSilences: true, removeFillers: true }, fps: FPS });
  t.true(edit.cuts.length >= 2);
  const spec: RenderSpec = {
    sourcePath: '/tmp/src.mp4',
    startTime: 0,
    endTime: 5,
    words: WORDS,
    output: { width: 360, height: 640, path: path.join(workDir, 'out.mp4') },
    caption: { style: resolveCaptionStyle('DEFAULT', undefined), maxWordsInPage: 2 },
    captionCanvas: false,
    encoder: 'libx264',
    workDir,
    sourceWidth: 640,
    sourceHeight: 360,
    edit,
    sourceFps: FPS,
    sourceHasAudio: true,
  };
  await prepareRender(spec);
  const ass = await readFile(path.join(workDir, 'captions.ass'), 'utf8');
  const events = ass
    .split('\n')
    .filter((l) => l.startsWith('Dialogue:'))
    .map((l) => {
      const [, start, end] = l.split(',');
      const text = l
        .split(',,')
        .slice(-1)[0]!
        .replace(/\{[^}]*\}/g, '');
      return { start: assSec(start!), end: assSec(end!), text };
    });
  t.true(events.length >= 5);
  for (const e of events) t.notRegex(e.text, /\b(um|uh)\b/i, `a caption shows a filler: ${e.text}`);
  // Each kept word's event starts when the edited clip says it is spoken (to the script's centisecond).
  for (const word of WORDS.filter((w) => !['um', 'uh'].includes(w.text))) {
    const when = editedTime(edit, word.start);
    t.true(
      events.some((e) => e.text.includes(word.text) && Math.abs(e.start - when) <= 0.011),
      `${word.text} at ${when}`,
    );
  }
  // Nothing is captioned past the edited clip's end.
  const last = Math.max(...events.map((e) => e.end));
  t.true(last <= 5 - edit.removedSec + 0.011, `last caption ends at ${last}`);
});

test('the crop path is remapped: a framing change inside a cut lands on the jump cut, windows step at each join', (t) => {
  // A pan from x=0 to x=400 over 0-5 s, and a change to a fitted whole picture at 2.0 s, inside the 1.6-3.1 s pause.
  const reframe: Reframe = {
    sourceWidth: 640,
    sourceHeight: 360,
    keyframes: [
      { time: 0, x: 0, y: 0, width: 202, height: 360 },
      { time: 2, x: 160, y: 0, width: 202, height: 360 },
      { time: 2, x: 0, y: 0, width: 640, height: 360 },
      { time: 5, x: 0, y: 0, width: 640, height: 360 },
    ],
    segments: [
      { start: 0, end: 2, layout: 'single', tracks: [0] },
      { start: 2, end: 5, layout: 'fit', tracks: [] },
    ],
  };
  const edit = planJumpCuts({ start: 0, end: 5, words: WORDS, editing: { removeSilences: true }, fps: FPS });
  const cut = edit.cuts.find((c) => c.start < 2 && c.end > 2)!;
  t.truthy(cut, 'the framing change falls in a cut');
  const join = editedTime(edit, cut.start);
  const mapped = remapReframe(reframe, edit)!;
  t.deepEqual(
    mapped.segments.map((s) => [s.layout, round(s.start), round(s.end)]),
    [
      ['single', 0, round(join)],
      ['fit', round(join), round(5 - edit.removedSec)],
    ],
  );
  // At the join: the pan's window where the cut began, then the fitted window, at one instant.
  const atJoin = mapped.keyframes.filter((k) => Math.abs(k.time - join) < 1e-9);
  t.deepEqual(
    atJoin.map((k) => k.width),
    [202, 640],
  );
  t.true(Math.abs(atJoin[0]!.x - 160 * (cut.start / 2)) <= 0.5, `x ${atJoin[0]!.x}`);
  // Keyframe times only grow.
  t.true(mapped.keyframes.every((k, i) => i === 0 || k.time >= mapped.keyframes[i - 1]!.time));
});

const assSec = (s: string) => {
  const [h, m, rest] = s.split(':');
  return Number(h) * 3600 + Number(m) * 60 + Number(rest);
};
const round = (n: number) => Math.round(n * 1000) / 1000;
