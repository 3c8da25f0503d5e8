import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { stageProgress } from '@shorts/common/tasks/contract';
import { REFRAME_SHORT_STAGES, reframeShortOutputs } from '@shorts/common/tasks/reframe-short';
import type { ReframePlan } from '@shorts/common/tasks/analyze-video';
import type { StoredObject } from '@shorts/common/tasks/contract';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { planReframe } from '@shorts/common/reframe/camera';
import { detectShorts, SAMPLE_FPS } from '../reframe/detect-shorts.js';
import { sharedFaceDetector } from '../reframe/detector-factory.js';
import { cutCropClip, grabThumbnail } from '../media/clips.js';
import { hdrToSdrFilter, type SourceColour } from '../media/colour.js';
import { ffprobe } from '../media/ffmpeg.js';
import { readStoredSamples } from '../media/stored-audio.js';
import { writeWavPcm } from '../media/wav.js';
import type { TaskContext, TaskHandler } from './task-context.js';

// Stage 80 of analysis for one short or several: who is on screen and who speaks (detections), the
// camera path planned from them, and the crop clip cut along it. A whole-file analysis runs it over
// its shorts one after the other; a long source's shorts each get a reframe-short child that runs
// the same code (issue 22), so a short comes out the same either way.

/** What stage 80 needs of a task's context, whichever task runs it. */
type StageContext = Pick<TaskContext, 'config' | 'log' | 'signal' | 'host' | 'upload'>;

/** The source's frames and sound, as local files: the sound may be a stretch starting `wavStartSec`
 *  into the source. */
export interface ReframeSource {
  sourceFile: string;
  width: number;
  height: number;
  wavPath: string;
  wavStartSec?: number;
  /** The picture's colour (colour.ts): HDR is tone-mapped for the detector and the crop clip. */
  colour: SourceColour;
  /** The sound stream the analysis heard; the crop clip plays it. */
  audioStream?: number | null;
}

/**
 * Faces, tracks and speaker turns of each short (reframe/detect-shorts.ts). A detection that fails
 * for another reason than the task's end gives every short the camera's no-face fallback (a still
 * centred window, or the whole picture fitted) rather than failing the job: the shorts and their
 * transcript are still what the user asked for.
 */
export async function detectSpeakers(
  ctx: StageContext,
  jobId: string,
  source: ReframeSource,
  shorts: Array<{ start: number; end: number }>,
  onProgress: (f: number) => void,
): Promise<ShortDetections[]> {
  try {
    const detector = await sharedFaceDetector(ctx.config, ctx.log);
    const started = Date.now();
    const found = await detectShorts(
      {
        sourceFile: source.sourceFile,
        sourceWidth: source.width,
        sourceHeight: source.height,
        wavPath: source.wavPath,
        wavStartSec: source.wavStartSec,
        toBt709: hdrToSdrFilter(source.colour),
        orient: source.colour.orient ?? null,
        shorts,
        signal: ctx.signal,
        onProgress,
      },
      { ffmpegPath: ctx.config.ffmpegPath, detector, log: ctx.log },
    );
    ctx.log.info('speakers detected', {
      shorts: found.length,
      tracks: found.map((d) => d.tracks.length),
      turns: found.map((d) => d.turns.length),
      ms: Date.now() - started,
    });
    return found.map(compactDetections);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.error('speaker detection failed; the shorts get the still no-face framing', { jobId, err });
    return shorts.map((s) => nothingDetected(source, s));
  }
}

/** Detections with no face in them. Stored like real ones, so that a render of another shape plans
 *  its own fallback from them instead of stretching this short's window. */
function nothingDetected(source: { width: number; height: number }, short: { start: number; end: number }): ShortDetections {
  return {
    version: 1,
    sourceWidth: source.width,
    sourceHeight: source.height,
    start: short.start,
    end: short.end,
    sampleFps: SAMPLE_FPS,
    speech: [],
    tracks: [],
    turns: [],
  };
}

/** Detections travel in the task result and are stored with the job: sub-pixel digits and score
 *  decimals beyond what the camera can use only make them bigger. */
function compactDetections(d: ShortDetections): ShortDetections {
  const r = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;
  return {
    ...d,
    tracks: d.tracks.map((tr) => ({
      id: tr.id,
      samples: tr.samples.map((s) => ({
        time: r(s.time, 3),
        box: { x: r(s.box.x, 1), y: r(s.box.y, 1), width: r(s.box.width, 1), height: r(s.box.height, 1) },
        score: r(s.score, 3),
        mouthActivity: r(s.mouthActivity, 4),
      })),
    })),
  };
}

