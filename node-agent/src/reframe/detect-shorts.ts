// Stage 80 of analysis, the detection half: for each short, the faces in its stretch of the source
// (sampled frames, tracked), how much each face's mouth moves, when speech is heard, and who speaks.
// The camera path is planned from this elsewhere (and again on a render with other director
// settings, without a new detection pass).
import type { FaceDetection, FaceTrack, ShortDetections } from '@shorts/common/reframe/types';
import type { Logger } from '@shorts/common/logger';
import type { FaceDetector } from './face-detector.js';
import { analysisSize, sampleFrames, type SampledFrame } from './frames.js';
import { cutFacePatches, mouthActivity, mouthOpenness, sameFaceLook, type FacePatches } from './mouth.js';
import { attributeSpeakers, type MouthTrack } from './speakers.js';
import { ShotTracker, type SceneScore } from './shots.js';
import { readWavRange, speechInAudio, type Interval } from './speech.js';
import { soundOnsets, speechEnvelope, type SpeechEnvelope } from './speech-envelope.js';
import { voiceChunks, type VoiceChunk } from './voices.js';
import { detectStrided } from './strided-detection.js';
import { credibleTracks, linkTracks, matchFaces, type FrameFaces, type LinkedTrack } from './tracks.js';
import { ZoomPassDetector } from './zoom-pass.js';

/** Frames analysed per second of a short: enough to see syllables move the mouth (4-5 a second). */
export const SAMPLE_FPS = 8;
/** The detector sees every second sampled frame; the frames between get interpolated faces. */
export const DETECT_STRIDE = 2;
/** Faces shorter than this in the sampled frames (pixels) show too few pixels of mouth for its
 *  opening and closing to be read against the voice; their mouth movement still counts. */
export const LIP_READ_MIN_FACE_PX = 36;
/** The short side of the frames small faces' mouths are read from (the source's own where smaller),
 *  and the faces (pixels tall in the analysis frame) that are small. Between two samples of a track
 *  the movement is compared in the detail frame when both have it, else in the analysis frame. */
export const DETAIL_SHORT_SIDE = 720;
export const DETAIL_BELOW_FACE_PX = 48;
/** A face after a cut is where one was before it when its centre is within this share of the face's
 *  height of that one's, and as large when within this share of its height (samePeopleAcross). */
const SAME_PLACE = 0.25;
const SAME_SIZE = 0.8;

export interface DetectShortsInput {
  sourceFile: string;
  sourceWidth: number;
  sourceHeight: number;
  shorts: Array<{ start: number; end: number }>;
  /** 16 kHz mono WAV of the whole source, already extracted by analyze-video, or of a stretch of it
   *  that starts `wavStartSec` into the source (a reframe-short child reads its short's alone). */
  wavPath: string;
  wavStartSec?: number;
  /** colour.ts hdrToSdrFilter of the source: the detector sees an HDR picture as a viewer does. */
  toBt709?: string | null;
  /** The source's display-matrix mirror (colour.ts SourceColour.orient): faces are seen upright. */
  orient?: string | null;
  signal: AbortSignal;
  onProgress?: (fraction: number) => void;
}

export interface DetectShortsDeps {
  ffmpegPath: string;
  detector: FaceDetector;
  log: Logger;
  /** Given what speaker attribution decides from, per short (bench/framing-tune.ts replays it). */
  onSpeakerEvidence?: (evidence: SpeakerEvidence) => void;
}

/** Everything attributeSpeakers reads for one short. */
export interface SpeakerEvidence {
  tracks: MouthTrack[];
  speech: Interval[];
  range: Interval;
  fps: number;
  envelope: SpeechEnvelope;
  /** The speech's voice prints: which pieces are said in one voice. */
  voices?: VoiceChunk[];
}

/** Time spent in each step, for the log and the benchmark. */
export interface DetectTimings {
  frames: number;
  /** Frames the detector ran on (the others got interpolated faces). */
  detections: number;
  /** Sampling, detection and patch cutting together (ffmpeg decodes while the detector runs). */
  decodeAndDetectMs: number;
  detectMs: number;
  /** Cutting mouth patches, then linking tracks, mouth activity and speaker turns. */
  trackMs: number;
  vadMs: number;
}

export async function detectShorts(input: DetectShortsInput, deps: DetectShortsDeps, timings?: DetectTimings): Promise<ShortDetections[]> {
  const total = input.shorts.reduce((sum, s) => sum + Math.max(0, s.end - s.start), 0) || 1;
  let done = 0;
  const results: ShortDetections[] = [];
  for (const short of input.shorts) {
    input.signal.throwIfAborted();
    const length = Math.max(0, short.end - short.start);
    const result = await detectShort(input, deps, short, (f) => input.onProgress?.((done + f * length) / total), timings);
    done += length;
    input.onProgress?.(done / total);
    results.push(result);
  }
  return results;
}

