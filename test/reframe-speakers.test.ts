import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@shorts/common/logger';
import type { FaceDetection, ShortDetections } from '@shorts/common/reframe/types';
import { detectShorts } from '../node-agent/src/reframe/detect-shorts.js';
import { sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import { attributeSpeakers, type MouthTrack } from '../node-agent/src/reframe/speakers.js';
import { MOUTH, RIGID, mouthActivity, mouthOpenness, type FacePatches } from '../node-agent/src/reframe/mouth.js';
import { DEFAULT_CREDIBLE_TRACK, credibleTracks, linkTracks } from '../node-agent/src/reframe/tracks.js';
import { readWavRange, speechIn } from '../node-agent/src/reframe/speech.js';
import { writeWavPcm } from '../node-agent/src/media/wav.js';
import {
  composeConversation,
  composeNoFaceVideo,
  gridClips,
  sharedMediaDir,
  type ComposedVideo,
  type ListenerStyle,
} from './helpers/grid.js';
import { FFMPEG } from './helpers/media.js';
import { needing } from './helpers/requirements.js';
import { syntheticTrack } from './helpers/reframe-fixtures.js';

const log = createLogger({}, 'silent');
const haveMedia = Boolean(gridClips());
const withMedia = needing({ media: haveMedia });

function face(x: number, y = 100, width = 100): FaceDetection {
  return { x, y, width, height: width, score: 0.9, keypoints: [] };
}

test('a stretch of a WAV is read alone, channels averaged', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-wav-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const stereo = new Int16Array(16_000 * 2 * 2);
  for (let i = 0; i < 32_000; i++) {
    stereo[2 * i] = i % 1000;
    stereo[2 * i + 1] = (i % 1000) + 2;
  }
  await writeWavPcm(path.join(dir, 's.wav'), stereo, 16_000, 2);
  const part = await readWavRange(path.join(dir, 's.wav'), { start: 0.5, end: 0.75 });
  t.is(part.startSec, 0.5);
  t.is(part.samples.length, 4000);
  t.is(part.samples[0], (8000 % 1000) + 1);
  t.is(part.samples[3999], (11_999 % 1000) + 1);
  t.is((await readWavRange(path.join(dir, 's.wav'), { start: 1.9, end: 5 })).samples.length, 1600);
});

needing({ media: Boolean(sharedMediaDir()) })('speech in a stretch of a WAV is on the source clock', async (t) => {
  const media = sharedMediaDir();
  if (!media) throw new Error('unreachable: declared only when the media is there');
  // jfk.wav: continuous speech from about 0.3 s to 10.5 s.
  const speech = await speechIn(path.join(media, 'jfk.wav'), { start: 2, end: 6 });
  t.true(speech.length > 0);
  t.true(speech.every((s) => s.start >= 2 && s.end <= 6));
  t.true(speech.reduce((sum, s) => sum + s.end - s.start, 0) > 2.5);
});

/** Patches as cutFacePatches makes them: a mouth closed (a thin dark line between the lips) or open
 *  (a dark cavity), and a rigid part (the nose bridge) with a given texture. */
function patches(mouth: 'closed' | 'open', rigidTexture: (i: number) => number): FacePatches {
  const mw = MOUTH.w + 2 * MOUTH.margin;
  const m = new Float32Array(mw * (MOUTH.h + 2 * MOUTH.margin)).fill(0.4);
  const rows = mouth === 'open' ? [9, 10, 11, 12, 13, 14, 15] : [12];
  for (const y of rows) for (let x = 9; x < 21; x++) m[y * mw + x] = -1.6;
  const r = new Float32Array((RIGID.w + 2 * RIGID.margin) * (RIGID.h + 2 * RIGID.margin)).map((_, i) => rigidTexture(i));
  return { mouth: m, rigid: r };
}

