import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '@shorts/common/paths';
import { evaluateScene, loadCast, type Casting } from '../bench/framing/evaluate.js';
import { speechSpan } from '../bench/framing/people.js';
import { FAMILIES, type Family } from '../bench/framing/scenes.js';
import type { SceneScore } from '../bench/framing/score.js';
import { FFMPEG } from './helpers/media.js';
import { haveMedia, needing } from './helpers/requirements.js';

const execFileAsync = promisify(execFile);

// The framing evaluation's regression guard (bench/framing.ts has the whole of it): two fixed scenes
// of each family, the development split's seeds 0 and 1, composed from the people in ../shared/media,
// run through stage 80 and scored as the bench scores them. Where a scene meets issue 33's goals the
// bound is the goal; where it does not yet, the bound sits under today's figure so that a change for
// the worse fails here, and the gap to the goal is written beside it (bench/README.md has the
// held-out figures). The seeds are the first two of the split, not picked by their results.

/** Issue 33's goals. */
const GOAL = { onSpeaker: 0.9, worstSwitchSec: 1.5, falsePerMinute: 1, faceless: 0.95, stacked: 1, jitterPx: 0 };

interface Bounds {
  /** Least share of the scored speech with the heard speaker framed. */
  onSpeaker: number;
  /** Longest wait for the window to reach a new speaker, seconds. */
  worstSwitchSec: number;
  /** Most face samples cut by the window's edge, as a share of all. */
  sliced: number;
  /** Most switches answering no turn and no edit, a minute. */
  falsePerMinute: number;
  /** Least share of a faceless shot's time shown whole. */
  faceless: number;
  /** Most movement of the window while one person talks and holds still, output pixels a frame. */
  jitterPx: number;
}

const AT_GOAL: Bounds = {
  onSpeaker: GOAL.onSpeaker,
  worstSwitchSec: GOAL.worstSwitchSec,
  sliced: 0,
  falsePerMinute: GOAL.falsePerMinute,
  faceless: GOAL.faceless,
  jitterPx: GOAL.jitterPx,
};

/** Seeds 0 and 1 of each family. Where a scene misses a goal today, its bound is a floor under
 *  today's figure (measured 2026-11-30 with the labels of that day, in the comment), not the goal:
 *  issue 33 is open on it. */
const BOUNDS: Record<Family, [Bounds, Bounds]> = {
  turns: [AT_GOAL, AT_GOAL],
  // Scene 0 (4K, faces 2.7 % of the height, pillarboxed): 78.5 % (48.1 % before every voice piece
  // voted by its margin, voteMargin 0), one switch 1.70 s late.
  panel: [{ ...AT_GOAL, onSpeaker: 0.75, worstSwitchSec: 2.0 }, AT_GOAL],
  // Scene 1: 82.8 %: the listener mouthing along is named for the first 1.6 s, in step with the
  // voice by chance before either face has spoken; a switch 2.04 s late and one false switch in
  // 20.5 s follow from it.
  'muted-listener': [AT_GOAL, { ...AT_GOAL, onSpeaker: 0.75, worstSwitchSec: 2.5, falsePerMinute: 3.5 }],
  // Scene 0: the actors' clips end 0.27 s before the scene does, the picture empties, and that last
  // cut, found and shown whole, scores as one false switch in 15 s. Scene 1: one false switch in 17.6 s.
  'off-screen': [
    { ...AT_GOAL, falsePerMinute: 4.5 },
    { ...AT_GOAL, falsePerMinute: 3.5 },
  ],
  // Scene 0: 90.0 % on the speaker, at the goal exactly, bounded a little under it. (Its B-roll was
  // shown whole 46 % of the time while a false face in the moving pattern took the voice-over; since
  // credibleTracks drops such faces, all of it.)
  edited: [{ ...AT_GOAL, onSpeaker: 0.85 }, AT_GOAL],
  facecam: [AT_GOAL, AT_GOAL],
  // Scene 0 read 10.8 % of face samples sliced until the labels stopped counting a face hidden behind
  // the speaker who walks in front of it; scene 1 moved its window 1.41 px a frame while the speaker
  // stood still until the camera held on the middle of a sway (holdTarget, camera.ts).
  motion: [AT_GOAL, AT_GOAL],
};

const SEEDS = [0, 1];

let casting: Casting | undefined;
let cacheDir: string;
test.before(async () => {
  cacheDir = await mkdtemp(path.join(os.tmpdir(), 'framing-eval-'));
  casting = haveMedia ? await loadCast(repoRoot()) : undefined;
});
test.after.always(async () => {
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true });
});

const withMedia = needing({ media: haveMedia });

