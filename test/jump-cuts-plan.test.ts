import test from 'ava';
import { editedDuration, editedTime, editedWords, planJumpCuts, VOICE_TAIL_SEC, type TimedWord } from '@shorts/common/render/jump-cuts';
import { editingSchema, fillerKey, normalisedEditing, resolveEditing, type EditingOptions } from '@shorts/common/options/editing';
import { normalizeRenderOptions } from '@shorts/common/render/options';
import { buildRenderArgs, type RenderSpec } from '../node-agent/src/media/render-args.js';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { appErrorOf } from '../coordinator/src/errors.js';

// The planner that turns words + voice activity + options into kept ranges (issue 24), and the
// options' validation.

const FPS = 25;
const FRAME = 1 / FPS;
const w = (text: string, start: number, end: number): TimedWord => ({ text, start, end });

// so [0.1-0.4] today [0.5-0.9] · 1.5 s pause · um [2.4-2.7] · 0.4 s · we [3.1-3.3] talk [3.4-3.8] · 0.3 s · umbrella [4.1-4.6]
const WORDS = [w('so', 0.1, 0.4), w('today', 0.5, 0.9), w('um', 2.4, 2.7), w('we', 3.1, 3.3), w('talk', 3.4, 3.8), w('umbrella', 4.1, 4.6)];

const cutInside = (plan: ReturnType<typeof planJumpCuts>, word: TimedWord) =>
  plan.cuts.some((c) => c.end > word.start && c.start < word.end);

test('without editing, or with both switches off, the whole clip is kept', (t) => {
  for (const editing of [undefined, {}, { removeSilences: false, removeFillers: false }]) {
    const plan = planJumpCuts({ start: 0, end: 5, words: WORDS, editing, fps: FPS });
    t.deepEqual(plan.keep, [{ start: 0, end: 5 }]);
    t.is(plan.cuts.length, 0);
  }
});

test('silences: a pause of 0.6 s or more is cut down to 0.15 s, shorter pauses stay, no kept word is touched', (t) => {
  const plan = planJumpCuts({ start: 0, end: 5, words: WORDS, editing: { removeSilences: true }, fps: FPS });
  // The 1.5 s pause (0.9-2.4) is the only one of at least 0.6 s.
  t.is(plan.cuts.length, 1);
  const [cut] = plan.cuts;
  t.is(cut!.reason, 'silence');
  t.true(cut!.start >= 0.9 + 0.04 - FRAME / 2 && cut!.end <= 2.4 - 0.04 + FRAME / 2, JSON.stringify(cut));
  const left = 1.5 - (cut!.end - cut!.start);
  t.true(Math.abs(left - 0.15) <= FRAME, `pause left ${left}`);
  for (const word of WORDS) t.false(cutInside(plan, word), word.text);
  t.true(Math.abs(editedDuration(plan) - (5 - plan.removedSec)) < 1e-6);
  // Cuts are on frame boundaries of the clip.
  for (const c of plan.cuts)
    t.true(Math.abs(c.start * FPS - Math.round(c.start * FPS)) < 1e-6 && Math.abs(c.end * FPS - Math.round(c.end * FPS)) < 1e-6);
});

test('voice activity keeps a pause where speech was heard though no word was recognised', (t) => {
  const speech = [{ start: 1.2, end: 2.0 }];
  const plan = planJumpCuts({ start: 0, end: 5, words: WORDS, speech, editing: { removeSilences: true }, fps: FPS });
  for (const c of plan.cuts) t.true(c.end <= 1.2 - 0.04 + FRAME / 2 || c.start >= 2.0 + 0.04 - FRAME / 2, JSON.stringify(c));
  t.false(plan.cuts.some((c) => c.start < 1.6 && c.end > 1.6));
});

test('fillers: whole words in any spelling, never inside another word, never the first or last word', (t) => {
  t.is(fillerKey('Umm,'), 'um');
  t.is(fillerKey('HMMM'), 'hm');
  t.is(fillerKey('uhh...'), 'uh');
  const words = [
    w('Um,', 0, 0.3),
    w('so', 0.4, 0.6),
    w('Umm,', 0.7, 1.0),
    w('umbrellas', 1.1, 1.6),
    w('hmmm', 1.7, 2.0),
    w('er', 2.1, 2.3),
    w('uh', 2.4, 2.6),
  ];
  const plan = planJumpCuts({ start: 0, end: 2.7, words, editing: { removeFillers: true }, fps: FPS });
  t.deepEqual(
    plan.fillerWords.map((f) => f.text),
    ['Umm,', 'hmmm', 'er'],
  );
  for (const f of plan.fillerWords)
    t.true(
      plan.cuts.some((c) => c.start <= f.start + FRAME && c.end >= f.end - FRAME),
      f.text,
    );
  for (const kept of [words[0]!, words[1]!, words[3]!, words[6]!]) t.false(cutInside(plan, kept), kept.text);
  const shown = editedWords(plan, words).map((x) => x.text);
  t.deepEqual(shown, ['Um,', 'so', 'umbrellas', 'uh']);
  // Own words replace the defaults.
  const own = planJumpCuts({ start: 0, end: 2.7, words, editing: { removeFillers: { words: ['so'] } }, fps: FPS });
  t.deepEqual(
    own.fillerWords.map((f) => f.text),
    ['so'],
  );
});