test('a mouth that opens while the head turns keeps its activity; a still mouth stays still', (t) => {
  const front = (i: number) => Math.sin(i * 0.7) * 1.2;
  // Turned: the nose bridge seen from the side no longer resembles the frontal one at any shift.
  const turned = (i: number) => -Math.sin(i * 0.7) * 2 + 1.5 * Math.cos(i * 2.3);
  t.true(mouthOpenness(patches('open', front)) > mouthOpenness(patches('closed', front)) + 0.2, 'an open mouth is more open');
  const still = mouthActivity(patches('closed', front), patches('closed', front));
  const talking = mouthActivity(patches('closed', front), patches('open', front));
  const talkingWhileTurning = mouthActivity(patches('closed', front), patches('open', turned));
  const turningOnly = mouthActivity(patches('closed', front), patches('closed', turned));
  t.log({ still, talking, talkingWhileTurning, turningOnly });
  t.is(still, 0);
  t.true(talking > 0.1);
  // Before, a rigid part changed beyond recognition made the sample's activity 0.
  t.true(talkingWhileTurning > 0.1, `activity ${talkingWhileTurning} while the head turns`);
  t.true(turningOnly < 0.02, `a turn alone is not talking: ${turningOnly}`);
});

test('tracks keep each face through a one-second miss and do not swap two faces', (t) => {
  const frames = [];
  for (let i = 0; i < 40; i++) {
    const time = i / 8;
    // Face A drifts right; face B is missing for 1 s (turned away) in the middle.
    const faces = [{ face: face(100 + i * 3), data: 'A' }];
    if (i < 15 || i > 22) faces.push({ face: face(700 - i * 2), data: 'B' });
    frames.push({ time, faces: i % 2 ? faces.reverse() : faces });
  }
  // A stray false detection in one frame does not become a track.
  frames[5]!.faces.push({ face: face(400, 500, 40), data: 'stray' });
  const tracks = linkTracks(frames);
  t.is(tracks.length, 2);
  for (const track of tracks) t.true(track.samples.every((s) => s.data === track.samples[0]!.data));
  t.deepEqual(tracks.map((tr) => tr.samples.length).sort(), [32, 40]);
});

test('a face that comes back after a long absence starts a new track', (t) => {
  const frames = [];
  for (let i = 0; i < 40; i++) frames.push({ time: i / 8, faces: i < 10 || i >= 30 ? [{ face: face(300), data: i }] : [] });
  t.is(linkTracks(frames).length, 2);
});

test('a face the detector is never sure of, seen in part of its shot, is dropped; a real one as unsure but there all along is kept', (t) => {
  const fps = 8;
  // Two shots: B-roll over 0-5 s, then a wide shot over 5-15 s.
  const shots = [
    { start: 0, end: 5, transition: 'start' as const },
    { start: 5, end: 15, transition: 'cut' as const },
  ];
  const track = (id: number, from: number, to: number, score: number) => ({
    id,
    samples: Array.from({ length: Math.round((to - from) * fps) }, (_, i) => ({
      time: from + i / fps,
      box: { x: 100 * id, y: 100, width: 60, height: 60 },
      score,
      mouthActivity: 0.2,
    })),
  });
  const doubtful = DEFAULT_CREDIBLE_TRACK.unsureScore - 0.1;
  const tracks = [
    // A "face" in the B-roll's moving pattern for 2 of its 5 s, never scored high.
    track(0, 1, 3, doubtful),
    // A small face in the wide shot, as doubtful, but there the whole shot.
    track(1, 5, 15, doubtful),
    // A face the detector was sure of, however briefly.
    track(2, 6, 7, DEFAULT_CREDIBLE_TRACK.unsureScore + 0.05),
  ];
  t.deepEqual(
    credibleTracks(tracks, shots, fps).map((x) => x.id),
    [1, 2],
  );
});