withMedia('the labels hear each person from their first word to their last, as a reference alignment has them', async (t) => {
  // GRID's alignments count 25 000 ticks a second; where a clip has one beside it, it is the truth the
  // labels' words are checked against (a click or breath before the first word is not speech).
  const aligned = casting!.cast.people.flatMap((p) => {
    const file = p.file.replace(/\.[^.]+$/, '.align');
    if (!existsSync(file)) return [];
    const words = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/))
      .filter(([, , word]) => word !== 'sil' && word !== 'sp')
      .map(([from, to]) => ({ start: Number(from) / 25_000, end: Number(to) / 25_000 }));
    return [{ person: p, start: words[0]!.start, end: words.at(-1)!.end }];
  });
  // Without a reference there is nothing to check against: that is a failure, not a pass.
  if (!aligned.length) return t.fail('no clip in ../shared/media has a GRID alignment (.align) beside it');
  for (const { person, start, end } of aligned) {
    t.true(Math.abs(person.words.start - start) <= 0.1, `${person.name}: first word at ${person.words.start} s, aligned at ${start} s`);
    t.true(Math.abs(person.words.end - end) <= 0.1, `${person.name}: last word ends at ${person.words.end} s, aligned at ${end} s`);
  }
  // A click half a second before the words (as some GRID clips open on) is not where they start.
  const clicked = path.join(cacheDir, 'clicked.wav');
  const grid = aligned[0]!;
  const from = Math.max(0, grid.start - 0.04);
  const MONO = 'aformat=sample_fmts=s16:sample_rates=16000:channel_layouts=mono';
  await execFileAsync(FFMPEG, [
    ...['-hide_banner', '-loglevel', 'error', '-y', '-i', grid.person.file, '-filter_complex'],
    `anullsrc=r=16000:cl=mono,atrim=duration=0.3,${MONO}[a];anoisesrc=r=16000:a=0.3,atrim=duration=0.06,${MONO}[b];` +
      `anullsrc=r=16000:cl=mono,atrim=duration=0.5,${MONO}[c];` +
      `[0:a]atrim=start=${from.toFixed(3)},asetpts=PTS-STARTPTS,aresample=16000,${MONO}[d];[a][b][c][d]concat=n=4:v=0:a=1[o]`,
    ...['-map', '[o]', clicked],
  ]);
  const span = await speechSpan(clicked, 0.86 + (grid.person.durationSec - from));
  const firstWord = 0.86 + (grid.start - from);
  t.true(
    Math.abs(span.words.start - firstWord) <= 0.1,
    `after a click at 0.3 s the first word is at ${span.words.start} s, not ${firstWord} s`,
  );
  t.true(span.speech.start < 0.4, `the sound itself starts with the click: ${span.speech.start} s`);
  // Every person's words lie within the sound their scenes are cut from.
  for (const p of casting!.cast.people)
    t.true(p.words.start >= p.speech.start && p.words.end <= p.speech.end && p.words.end > p.words.start + 1, p.name);
});

function describe(s: SceneScore): string {
  return (
    `on speaker ${s.onSpeaker === undefined ? '-' : (100 * s.onSpeaker).toFixed(1)} % of ${s.scoredSamples} samples, ` +
    `switches after ${s.latencies.map((l) => l.toFixed(2)).join(', ')} s, false ${s.falseSwitches}/${s.switches}, ` +
    `sliced ${s.slicedSamples}/${s.faceSamples}, jitter ${(s.jitter ?? 0).toFixed(2)} px a frame, faceless whole ${s.facelessWhole}/${s.facelessSamples}, stacked ${s.facecamStacked}/${s.facecamSamples}`
  );
}

/** Runs one scene through stage 80 and holds its score to `bounds`. */
async function checkScene(t: ExecutionContext, family: Family, seed: number, bounds: Bounds): Promise<void> {
  const { score: s } = await evaluateScene(family, seed, casting!, cacheDir);
  t.log(describe(s));
  t.true(s.scoredSamples > 0, 'the scene has speech of an on-screen person to score');
  t.true(s.onSpeaker! >= bounds.onSpeaker, `on the heard speaker ${s.onSpeaker} (at least ${bounds.onSpeaker})`);
  t.true(Math.max(0, ...s.latencies) <= bounds.worstSwitchSec, `worst switch ${Math.max(...s.latencies)} s`);
  t.true(s.slicedSamples <= bounds.sliced * s.faceSamples, `sliced ${s.slicedSamples}/${s.faceSamples}`);
  t.true((s.falseSwitches / s.duration) * 60 <= bounds.falsePerMinute, `${s.falseSwitches} false switches in ${s.duration} s`);
  if (s.facelessSamples) t.true(s.facelessWhole >= bounds.faceless * s.facelessSamples, 'a shot with no face is shown whole');
  t.true((s.jitter ?? 0) <= bounds.jitterPx, `the window moves ${s.jitter} px a frame while one still person talks`);
  if (s.facecamSamples) t.true(s.facecamStacked >= GOAL.stacked * s.facecamSamples, 'a facecam is stacked over its screen');
}

for (const family of FAMILIES) {
  for (const seed of SEEDS) {
    // One scene at a time: fourteen compositions and analyses at once held every core for minutes with
    // no test finishing, past ava's timeout on a busy machine.
    withMedia.serial(`framing, ${family} scene ${seed}: the heard speaker framed, switches on time, no face sliced`, async (t) => {
      await checkScene(t, family, seed, BOUNDS[family][seed]!);
    });
  }
}

// Development scenes a fault was found on and fixed, each bounded at the goals: unlike seeds 0 and 1
// they were picked for their fault, so they guard that fix, not the family's level.
const FIXED: Array<{ family: Family; seed: number; fault: string }> = [
  {
    family: 'off-screen',
    seed: 11,
    // 37.5 % before lipMatch read the mouth's motion beside its openness.
    fault: 'the speaker after an off-screen voice, whose mouth openness barely follows the syllables, is named at once',
  },
];
for (const { family, seed, fault } of FIXED) {
  withMedia.serial(`framing, ${family} scene ${seed}: ${fault}`, async (t) => {
    await checkScene(t, family, seed, AT_GOAL);
  });
}