/** The i-th short's camera path, planned from its detections, and its crop clip and thumbnail cut
 *  along it and stored (named `short-<i>` by whichever task stores them). */
export async function cropShort(
  ctx: StageContext,
  dir: string,
  source: ReframeSource,
  short: { index: number; start: number; end: number },
  detections: ShortDetections,
  plan: ReframePlan,
  onProgress: (f: number) => void,
): Promise<{ crop: StoredObject; reframe: Reframe }> {
  const reframe = planReframe(detections, plan.director, plan.output);
  const clip = path.join(dir, `short-${short.index}.mp4`);
  const thumb = path.join(dir, `short-${short.index}.jpg`);
  await cutCropClip(
    ctx.config.ffmpegPath,
    {
      sourcePath: source.sourceFile,
      out: clip,
      start: short.start,
      end: short.end,
      sourceWidth: source.width,
      sourceHeight: source.height,
      reframe,
      sourceColour: source.colour,
      audioStream: source.audioStream ?? 0,
      encoder: ctx.host.nvencAvailable ? 'h264_nvenc' : 'libx264',
      workDir: path.join(dir, `short-${short.index}-work`),
    },
    { signal: ctx.signal, onProgress },
  );
  await grabThumbnail(ctx.config.ffmpegPath, clip, thumb, 0.5, ctx.signal);
  const [crop, cropThumb] = await Promise.all([
    ctx.upload(clip, reframeShortOutputs.short(short.index), 'video/mp4'),
    ctx.upload(thumb, reframeShortOutputs.shortThumbnail(short.index), 'image/jpeg'),
  ]);
  return {
    crop: { objectKey: crop.objectKey, sizeBytes: crop.sizeBytes, contentType: 'video/mp4', thumbnailKey: cropThumb.objectKey },
    reframe,
  };
}

/**
 * One short of a long source (a child of analyze-video): the source its parent stored, and only
 * the short's samples of the parent's analysis audio (one HTTP byte range), written as a WAV of that
 * stretch; then the same detection and crop as a whole-file analysis makes for it.
 */
export const reframeShort: TaskHandler<'reframe-short'> = {
  async run(ctx) {
    const p = ctx.payload;
    const dir = path.join(ctx.workDir, 'reframe');
    await mkdir(dir, { recursive: true });
    ctx.progress(stageProgress(REFRAME_SHORT_STAGES, 'downloading'), 'downloading');
    const sourceFile = path.join(dir, 'source');
    const wavPath = path.join(dir, 'short.wav');
    const { sampleRate, dataOffset } = p.audio;
    // The samples a whole-file read of this short takes (reframe/speech.ts readWavRange).
    const first = Math.floor(p.start * sampleRate);
    const last = Math.ceil(p.end * sampleRate);
    const [, samples] = await Promise.all([
      ctx.objects.fetch(p.source.objectKey, p.sourceUrl, sourceFile, ctx.signal),
      readStoredSamples(p.audioUrl, { dataOffset, first, last }, ctx.signal, { upToEnd: true }),
    ]);
    await writeWavPcm(wavPath, samples, sampleRate);
    const { colour } = await ffprobe(sourceFile, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal });
    const source: ReframeSource = {
      sourceFile,
      width: p.source.width,
      height: p.source.height,
      wavPath,
      wavStartSec: first / sampleRate,
      colour,
      audioStream: p.source.audioStream,
    };

    const stage = (name: 'detecting_speakers' | 'cropping') => (f: number) =>
      ctx.progress(stageProgress(REFRAME_SHORT_STAGES, name, f), name);
    ctx.progress(stageProgress(REFRAME_SHORT_STAGES, 'detecting_speakers'), 'detecting_speakers');
    const [detections] = await detectSpeakers(ctx, p.jobId, source, [{ start: p.start, end: p.end }], stage('detecting_speakers'));
    ctx.progress(stageProgress(REFRAME_SHORT_STAGES, 'cropping'), 'cropping');
    const { crop, reframe } = await cropShort(ctx, dir, source, p, detections!, p.reframePlan, stage('cropping'));
    return { crop, reframe, detections: detections! };
  },
};