test("who speaks: the moving mouth during speech, no flicker on a listener's short burst, null when no mouth moves", (t) => {
  const fps = 8;
  // Track 0 talks 0-5 s, track 1 talks 5-10 s; track 1 smiles (0.3 s of mouth movement) at 2 s.
  const a = syntheticTrack(0, fps, 10, (s) => (s < 5 ? 0.12 + 0.05 * Math.sin(s * 20) : 0.01));
  const b = syntheticTrack(1, fps, 10, (s) => (s >= 5 ? 0.12 + 0.05 * Math.sin(s * 20) : s >= 2 && s < 2.3 ? 0.3 : 0.01));
  const speech = [
    { start: 0.5, end: 4.8 },
    { start: 5.3, end: 9.5 },
  ];
  const turns = attributeSpeakers([a, b], speech, { start: 0, end: 10 }, fps);
  t.deepEqual(
    turns.map((x) => x.trackId),
    [0, 1],
  );
  t.is(turns[0]!.start, 0.5);
  t.is(turns[1]!.end, 9.5);
  // Speech over two faces whose mouths stay still (a voice-over): nobody visible speaks.
  const still = [syntheticTrack(0, fps, 10, () => 0.01), syntheticTrack(1, fps, 10, () => 0.02)];
  t.deepEqual(
    attributeSpeakers(still, speech, { start: 0, end: 10 }, fps).map((x) => x.trackId),
    [null],
  );
  t.deepEqual(attributeSpeakers([a, b], [], { start: 0, end: 10 }, fps), []);
  // One answer right after the other, inside one stretch of speech: the change lands on the turn.
  const joined = attributeSpeakers([a, b], [{ start: 0.5, end: 9.5 }], { start: 0, end: 10 }, fps);
  t.deepEqual(
    joined.map((x) => x.trackId),
    [0, 1],
  );
  t.true(Math.abs(joined[1]!.start - 5) <= 0.25, `switch at ${joined[1]!.start}`);
  t.is(joined[0]!.end, joined[1]!.start);
  // The speaker looks away for 0.75 s (no face detected): the turn stays theirs.
  const away = { ...a, samples: a.samples.filter((x) => x.time < 2 || x.time >= 2.75) };
  t.deepEqual(
    attributeSpeakers([away, b], speech, { start: 0, end: 10 }, fps).map((x) => x.trackId),
    [0, 1],
  );
});

test('who speaks: a listener whose mouth is busy wins their own turn, where it moves far more; a mouth as busy in silence as in speech does not', (t) => {
  const fps = 8;
  const speech = [
    { start: 0.5, end: 4 },
    { start: 7, end: 11 },
  ];
  const range = { start: 0, end: 12 };
  const talks = (s: number) => 0.12 + 0.05 * Math.sin(s * 20);
  // Track 0 talks first. Track 1's mouth moves all the while it listens (chewing, mouthing along:
  // near the cap of what attribution counts), then it talks, its mouth moving three times as much.
  const first = syntheticTrack(0, fps, 12, (s) => (s < 4 ? talks(s) : 0.01));
  const busy = syntheticTrack(1, fps, 12, (s) => (s >= 7 && s < 11 ? 0.5 + 0.05 * Math.sin(s * 20) : 0.17));
  t.deepEqual(
    attributeSpeakers([first, busy], speech, range, fps).map((x) => x.trackId),
    [0, 1],
  );
  // A mouth that moves as much in the silences as during the second stretch is no sign of its speech.
  const always = syntheticTrack(1, fps, 12, (s) => (s >= 4 ? 0.5 + 0.05 * Math.sin(s * 20) : 0.01));
  t.deepEqual(
    attributeSpeakers([first, always], speech, range, fps).map((x) => x.trackId),
    [0, null],
  );
});