async function detectShort(
  input: DetectShortsInput,
  deps: DetectShortsDeps,
  range: Interval,
  onProgress: (fraction: number) => void,
  timings?: DetectTimings,
): Promise<ShortDetections> {
  const t0 = performance.now();
  if (!(range.end > range.start)) throw new Error(`a short must end after it starts (${range.start}-${range.end})`);
  // One read of the short's sound serves voice activity and the lip-sync envelope.
  const audio = await readSourceAudio(input, range);
  const envelope = speechEnvelope(audio);
  // A turn starts at its first sound, which voice activity may hear a little late.
  const speech = soundOnsets(await speechInAudio(audio, range, input.signal), envelope);
  const voices = voiceChunks(audio, speech);
  const t1 = performance.now();

  const seen = await sampleAndDetect(input, deps, range, onProgress);
  const { frames, toSource } = seen;
  const t2 = performance.now();

  // A cut behind people who stay where they are (a background's own cut) changes nothing framed.
  const boundaries = seen.shotTracker
    .boundaries(seen.sceneScores)
    .filter((b) => b.transition !== 'cut' || !samePeopleAcross(frames[b.index - 1]?.faces ?? [], frames[b.index]?.faces ?? []));
  const shots = seen.shotTracker.shots(range.start, range.end, boundaries, toSource);
  // No track crosses a shot boundary: a face at the same place after a cut is another shot's face.
  const linked = shots
    .flatMap((shot, k) => linkTracks(frames.slice(shot.firstSample, shots[k + 1]?.firstSample ?? frames.length)))
    .map((track, id) => ({ ...track, id }));
  const measured = credibleTracks(measureMouths(linked, toSource), shots, SAMPLE_FPS);
  // Who speaks is whose lips move in step with the voice, so the sound's envelope goes in too.
  deps.onSpeakerEvidence?.({ tracks: measured, speech, range, fps: SAMPLE_FPS, envelope, voices });
  const turns = attributeSpeakers(measured, speech, range, SAMPLE_FPS, {}, envelope, voices);
  // Openness served its purpose: the stored tracks keep what planning reads.
  const tracks: FaceTrack[] = measured.map((t) => ({ id: t.id, samples: t.samples.map(({ mouthOpen: _, ...s }) => s) }));
  const t3 = performance.now();
  if (timings) {
    timings.frames += frames.length;
    timings.detections += seen.detections;
    timings.decodeAndDetectMs += t2 - t1;
    timings.detectMs += seen.detectMs;
    timings.vadMs += t1 - t0;
    timings.trackMs += t3 - t2 + seen.patchMs;
  }
  deps.log.debug('short analysed', {
    start: range.start,
    end: range.end,
    frames: frames.length,
    shots: shots.length,
    tracks: tracks.length,
    turns: turns.length,
    ms: Math.round(t3 - t0),
  });
  return {
    version: 1,
    sourceWidth: input.sourceWidth,
    sourceHeight: input.sourceHeight,
    start: range.start,
    end: range.end,
    sampleFps: SAMPLE_FPS,
    speech: speech.map((s) => ({ start: round(s.start, 3), end: round(s.end, 3) })),
    tracks,
    turns: turns.map((t) => ({
      start: round(t.start, 3),
      end: round(t.end, 3),
      trackId: t.trackId,
      ...(t.confidence !== undefined ? { confidence: t.confidence } : {}),
      ...(t.runnerUp !== undefined ? { runnerUp: t.runnerUp } : {}),
    })),
    shots: shots.map(({ firstSample: _, ...shot }) => shot),
  };
}

/** A face's mouth patches, and from the detail frame too when the face is small. */
type MouthPatches = FacePatches & { detail?: FacePatches };
type PatchedFrame = FrameFaces<MouthPatches>;

/**
 * The short's frames sampled, their faces found (every DETECT_STRIDE-th frame, the others
 * interpolated) and each face's mouth patches cut, with the scene scores and shot tracker that find
 * its cuts and the time each step took.
 */
async function sampleAndDetect(
  input: DetectShortsInput,
  deps: DetectShortsDeps,
  range: Interval,
  onProgress: (fraction: number) => void,
): Promise<{
  frames: PatchedFrame[];
  toSource: { x: number; y: number };
  sceneScores: SceneScore[];
  shotTracker: ShotTracker;
  detectMs: number;
  detections: number;
  patchMs: number;
}> {
  const size = analysisSize(input.sourceWidth, input.sourceHeight);
  // Small faces' mouths are also read from the frame at twice the analysis size where the source has
  // it: a panel's faces of 3-5 % of the height are 11-18 px in the analysis frame, too few for their
  // mouths to show.
  const detailed = analysisSize(input.sourceWidth, input.sourceHeight, DETAIL_SHORT_SIDE);
  const detail = detailed.width > size.width ? detailed : undefined;
  const toSource = { x: input.sourceWidth / size.width, y: input.sourceHeight / size.height };
  const frames: PatchedFrame[] = [];
  let detectMs = 0;
  let detections = 0;
  let patchMs = 0;
  const sceneScores: SceneScore[] = [];
  const shotTracker = new ShotTracker();
  const sampled = sampleFrames(deps.ffmpegPath, input.sourceFile, range, {
    fps: SAMPLE_FPS,
    size,
    ...(detail ? { detail } : {}),
    toBt709: input.toBt709,
    orient: input.orient,
    signal: input.signal,
    sceneScores,
  });
  const changesShot = (frame: SampledFrame) => shotTracker.add(frame.time, frame.image);
  // Small faces of a wide shot (under some 5 % of the height) need a zoomed look now and then.
  const detector = new ZoomPassDetector(deps.detector);
  for await (const { frame, faces } of detectStrided(
    sampled,
    detector,
    DETECT_STRIDE,
    input.signal,
    (ms) => {
      detectMs += ms;
      detections++;
    },
    changesShot,
  )) {
    const p0 = performance.now();
    const closer = frame.detail;
    frames.push({
      time: frame.time,
      faces: faces.map((face) => ({
        face,
        data: {
          ...cutFacePatches(frame.image, face),
          ...(closer && face.height < DETAIL_BELOW_FACE_PX
            ? { detail: cutFacePatches(closer, scaleFace(face, closer.width / frame.image.width)) }
            : {}),
        },
      })),
    });
    patchMs += performance.now() - p0;
    onProgress(Math.min(1, (frame.time - range.start) / Math.max(1e-6, range.end - range.start)));
  }
  return { frames, toSource, sceneScores, shotTracker, detectMs, detections, patchMs };
}