test('both: a filler inside a long pause goes with the pause; every piece is at least 2 frames', (t) => {
  const plan = planJumpCuts({ start: 0, end: 5, words: WORDS, editing: { removeSilences: true, removeFillers: true }, fps: FPS });
  t.deepEqual(
    plan.fillerWords.map((f) => f.text),
    ['um'],
  );
  // today ... um ... we: one cut from after "today" to before "we".
  const around = plan.cuts.find((c) => c.start < 2.4 && c.end > 2.7);
  t.truthy(around, JSON.stringify(plan.cuts));
  t.true(around!.start >= 0.94 - FRAME / 2 && around!.end <= 3.06 + FRAME / 2);
  for (const k of plan.keep) t.true(k.end - k.start >= 2 * FRAME - 1e-9);
  for (const c of plan.cuts) t.true(c.end - c.start >= 2 * FRAME - 1e-9);
  // The edited clock: a kept word moves back by the time cut before it.
  const we = editedWords(plan, WORDS).find((x) => x.text === 'we')!;
  t.true(Math.abs(we.start - (3.1 - (around!.end - around!.start))) < 1e-9);
  t.is(editedTime(plan, 2.5), editedTime(plan, around!.start));
});

test('editing options are validated with clear messages', (t) => {
  const bad: Array<[unknown, RegExp]> = [
    [{ removeSilences: 'yes' }, /options\.editing\.removeSilences: must be true, false or an object/],
    [{ removeSilences: { minSilenceSec: 0.01 } }, /options\.editing\.removeSilences/],
    [{ removeSilences: { minSilenceSec: 0.5, keepSec: 0.6 } }, /keepSec must be shorter than minSilenceSec/],
    [{ removeFillers: { words: ['um uh'] } }, /options\.editing\.removeFillers\.words\[0\]: must be single words/],
    [{ removeFillers: { words: [] } }, /options\.editing\.removeFillers\.words/],
    [{ cutEverything: true }, /options\.editing/],
  ];
  for (const [editing, message] of bad) {
    const err = t.throws(() => normalizeRenderOptions({ editing }), undefined, JSON.stringify(editing));
    t.is(appErrorOf(err)?.status, 400);
    t.regex(err!.message, message);
  }
  t.deepEqual(normalizeRenderOptions({ editing: { removeSilences: { keepSec: 0.1 }, removeFillers: true } }).editing, {
    removeSilences: { keepSec: 0.1 },
    removeFillers: true,
  });
});

test('a render without cuts has the same ffmpeg arguments as one without editing', (t) => {
  const base: RenderSpec = {
    sourcePath: '/tmp/src.mp4',
    startTime: 0,
    endTime: 5,
    words: WORDS,
    output: { width: 360, height: 640, path: '/tmp/out.mp4' },
    caption: { style: resolveCaptionStyle('DEFAULT', undefined), maxWordsInPage: 3 },
    encoder: 'libx264',
    workDir: '/tmp/w',
    sourceWidth: 640,
    sourceHeight: 360,
  };
  const uncut = planJumpCuts({ start: 0, end: 5, words: WORDS, editing: {}, fps: FPS });
  t.deepEqual(buildRenderArgs({ ...base, edit: uncut, sourceFps: FPS, sourceHasAudio: true }), buildRenderArgs(base));
  const cut = planJumpCuts({ start: 0, end: 5, words: WORDS, editing: { removeSilences: true }, fps: FPS });
  const args = buildRenderArgs({ ...base, edit: cut, sourceFps: FPS, sourceHasAudio: true });
  t.notDeepEqual(args, buildRenderArgs(base));
  t.regex(args.join(' '), /acrossfade/);
});

test('voice activity that lets go of a word late does not lengthen the pause left after it', (t) => {
  // Silero's speech runs from each word's onset to up to VOICE_TAIL_SEC after it.
  const speech = WORDS.map((x) => ({ start: x.start, end: x.end + VOICE_TAIL_SEC }));
  const heard = planJumpCuts({ start: 0, end: 5, words: WORDS, speech, editing: { removeSilences: true }, fps: FPS });
  const words = planJumpCuts({ start: 0, end: 5, words: WORDS, editing: { removeSilences: true }, fps: FPS });
  t.deepEqual(heard.cuts, words.cuts);
  // Voice heard where no word is (a word the transcriber missed) is still speech.
  const missed = planJumpCuts({
    start: 0,
    end: 5,
    words: WORDS,
    speech: [...speech, { start: 1.4, end: 1.9 + VOICE_TAIL_SEC }],
    editing: { removeSilences: true },
    fps: FPS,
  });
  t.false(
    missed.cuts.some((c) => c.end > 1.4 && c.start < 1.9),
    JSON.stringify(missed.cuts),
  );
});

test('a render stores editing normalised: nothing when nothing is cut, else rules that read back the same and pass the schema', (t) => {
  for (const none of [undefined, {}, { removeSilences: false }, { removeSilences: false, removeFillers: false }])
    t.is(normalisedEditing(none), undefined, JSON.stringify(none));
  const asked: EditingOptions[] = [
    { removeSilences: true },
    { removeFillers: true },
    { removeSilences: {}, removeFillers: false },
    { removeSilences: { minSilenceSec: 1 }, removeFillers: { words: ['Umm', 'like'] } },
    { removeSilences: { keepSec: 0.3, minSilenceSec: 2 }, removeFillers: {} },
  ];
  for (const editing of asked) {
    const stored = normalisedEditing(editing);
    t.true(editingSchema.safeParse(stored).success, JSON.stringify(stored));
    t.deepEqual(resolveEditing(stored), resolveEditing(editing), JSON.stringify(editing));
    t.deepEqual(normalisedEditing(stored), stored);
  }
  t.deepEqual(normalisedEditing({ removeSilences: true, removeFillers: true }), {
    removeSilences: { minSilenceSec: 0.6, keepSec: 0.15 },
    removeFillers: { words: ['um', 'uh', 'er', 'erm', 'ah', 'hmm'] },
  });
});