test("who speaks: a new speaker wins the voice as they start, not once the last speaker's match with it has faded", (t) => {
  const fps = 8;
  const seconds = 8;
  // Syllables of varied loudness, four a second. Track 0 says them 0.5-3.5 s, its lips in step with
  // them; track 1 from 3.6 s on, its lips read less cleanly (opening a beat before the sound, at an
  // angle, with noise), as a new speaker's often are. Each mouth barely moves otherwise.
  const loudness = (s: number) => 0.3 + 0.7 * Math.abs(Math.sin(1.7 * Math.floor(4 * s))) * Math.sin(Math.PI * ((4 * s) % 1));
  const talking = (who: 0 | 1, s: number) => (who === 0 ? s >= 0.5 && s < 3.5 : s >= 3.6 && s < 7.5);
  const openness = (who: 0 | 1, i: number) => {
    const s = i / fps;
    if (!talking(who, s)) return 0.02 + 0.01 * Math.sin(3 * i + who);
    return who === 0 ? loudness(s) : 0.6 * loudness(s - 0.1) + 0.25 * Math.abs(Math.sin(7.3 * i));
  };
  const track = (who: 0 | 1): MouthTrack => ({
    id: who,
    samples: Array.from({ length: seconds * fps }, (_, i) => ({
      time: i / fps,
      box: { x: who * 500, y: 100, width: 100, height: 100 },
      score: 0.9,
      mouthOpen: openness(who, i),
      mouthActivity: Math.abs(openness(who, i) - openness(who, i - 1)) + 0.01,
    })),
  });
  const rate = 100;
  const values = Float32Array.from({ length: seconds * rate }, (_, i) => {
    const s = i / rate;
    return talking(0, s) || talking(1, s) ? -40 + 30 * loudness(s) : -60;
  });
  const turns = attributeSpeakers(
    [track(0), track(1)],
    [{ start: 0.5, end: 7.5 }],
    { start: 0, end: seconds },
    fps,
    {},
    { start: 0, rate, values },
  );
  t.deepEqual(
    turns.map((x) => x.trackId),
    [0, 1],
    JSON.stringify(turns),
  );
  // The change comes within the new speaker's first syllables (0.65 s late when the resting last
  // speaker's earlier match still competed for the voice).
  t.true(turns[1]!.start - 3.6 <= 0.35, `track 1 from ${turns[1]!.start} s`);
});

test('who speaks: the trace shows each stage attribution weighs, in order, ending on the figures the choice is made from', (t) => {
  const fps = 8;
  const seconds = 6;
  // Track 0 talks 1-5 s, its lips opening and closing with the voice's syllables; track 1 barely moves.
  const loudness = (s: number) => 0.3 + 0.7 * Math.abs(Math.sin(Math.PI * ((4 * s) % 1)));
  const heard = (s: number) => s >= 1 && s < 5;
  const open = (who: number, i: number) => (who === 0 && heard(i / fps) ? loudness(i / fps) : 0.03 + 0.01 * Math.sin(3 * i + who));
  const track = (who: number): MouthTrack => {
    const still = syntheticTrack(who, fps, seconds, () => 0);
    return {
      ...still,
      samples: still.samples.map((sample, i) => ({
        ...sample,
        mouthOpen: open(who, i),
        mouthActivity: Math.abs(open(who, i) - open(who, i - 1)) + 0.01,
      })),
    };
  };
  const rate = 100;
  const values = Float32Array.from({ length: seconds * rate }, (_, i) => (heard(i / rate) ? -40 + 30 * loudness(i / rate) : -60));
  const stages: string[] = [];
  let last: Float64Array[] = [];
  let grid: number[] = [];
  const turns = attributeSpeakers(
    [track(0), track(1)],
    [{ start: 1, end: 5 }],
    { start: 0, end: seconds },
    fps,
    {},
    { start: 0, rate, values },
    [],
    (stage, g, signals) => {
      stages.push(stage);
      last = signals.map((v) => Float64Array.from(v));
      grid = g;
    },
  );
  t.deepEqual(stages, ['relative activity', 'after silence contrast', 'lip-sync weights', 'after lip sync', 'after voices']);
  t.deepEqual(
    turns.map((x) => x.trackId),
    [0],
  );
  // What the choice was made from: the talker's figure over the speech well ahead of the still face's.
  const during = (k: number) => grid.flatMap((g, i) => (heard(g) ? [last[k]![i]!] : [])).reduce((a, b) => a + b, 0);
  t.true(during(0) > 2 * during(1), `${during(0)} against ${during(1)}`);
});