/**
 * Whether a cut left the people as they were: two or more faces on each side of it, as many after as
 * before, each where one was, as large and alike to it. Only the picture behind them changed (a
 * background video's own cut, a screen behind a panel), so it is no shot change: tracks go on
 * across it, and neither attribution nor the camera starts afresh. One face is not enough: an
 * interview cuts between close-ups of two people in the same place and size.
 */
function samePeopleAcross(before: Array<FrameFace>, after: Array<FrameFace>): boolean {
  if (before.length < 2 || after.length !== before.length) return false;
  // Paired as the tracker pairs faces of consecutive samples, then held to tighter bounds: nobody moved.
  const pairs = matchFaces(
    before.map((f) => f.face),
    after.map((f) => f.face),
    1 / SAMPLE_FPS,
  );
  return pairs.length === before.length && pairs.every(([i, j]) => stayedPut(before[i]!, after[j]!));
}

type FrameFace = { face: FaceDetection; data: FacePatches };

/** The same face in the same place at the same size, on either side of a cut. */
function stayedPut(a: FrameFace, b: FrameFace): boolean {
  const height = Math.max(a.face.height, b.face.height);
  const near = (p: number, q: number) => Math.abs(p - q) <= SAME_PLACE * height;
  return (
    near(a.face.x + a.face.width / 2, b.face.x + b.face.width / 2) &&
    near(a.face.y + a.face.height / 2, b.face.y + b.face.height / 2) &&
    Math.min(a.face.height, b.face.height) >= SAME_SIZE * height &&
    sameFaceLook(a.data, b.data)
  );
}

/** Each linked track's samples in source pixels, with how much the mouth moved since the sample before. */
function measureMouths(linked: Array<LinkedTrack<MouthPatches>>, toSource: { x: number; y: number }): MouthTrack[] {
  const maxStep = 1.5 / SAMPLE_FPS;
  return linked.map((track) => ({
    id: track.id,
    lipsTooSmall: median(track.samples.map((s) => s.face.height)) < LIP_READ_MIN_FACE_PX,
    samples: track.samples.map((s, i) => {
      const prev = track.samples[i - 1];
      // Across a miss the mouth may have moved for other reasons; only consecutive samples compare.
      const activity =
        prev && s.time - prev.time <= maxStep
          ? prev.data.detail && s.data.detail
            ? mouthActivity(prev.data.detail, s.data.detail)
            : mouthActivity(prev.data, s.data)
          : 0;
      const f = s.face;
      return {
        time: round(s.time, 3),
        // Whole source pixels and three digits: a minute of two faces is about 95 kB of JSON.
        box: {
          x: Math.round(f.x * toSource.x),
          y: Math.round(f.y * toSource.y),
          width: Math.round(f.width * toSource.x),
          height: Math.round(f.height * toSource.y),
        },
        score: round(f.score, 3),
        mouthActivity: round(activity, 3),
        mouthOpen: mouthOpenness(s.data),
      };
    }),
  }));
}

const round = (v: number, digits: number) => Number(v.toFixed(digits));

/** A face found in the analysis frame, in the pixels of a frame `k` times as large. */
function scaleFace(face: FaceDetection, k: number): FaceDetection {
  return {
    x: face.x * k,
    y: face.y * k,
    width: face.width * k,
    height: face.height * k,
    score: face.score,
    keypoints: face.keypoints.map(([x, y]) => [x * k, y * k] as [number, number]),
  };
}

function median(xs: number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  return s.length ? s[s.length >> 1]! : 0;
}

/** The source's sound over `range`, from a WAV of the whole source or of a stretch starting at
 *  `wavStartSec`: the same samples either way, placed on the source's timeline. */
async function readSourceAudio(input: DetectShortsInput, range: Interval) {
  const offset = input.wavStartSec ?? 0;
  const read = await readWavRange(input.wavPath, { start: range.start - offset, end: range.end - offset });
  return { ...read, startSec: read.startSec + offset };
}
