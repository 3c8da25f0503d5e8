import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createLogger } from '@shorts/common/logger';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Box, Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { contains, interpolate, planReframe, slices } from '@shorts/common/reframe/camera';
import { detectShorts } from '../node-agent/src/reframe/detect-shorts.js';
import { sharedFaceDetector } from '../node-agent/src/reframe/detector-factory.js';
import { ffprobe } from '../node-agent/src/media/ffmpeg.js';
import { cutCropClip } from '../node-agent/src/media/clips.js';
import { composeConversation, composeNoFaceVideo, gridClips, type ComposedVideo } from './helpers/grid.js';
import { FFMPEG } from './helpers/media.js';
import { boxesShownAt } from './helpers/reframe.js';
import { needing } from './helpers/requirements.js';

// The whole reframing chain on real footage: GRID speakers side by side on a 16:9 canvas, detected
// (BlazeFace ONNX, tracks, mouth activity, voice activity), the camera path planned, the crop clip
// rendered. Checked the way a viewer would: who is in the picture while they talk.

const log = createLogger({}, 'silent');
const execFileAsync = promisify(execFile);
const media = gridClips();
const OUT = { width: 1080, height: 1920 };
const FRAME = 1 / 25;
let dir: string;

test.before(async () => {
  if (media) dir = await mkdtemp(path.join(os.tmpdir(), 'reframe-e2e-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const maybe = needing({ media: Boolean(media) }).serial;

async function detect(video: {
  videoPath: string;
  wavPath: string;
  width: number;
  height: number;
  durationSec: number;
}): Promise<ShortDetections> {
  const detector = await sharedFaceDetector({ faceDetector: 'blazeface' }, log);
  const [found] = await detectShorts(
    {
      sourceFile: video.videoPath,
      sourceWidth: video.width,
      sourceHeight: video.height,
      wavPath: video.wavPath,
      shorts: [{ start: 0, end: video.durationSec }],
      signal: new AbortController().signal,
    },
    { ffmpegPath: FFMPEG, detector, log },
  );
  return found!;
}

/** The track whose faces sit in a person's panel. */
function trackOf(d: ShortDetections, panel: Box): number | undefined {
  const inPanel = d.tracks.filter((tr) => tr.samples.filter((s) => contains(panel, s.box)).length > tr.samples.length / 2);
  return inPanel.sort((a, b) => b.samples.length - a.samples.length)[0]?.id;
}

/** The track's box nearest `time` (within a sampling step). */
function boxNear(d: ShortDetections, id: number, time: number): Box | undefined {
  const samples = d.tracks.find((tr) => tr.id === id)?.samples ?? [];
  let best: { box: Box; dt: number } | undefined;
  for (const s of samples) {
    const dt = Math.abs(s.time - time);
    if (dt <= 1 / d.sampleFps && (!best || dt < best.dt)) best = { box: s.box, dt };
  }
  return best?.box;
}

/** Frame times (25 fps) within [start, end). */
function frames(start: number, end: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(start / FRAME) * FRAME; t < end - 1e-9; t += FRAME) out.push(t);
  return out;
}

/** Detected faces sliced by the window, or by a panel of a split, at their sample times: each face
 *  must be wholly in or wholly out of every box drawn. */
function facesCut(d: ShortDetections, r: Reframe): string[] {
  const cuts: string[] = [];
  for (const tr of d.tracks) {
    for (const s of tr.samples) {
      const shown = boxesShownAt(r, s.time);
      shown.forEach((box, i) => {
        if (slices(box, s.box)) cuts.push(`track ${tr.id} at ${s.time.toFixed(2)}${shown.length > 1 ? ` by panel ${i}` : ''}`);
      });
    }
  }
  return cuts;
}

/** Mean absolute frame-to-frame movement of the window centre, in pixels of the 1080x1920 output,
 *  while one person is followed: frame pairs across a change of segment (a cut) are not counted. */
function jitter(r: Reframe, spans: Array<{ start: number; end: number }>): number {
  let sum = 0;
  let n = 0;
  for (const span of spans) {
    for (const t of frames(span.start + FRAME, span.end)) {
      if (r.segments.some((s) => s.start > t - FRAME && s.start <= t)) continue;
      const a = interpolate(r.keyframes, t - FRAME);
      const b = interpolate(r.keyframes, t);
      const scale = OUT.width / b.width;
      sum += Math.hypot(b.x + b.width / 2 - (a.x + a.width / 2), b.y + b.height / 2 - (a.y + a.height / 2)) * scale;
      n++;
    }
  }
  return n ? sum / n : 0;
}

let conversation: ComposedVideo;
/** How far before the new speaker's first sound the cut to them may land. */
const TURN_ONSET_SEC = 0.25;

/** Where sound starts after silence and goes on for at least 0.3 s (a lip click is not a turn), by
 *  ffmpeg alone: the voice above 200 Hz (no hum) louder than -30 dB after at least 0.2 s without. */
async function soundStarts(videoPath: string): Promise<number[]> {
  const { stderr } = await execFileAsync(FFMPEG, [
    '-hide_banner',
    '-nostats',
    '-i',
    videoPath,
    '-vn',
    '-af',
    'highpass=f=200,silencedetect=n=-30dB:d=0.2',
    '-f',
    'null',
    '-',
  ]);
  const ends = [...stderr.matchAll(/silence_end: ([\d.]+)/g)].map((m) => Number(m[1]));
  const starts = [...stderr.matchAll(/silence_start: ([\d.]+)/g)].map((m) => Number(m[1]));
  return ends.filter((end) => (starts.find((start) => start > end) ?? Infinity) - end >= 0.3);
}

maybe(
  'two people taking turns: the window is on the talker ≥90% of the speech, on each new speaker within 1 s, and cuts no face',
  async (t) => {
    conversation = await composeConversation(dir, { turns: [0, 1, 0] });
    await checkConversation(t, conversation, true);
  },
);

maybe('the same with a listener who sways and breathes (slow zoom, a few pixels sideways)', async (t) => {
  await checkConversation(t, await composeConversation(dir, { turns: [0, 1, 0], listener: 'drift' }), false);
});

async function checkConversation(t: ExecutionContext, conversation: ComposedVideo, renderClip: boolean) {
  const d = await detect(conversation);
  const tracks = conversation.panels.map((p) => trackOf(d, p));
  t.true(
    tracks.every((id) => id !== undefined),
    `a track for each person: ${JSON.stringify(d.tracks.map((tr) => [tr.id, tr.samples.length]))}`,
  );
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  t.log(`segments ${JSON.stringify(r.segments.map((s) => [s.start, s.end, s.layout, s.tracks]))}, ${r.keyframes.length} keyframes`);
  t.log(`speech ${JSON.stringify(d.speech)}, turns ${JSON.stringify(d.turns)}, tracks ${JSON.stringify(tracks)}`);

  let onTalker = 0;
  let total = 0;
  for (const turn of conversation.turns) {
    if (turn.speaker === null || !turn.speech) continue;
    const id = tracks[turn.speaker]!;
    for (const time of frames(turn.speech.start, turn.speech.end)) {
      const face = boxNear(d, id, time);
      if (!face) continue;
      total++;
      if (contains(interpolate(r.keyframes, time), face)) onTalker++;
    }
    // Within 1 s of the turn (the talker's first word) and from then on to the last word.
    const late = frames(turn.speech.start + 1, turn.speech.end).filter((time) => {
      const face = boxNear(d, id, time);
      return face && !contains(interpolate(r.keyframes, time), face);
    });
    t.deepEqual(late, [], `on person ${turn.speaker} from 1 s after their first word at ${turn.speech.start.toFixed(2)}`);
  }
  t.log(`on the talking face ${onTalker}/${total} frames of speech (${((100 * onTalker) / total).toFixed(1)}%)`);
  // The plan knows the whole short, so the cut to a new speaker lands on their first sound (as ffmpeg
  // hears it), not a reaction time later, nor long before it while their lips get ready.
  const onsets = await soundStarts(conversation.videoPath);
  for (const [i, turn] of conversation.turns.entries()) {
    const before = conversation.turns[i - 1];
    if (!before || turn.speaker === null || before.speaker === turn.speaker || !turn.speech || !before.speech) continue;
    const id = tracks[turn.speaker]!;
    const heard = onsets.find((t) => t >= turn.start);
    const cut = r.segments.find((s) => s.tracks[0] === id && s.end > turn.speech!.start && s.start > before.speech!.start);
    t.truthy(heard !== undefined && cut, `a first sound and a segment framing person ${turn.speaker} for the turn at ${turn.start}`);
    const offset = cut!.start - heard!;
    t.log(
      `cut to person ${turn.speaker} at ${cut!.start.toFixed(3)}, first sound at ${heard!.toFixed(3)}: ${offset >= 0 ? '+' : ''}${offset.toFixed(3)} s`,
    );
    t.true(offset >= -TURN_ONSET_SEC && offset <= 1 / 8 + 1e-9, `cut ${offset.toFixed(3)} s from the turn's first sound`);
  }
  t.true(total > 50);
  t.true(onTalker / total >= 0.9, `${onTalker}/${total}`);
  t.deepEqual(facesCut(d, r), []);

  const speaking = conversation.turns.filter((x) => x.speech).map((x) => x.speech!);
  const moved = jitter(r, speaking);
  t.log(`jitter while one person talks: ${moved.toFixed(2)} px/frame of a 1080x1920 output`);
  // Under a pixel a frame on average: the talker's own head motion and the detector's noise must not
  // show as a wobbling picture.
  t.true(moved < 1, `jitter ${moved.toFixed(2)} px/frame`);

  if (!renderClip) return;
  // The crop clip along this path: 9:16, the short's length.
  const clip = path.join(dir, 'conversation-crop.mp4');
  const clipPath = planReframe(d, DEFAULT_DIRECTOR, { width: 720, height: 1280 });
  await cutCropClip(FFMPEG, {
    sourcePath: conversation.videoPath,
    out: clip,
    start: 0,
    end: conversation.durationSec,
    sourceWidth: conversation.width,
    sourceHeight: conversation.height,
    reframe: clipPath,
    encoder: 'libx264',
    workDir: path.join(dir, 'clip-work'),
  });
  const info = await ffprobe(clip);
  t.true(Math.abs(info.width / info.height - 9 / 16) < 0.01, `${info.width}x${info.height}`);
  t.true(Math.abs(info.durationSec - conversation.durationSec) < 0.15, `duration ${info.durationSec}`);

  // What a viewer sees: mid-way through each turn the clip's picture is the talker's part of the
  // source (the planned window), not the same-sized part around the other person.
  for (const turn of conversation.turns) {
    if (turn.speaker === null || !turn.speech) continue;
    const mid = (turn.speech.start + turn.speech.end) / 2;
    const other = boxNear(d, tracks[1 - turn.speaker]!, mid)!;
    const planned = interpolate(clipPath.keyframes, mid);
    const aroundOther = {
      ...planned,
      x: Math.min(Math.max(0, other.x + other.width / 2 - planned.width / 2), conversation.width - planned.width),
    };
    const shown = await thumbnailAt(clip, mid);
    const diffPlanned = meanAbsDiff(shown, await thumbnailAt(conversation.videoPath, mid, planned));
    const diffOther = meanAbsDiff(shown, await thumbnailAt(conversation.videoPath, mid, aroundOther));
    t.log(
      `person ${turn.speaker} at ${mid.toFixed(2)} s: clip vs planned window ${diffPlanned.toFixed(1)}, vs the other person ${diffOther.toFixed(1)} (grey levels)`,
    );
    t.true(diffPlanned < 12 && diffPlanned * 2 < diffOther, `person ${turn.speaker} at ${mid.toFixed(2)} s`);
  }
}

/** One frame at `time`, optionally a window of it, as 36x64 grey levels. */
async function thumbnailAt(file: string, time: number, window?: Box): Promise<Buffer> {
  const crop = window
    ? `crop=${Math.round(window.width)}:${Math.round(window.height)}:${Math.round(window.x)}:${Math.round(window.y)},`
    : '';
  const { stdout } = await execFileAsync(
    FFMPEG,
    ['-v', 'error', '-ss', time.toFixed(3), '-i', file, '-frames:v', '1', '-vf', `${crop}scale=36:64,format=gray`, '-f', 'rawvideo', '-'],
    { encoding: 'buffer', maxBuffer: 1 << 20 },
  );
  return stdout;
}

const meanAbsDiff = (a: Buffer, b: Buffer) => a.reduce((sum, v, i) => sum + Math.abs(v - b[i]!), 0) / a.length;

maybe('with two speakers allowed the same conversation is split screen, the talker on top', async (t) => {
  if (!conversation) conversation = await composeConversation(dir, { turns: [0, 1, 0] });
  const d = await detect(conversation);
  const r = planReframe(d, { facePaddingFactor: 1, maxSpeakersToFocus: 2 }, OUT);
  const tracks = conversation.panels.map((p) => trackOf(d, p));
  const split = r.segments.filter((s) => s.layout === 'split');
  t.true(split.length >= 2, JSON.stringify(r.segments));
  for (const turn of conversation.turns) {
    if (turn.speaker === null || !turn.speech) continue;
    const mid = (turn.speech.start + turn.speech.end) / 2;
    const key = r.keyframes.filter((k) => k.time <= mid).pop()!;
    t.is(key.panels?.length, 2);
    t.true(contains(key.panels![0]!, boxNear(d, tracks[turn.speaker]!, mid)!), `person ${turn.speaker} on top at ${mid}`);
  }
  t.deepEqual(facesCut(d, r), [], 'no panel (nor window) slices a detected face');
});

maybe('one still person talking alone off-centre: in frame, window movement 0 px', async (t) => {
  const alone = await composeConversation(dir, { turns: [0, 0], people: [0], centres: [0.3, 0.75] });
  const d = await detect(alone);
  const r = planReframe(d, DEFAULT_DIRECTOR, OUT);
  const id = trackOf(d, alone.panels[0]);
  t.not(id, undefined);
  const moves = new Set(r.keyframes.map((k) => `${k.x},${k.y},${k.width},${k.height}`));
  t.is(moves.size, 1, `one window: ${JSON.stringify(r.keyframes)}`);
  const w = r.keyframes[0]!;
  t.true(w.x >= 0 && w.x + w.width <= alone.width && w.y >= 0 && w.y + w.height <= alone.height);
  const samples = d.tracks.find((tr) => tr.id === id)!.samples;
  t.true(
    samples.every((s) => contains(w, s.box)),
    'the face always wholly in the window',
  );
  t.is(jitter(r, [{ start: 0, end: alone.durationSec }]), 0);
  t.deepEqual(facesCut(d, r), []);
});

maybe('no face: the fitted fallback, one keyframe, no movement; the crop clip renders it', async (t) => {
  const video = await composeNoFaceVideo(dir);
  const d = await detect(video);
  const r = planReframe(d, DEFAULT_DIRECTOR, { width: 720, height: 1280 });
  t.deepEqual(
    r.segments.map((s) => s.layout),
    ['fit'],
  );
  t.is(r.keyframes.length, 1);
  t.like(r.keyframes[0], { x: 0, y: 0, width: video.width, height: video.height });
  const clip = path.join(dir, 'no-face-crop.mp4');
  await cutCropClip(FFMPEG, {
    sourcePath: video.videoPath,
    out: clip,
    start: 0,
    end: video.durationSec,
    sourceWidth: video.width,
    sourceHeight: video.height,
    reframe: r,
    encoder: 'libx264',
    workDir: path.join(dir, 'no-face-work'),
  });
  const info = await ffprobe(clip);
  t.is(info.height, 720, "the source's own 9:16 window height (no upscaling)");
  t.true(Math.abs(info.width / info.height - 9 / 16) < 0.01, `${info.width}x${info.height}`);
  t.true(Math.abs(info.durationSec - video.durationSec) < 0.15);
});