/** The track whose boxes sit in the panel of GRID person `person`. */
function trackOf(d: ShortDetections, video: ComposedVideo, person: 0 | 1): number | undefined {
  const panel = video.panels[person];
  return d.tracks.find((tr) =>
    tr.samples.every((s) => {
      const cx = s.box.x + s.box.width / 2;
      const cy = s.box.y + s.box.height / 2;
      return cx > panel.x && cx < panel.x + panel.width && cy > panel.y && cy < panel.y + panel.height;
    }),
  )?.id;
}

function overlap(a: { start: number; end: number }, b: { start: number; end: number }): number {
  return Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
}

async function checkConversation(t: ExecutionContext, turns: Array<0 | 1>, listener: ListenerStyle, tight?: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-speakers-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const video = await composeConversation(dir, { turns, listener, ...(tight !== undefined ? { tight } : {}) });
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);
  const progress: number[] = [];
  const [d] = await detectShorts(
    {
      sourceFile: video.videoPath,
      sourceWidth: video.width,
      sourceHeight: video.height,
      shorts: [{ start: 0, end: video.durationSec }],
      wavPath: video.wavPath,
      signal: new AbortController().signal,
      onProgress: (f) => progress.push(f),
    },
    { ffmpegPath: FFMPEG, detector, log },
  );
  t.log('speech', JSON.stringify(d!.speech));
  t.log('turns', JSON.stringify(d!.turns));
  t.is(progress.at(-1), 1);
  t.is(d!.tracks.length, 2, 'one track per person');
  const ids = [trackOf(d!, video, 0), trackOf(d!, video, 1)];
  t.true(ids[0] !== undefined && ids[1] !== undefined && ids[0] !== ids[1], 'each track stays on its person');
  // Every sampled frame has both faces.
  for (const tr of d!.tracks) t.true(tr.samples.length >= Math.floor(video.durationSec * d!.sampleFps) - 1);

  let heard = 0;
  let right = 0;
  for (const seg of video.turns) {
    const talker = ids[seg.speaker!]!;
    const heardHere = d!.speech.reduce((sum, s) => sum + overlap(s, seg), 0);
    t.true(heardHere > 0.8, `speech heard while person ${seg.speaker} talks`);
    heard += heardHere;
    for (const s of d!.speech) {
      const span = { start: Math.max(s.start, seg.start), end: Math.min(s.end, seg.end) };
      if (span.end <= span.start) continue;
      right += d!.turns.filter((turn) => turn.trackId === talker).reduce((sum, turn) => sum + overlap(turn, span), 0);
    }
  }
  t.log(`the talking person's track named for ${((100 * right) / heard).toFixed(1)}% of the speech time`);
  t.true(right / heard >= 0.9);
  // Each stored turn says how sure it is; a still or swaying listener leaves no doubt.
  t.true(
    d!.turns.every((turn) => turn.confidence !== undefined && turn.confidence >= 0.3 && turn.confidence <= 1),
    'turn confidence',
  );
  // And names the likeliest other choice: the other person (the pair a doubtful turn shows split), or nobody.
  for (const turn of d!.turns)
    t.true(turn.runnerUp === null || (ids.includes(turn.runnerUp!) && turn.runnerUp !== turn.trackId), `runner-up ${turn.runnerUp}`);
  // Each change of speaker: the new speaker's turn begins within 1 s of their first word.
  for (const [i, seg] of video.turns.entries()) {
    if (i === 0 || video.turns[i - 1]!.speaker === seg.speaker) continue;
    const first = d!.turns.find((turn) => turn.trackId === ids[seg.speaker!] && turn.end > seg.start);
    t.truthy(first);
    t.true(first!.start <= seg.speech!.start + 1, `turn to person ${seg.speaker} at ${first!.start}, first word at ${seg.speech!.start}`);
  }
}

