import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Box, ShortDetections, SpeakerTurn } from '@shorts/common/reframe/types';
import { contains, interpolate, planReframe } from '@shorts/common/reframe/camera';
import { attributeSpeakers } from '../node-agent/src/reframe/speakers.js';
import { envelopeAt, envelopeOf } from '../node-agent/src/reframe/speech-envelope.js';
import { gridClips } from './helpers/grid.js';
import { composeLipsync, type LipsyncSegment, type LipsyncVideo, type PanelShow } from './helpers/grid-lipsync.js';
import { detectWholeVideo } from './helpers/reframe.js';
import { needing } from './helpers/requirements.js';

// Who speaks is whose lips move in step with the voice that is heard, not whose lips move most: GRID
// speakers side by side, one heard while the other's lips move too (mouthing, chewing, talking with
// no sound), or a voice from off screen.

const haveMedia = Boolean(gridClips());
const withMedia = needing({ media: haveMedia }).serial;
const OUT = { width: 1080, height: 1920 };
let dir: string;

test.before(async () => {
  if (haveMedia) dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-lipsync-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('the speech envelope is loud where the sound is, on the source clock', (t) => {
  const rate = 16_000;
  const samples = new Int16Array(2 * rate);
  // A 1 kHz burst from 0.5 s to 1 s of this stretch, which starts 10 s into the source.
  for (let i = 0.5 * rate; i < rate; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * i) / rate));
  const env = envelopeOf(samples, rate, 10);
  t.is(env.rate, 100);
  t.true(Math.abs(env.start - 10.01) < 1e-9, `first value at ${env.start}`);
  t.true(envelopeAt(env, 10.75) > -30, `burst ${envelopeAt(env, 10.75)} dB`);
  t.is(envelopeAt(env, 10.25), -60);
  t.is(envelopeAt(env, 11.5), -60);
  // The change is sharp: within two steps of the burst's edges.
  t.true(envelopeAt(env, 10.48) === -60 && envelopeAt(env, 10.52) > -30);
});

const detect = detectWholeVideo;

/** The track whose faces sit in a person's panel. */
function trackOf(d: ShortDetections, panel: Box): number | undefined {
  const inPanel = d.tracks.filter((tr) => tr.samples.filter((s) => contains(panel, s.box)).length > tr.samples.length / 2);
  return inPanel.sort((a, b) => b.samples.length - a.samples.length)[0]?.id;
}

const overlap = (a: { start: number; end: number }, b: { start: number; end: number }) =>
  Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));

/** Seconds of heard speech, and of it the seconds whose turns name the heard person's track (null:
 *  named no track), over the segments. */
function namedShare(
  d: ShortDetections,
  turns: SpeakerTurn[],
  video: LipsyncVideo,
  heardTrack: (seg: LipsyncVideo['segments'][number]) => number | null,
): { speech: number; named: number } {
  let speech = 0;
  let named = 0;
  for (const seg of video.segments) {
    for (const s of d.speech) {
      const span = { start: Math.max(s.start, seg.start), end: Math.min(s.end, seg.end) };
      if (span.end <= span.start) continue;
      speech += span.end - span.start;
      named += turns.filter((turn) => turn.trackId === heardTrack(seg)).reduce((sum, turn) => sum + overlap(turn, span), 0);
    }
  }
  return { speech, named };
}

/** Share of the speech's sample times at which the planned window holds the heard person's face. */
function windowShare(d: ShortDetections, video: LipsyncVideo, heardTrack: number): number {
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  const samples = d.tracks.find((tr) => tr.id === heardTrack)!.samples;
  const inSpeech = samples.filter(
    (s) =>
      d.speech.some((x) => s.time >= x.start && s.time < x.end) && video.segments.some((seg) => s.time >= seg.start && s.time < seg.end),
  );
  return inSpeech.filter((s) => contains(interpolate(r.keyframes, s.time), s.box)).length / inSpeech.length;
}

/** The heard person talks in step with the sound while the other's lips move in each segment as
 *  `others` says. */