withMedia.serial('two people taking turns side by side: the turns name the one talking, the still one is not picked', async (t) => {
  await checkConversation(t, [0, 1, 0, 1], 'still');
});

withMedia.serial('a listener who sways and zooms a little is not picked', async (t) => {
  await checkConversation(t, [1, 0, 1], 'drift');
});

withMedia.serial(
  'a real person not speaking (blinks, breath, small movements) is not picked, with answers 0.3 s after the question',
  async (t) => {
    await checkConversation(t, [0, 1, 0, 1], 'idle', 0.15);
  },
);

withMedia.serial('a listener who nods is not picked', async (t) => {
  await checkConversation(t, [1, 0], 'nod');
});

withMedia.serial('a video with no face gives no tracks, and its speech no visible speaker', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-noface-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const video = await composeNoFaceVideo(dir);
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);
  const [d] = await detectShorts(
    {
      sourceFile: video.videoPath,
      sourceWidth: video.width,
      sourceHeight: video.height,
      shorts: [{ start: 0.2, end: 2.8 }],
      wavPath: video.wavPath,
      signal: new AbortController().signal,
    },
    { ffmpegPath: FFMPEG, detector, log },
  );
  t.deepEqual(d!.tracks, []);
  t.true(d!.speech.length > 0);
  t.true(d!.turns.length > 0 && d!.turns.every((turn) => turn.trackId === null));
  t.is(d!.start, 0.2);
  t.is(d!.end, 2.8);
});

withMedia.serial('an aborted detection stops', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-abort-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const video = await composeNoFaceVideo(dir);
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface', faceDetectorModel: undefined }, log);
  const abort = new AbortController();
  await t.throwsAsync(
    detectShorts(
      {
        sourceFile: video.videoPath,
        sourceWidth: video.width,
        sourceHeight: video.height,
        shorts: [{ start: 0, end: 3 }],
        wavPath: video.wavPath,
        signal: abort.signal,
        onProgress: (f) => f > 0.2 && abort.abort(new Error('cancelled')),
      },
      { ffmpegPath: FFMPEG, detector, log },
    ),
    { message: 'cancelled' },
  );
});

test('who speaks: a turn given to a face too small for lip sync is held less sure than its margin says, so the camera hedges sooner', (t) => {
  const fps = 8;
  const speech = [{ start: 0.5, end: 4.5 }];
  // Each small face is judged against its own rest: the speaker's mouth patch is still outside the
  // speech and moves in it, the listener's patch jitters the same all along.
  const talking = (s: number) => (s >= 0.5 && s < 4.5 ? 0.12 + 0.05 * Math.sin(s * 20) : 0.02);
  const small = (id: number, activity: (s: number) => number) => ({ ...syntheticTrack(id, fps, 5, activity), lipsTooSmall: true });
  const tracks = [small(0, talking), small(1, (s) => 0.05 + 0.01 * Math.sin(s * 7))];
  const [asMeasured] = attributeSpeakers(tracks, speech, { start: 0, end: 5 }, fps, { smallFaceConfidence: 1 });
  const [held] = attributeSpeakers(tracks, speech, { start: 0, end: 5 }, fps);
  t.is(asMeasured!.trackId, 0);
  t.is(held!.trackId, 0);
  t.true(asMeasured!.confidence! > 0.2, `confidence ${asMeasured!.confidence}`);
  t.is(held!.confidence, Math.round(100 * asMeasured!.confidence! * 0.6) / 100);
  // A face whose lips can be read keeps its margin.
  const readable = tracks.map(({ lipsTooSmall: _, ...track }) => track);
  const [plain] = attributeSpeakers(readable, speech, { start: 0, end: 5 }, fps);
  t.is(plain!.confidence, attributeSpeakers(readable, speech, { start: 0, end: 5 }, fps, { smallFaceConfidence: 1 })[0]!.confidence);
});