async function checkHeard(t: ExecutionContext, heard: 0 | 1, others: PanelShow[]) {
  const other = (1 - heard) as 0 | 1;
  const segments: LipsyncSegment[] = others.map((show_) => {
    const show: LipsyncSegment['show'] = ['still', 'still'];
    show[heard] = { talkShiftSec: 0 };
    show[other] = show_;
    return { show, voice: heard };
  });
  const video = await composeLipsync(dir, segments);
  const d = await detect(video);
  const ids = video.panels.map((p) => trackOf(d, p));
  t.true(ids[0] !== undefined && ids[1] !== undefined && ids[0] !== ids[1], 'a track for each person');
  const heardId = ids[heard]!;
  const synced = namedShare(d, d.turns, video, () => heardId);
  const byMotion = namedShare(d, attributeSpeakers(d.tracks, d.speech, { start: d.start, end: d.end }, d.sampleFps), video, () => heardId);
  const window = windowShare(d, video, heardId);
  t.log(`turns ${JSON.stringify(d.turns)}`);
  t.log(
    `person ${heard} heard: their track named for ${((100 * synced.named) / synced.speech).toFixed(1)}% of ${synced.speech.toFixed(2)} s of speech ` +
      `(by mouth motion alone ${((100 * byMotion.named) / byMotion.speech).toFixed(1)}%); the window on them ${(100 * window).toFixed(1)}% of it`,
  );
  t.true(synced.speech > 2.5, 'speech is heard');
  t.true(synced.named / synced.speech >= 0.8);
  t.true(window >= 0.8);
}

// The other mouths their own words without pause, from a different point in each segment, so their
// lips move as much and are out of step.
const MOUTHING: PanelShow[] = [{ mouthFromSec: 0.3 }, { mouthFromSec: 1 }, { mouthFromSec: 0.6 }];
// The other talks too, starting and stopping about when the voice does, a few hundred ms out of step
// with it: only the syllables tell the two apart (by mouth motion alone person 1 takes 80 % of
// person 0's voice).
const TALKING_OUT_OF_STEP: PanelShow[] = [{ talkShiftSec: 0.3 }, { talkShiftSec: -0.25 }, { talkShiftSec: 0.35 }];

withMedia('the lips in step with the voice are the speaker, not the other lips that move (person 0 heard)', async (t) => {
  await checkHeard(t, 0, MOUTHING);
});

withMedia('the lips in step with the voice are the speaker, not the other lips that move (person 1 heard)', async (t) => {
  await checkHeard(t, 1, MOUTHING);
});

withMedia(
  'two people talking at once, one heard: the lips a few hundred ms out of step with the voice lose (person 0 heard)',
  async (t) => {
    await checkHeard(t, 0, TALKING_OUT_OF_STEP);
  },
);

withMedia(
  'two people talking at once, one heard: the lips a few hundred ms out of step with the voice lose (person 1 heard)',
  async (t) => {
    await checkHeard(t, 1, TALKING_OUT_OF_STEP);
  },
);

withMedia('a voice from off screen over a still person names nobody, and the window stays put on that face', async (t) => {
  const video = await composeLipsync(dir, [
    { show: ['still', 'absent'], voice: 1 },
    { show: ['idle', 'absent'], voice: 1 },
    { show: ['still', 'absent'], voice: 1 },
  ]);
  const d = await detect(video);
  t.is(d.tracks.length, 1);
  t.true(d.speech.reduce((sum, s) => sum + s.end - s.start, 0) > 2, 'the voice is heard');
  t.log(`turns ${JSON.stringify(d.turns)}`);
  t.true(d.turns.length > 0 && d.turns.every((turn) => turn.trackId === null), JSON.stringify(d.turns));
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  const windows = new Set(r.keyframes.map((k) => `${k.x},${k.y},${k.width},${k.height}`));
  t.is(windows.size, 1, `one window: ${JSON.stringify(r.keyframes)}`);
  t.true(
    d.tracks[0]!.samples.every((s) => contains(r.keyframes[0]!, s.box)),
    'the face wholly in it',
  );
});
