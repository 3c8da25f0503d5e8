import { access, readFile, stat, writeFile } from 'node:fs/promises';
import { decodes, rasteriseSvg, sniffImage, stillPng } from '@shorts/common/media/image';
import path from 'node:path';
import { resolveCaptionStyle } from '@shorts/common/render/presets';
import { stageProgress } from '@shorts/common/tasks/contract';
import { RENDER_STAGES, renderShortOutputs, type RenderSplit } from '@shorts/common/tasks/render-short';
import type { TaskLeasePayload, TaskResult } from '@shorts/common/tasks/contracts';
import { planWithOverrides } from '@shorts/common/reframe/overrides';
import { FfmpegError, ffprobe, runFfmpeg, type ProbeResult } from '../media/ffmpeg.js';
import { clearDisplayMatrix } from '../media/orientation.js';
import { assPathFor, prepareRender, type RenderSpec } from '../media/render-args.js';
import { clipRanges } from '../media/jump-cut-graph.js';
import { gopFramesFor, joinChunks, planChunkCuts, probeFrameTimes, SOUND_SHARE_OF_RENDER } from '../media/render-chunks.js';
import { editedDuration, planJumpCuts, type JumpCutPlan } from '@shorts/common/render/jump-cuts';
import { cutsAnything, cutsSilences } from '@shorts/common/options/editing';
import { clipSpeech } from '../media/clip-speech.js';
import { isBundledFfmpeg } from '@shorts/common/media/tools';
import { grabThumbnail } from '../media/clips.js';
import { measureLoudness } from '../media/sound.js';
import { downloadObject, downloadSource } from './download.js';
import { fetchSourceStretch } from './source-stretch.js';
import type { StretchNeed } from '../media/mp4-stretch.js';
import { TaskError, type TaskContext, type TaskHandler } from './task-context.js';
import { checkSourceLimits } from './analyze-video.js';

const WATERMARK_MAX_BYTES = 10_000_000;

/** What a render and each of its chunks set up alike: the source, watermark, crop path and cuts. */
export async function prepareRenderSpec(
  ctx: TaskContext<'render-short'> | TaskContext<'render-chunk'>,
  p: TaskLeasePayload<'render-short'>,
  out: string,
  /** A chunk's: the stretch of the source it reads (./source-stretch.ts). Absent: all of it. */
  stretch?: StretchNeed,
): Promise<{ spec: RenderSpec; info: ProbeResult }> {
  const source = path.join(ctx.workDir, 'source.mp4');
  await fetchRenderSource(ctx, p, source, stretch);
  const info = await ffprobe(source, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal }).catch(() => undefined);
  if (!info?.width || !info.height) throw new TaskError("The job's source video could not be read", 'SOURCE_MISSING');
  checkSourceLimits(info, ctx.config);

  let watermark: RenderSpec['watermark'];
  const wm = p.options.waterMark;
  if (p.watermark && wm) {
    let image = path.join(ctx.workDir, 'watermark');
    if (p.watermarkObjectUrl) await downloadObject(p.watermarkObjectUrl, image, ctx.signal);
    else await downloadSource(ctx, p.watermark.url!, image, WATERMARK_MAX_BYTES, 'the watermark image (options.waterMark.waterMarkUrl)');
    // Judged by its bytes; an SVG reaches the renderer only as a PNG rasterised from clean markup.
    const bytes = await readFile(image);
    const kind = sniffImage(bytes);
    if (!kind || (kind !== 'svg' && !(await decodes(bytes))))
      throw new TaskError('The watermark is not a PNG, JPEG, WebP, GIF or SVG image', 'WATERMARK_FORMAT');
    image = path.join(ctx.workDir, 'watermark.png');
    await writeFile(image, kind === 'svg' ? await rasteriseSvg(bytes) : await stillPng(bytes));
    watermark = {
      imagePath: image,
      left: wm.left,
      top: wm.top,
      bottom: wm.bottom,
      width: wm.width,
      opacity: wm.opacity === undefined ? 1 : Number(wm.opacity),
      blendMode: wm.blendMode ?? 'normal',
    };
  }

  let reframe = p.reframe;
  if (p.recompute) {
    reframe = planWithOverrides(p.recompute.detections, p.recompute.director, p.output, p.recompute.overrides);
    ctx.log.info('camera path recomputed', { renderId: p.renderId, director: p.recompute.director, keyframes: reframe.keyframes.length });
  }

  // Jump cuts are planned here, where the source's frame rate is known: cuts land on its frames.
  // Silences need voice activity: the analysis's when it stored some, else heard here.
  let speech = p.speech;
  if (cutsSilences(p.options.editing) && !speech?.length && info.hasAudio) {
    speech = await clipSpeech(
      ctx.config.ffmpegPath,
      source,
      { start: p.startTime, end: p.endTime },
      ctx.workDir,
      ctx.signal,
      p.audioStream,
    ).catch((err) => {
      if (ctx.signal.aborted) throw err;
      // A render is not lost for want of voice activity: the words alone then say where speech is.
      ctx.log.warn('voice activity unavailable: silences from word timings alone', { renderId: p.renderId, err });
      return null;
    });
    ctx.log.info('voice activity heard for jump cuts', { renderId: p.renderId, intervals: speech?.length ?? 0 });
  }
  const edit = cutsAnything(p.options.editing)
    ? planJumpCuts({ start: p.startTime, end: p.endTime, words: p.words, speech, editing: p.options.editing, fps: info.fps })
    : null;
  if (edit)
    ctx.log.info('jump cuts planned', {
      renderId: p.renderId,
      cuts: edit.cuts.length,
      removedSec: edit.removedSec,
      fillers: edit.fillerWords.length,
    });

  const constantRate = isVariableRate(info) ? Math.min(60, Math.round(info.peakFps! * 1000) / 1000) : undefined;
  const spec: RenderSpec = {
    sourcePath: source,
    startTime: p.startTime,
    endTime: p.endTime,
    words: p.words,
    output: { ...p.output, path: out },
    reframe,
    caption: { style: resolveCaptionStyle(p.captionPreset, p.options.style), maxWordsInPage: p.options.maxWordsInPage ?? 4 },
    watermark,
    encoder: ctx.host.nvencAvailable ? 'h264_nvenc' : 'libx264',
    legacyFfmpeg: isBundledFfmpeg(ctx.config.ffmpegPath),
    workDir: ctx.workDir,
    sourceWidth: info.width,
    sourceHeight: info.height,
    sourceColour: info.colour,
    audioStream: p.audioStream ?? 0,
    ...(info.interlaced ? { interlaced: true } : {}),
    ...(info.hasAudio ? {} : { noSoundTrack: true }),
    ...(constantRate ? { constantRate } : {}),
    // Counted in the frames the encoder gets: a variable-rate source's at the constant rate.
    gopFrames: gopFramesFor(constantRate ?? info.fps),
    ...(edit?.cuts.length ? { edit, sourceFps: info.fps, sourceHasAudio: info.hasAudio } : {}),
  };
  return { spec, info };
}

/**
 * The source at `dest`. A render (or its split) reads all of it, through this host's cache: renders
 * of one job's shorts share this host's copy. A chunk reads only its stretch, fetched by byte ranges
 * (issue 35), unless this host holds the whole file already.
 */
async function fetchRenderSource(
  ctx: TaskContext<'render-short'> | TaskContext<'render-chunk'>,
  p: TaskLeasePayload<'render-short'>,
  dest: string,
  stretch: StretchNeed | undefined,
): Promise<void> {
  if (!stretch) {
    await ctx.objects.fetch(p.sourceObjectKey, p.sourceUrl, dest, ctx.signal);
    return;
  }
  if (await ctx.objects.reuse(p.sourceObjectKey, p.sourceUrl, dest, ctx.signal)) {
    ctx.log.info("source read from this host's cache", { renderId: p.renderId });
    return;
  }
  const fetched = await fetchSourceStretch(p.sourceUrl, dest, stretch, ctx.signal);
  ctx.log.info('source stretch fetched', { renderId: p.renderId, ...stretch, ...fetched });
}

/** Frames that do not come at one rate: the average is under the base rate (a phone's VFR). */
const isVariableRate = (info: ProbeResult): boolean =>
  info.fps !== null && info.peakFps !== null && Math.abs(info.peakFps - info.fps) / info.peakFps > 0.01;

/** Runs the render's (or chunk's) ffmpeg, its progress over the `rendering` stage. */
export async function encodeRender(
  ctx: TaskContext<'render-short'> | TaskContext<'render-chunk'>,
  spec: RenderSpec,
  durationSec: number,
  onProgress: (f: number) => void,
): Promise<ProbeResult & { encodeFps: number }> {
  const prepareStarted = performance.now();
  const args = await prepareRender(spec);
  ctx.log.debug('render graph prepared', { renderId: ctx.payload.renderId, seconds: secondsSince(prepareStarted) });
  const encodeStarted = performance.now();
  try {
    await runFfmpeg(ctx.config.ffmpegPath, args, { durationSec, signal: ctx.signal, onProgress });
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.error('ffmpeg failed', { err });
    // A graph ffmpeg cannot set up fails again on any agent: fail once, with the filter's reason.
    const refused = err instanceof FfmpegError && err.graphRefused;
    const reason =
      err instanceof FfmpegError
        ? err.reason
        : String((err as Error).message)
            .split('\n')
            .slice(-1)[0];
    throw new TaskError(`Rendering failed: ${reason}`, 'RENDERING_ERROR', !refused);
  }
  // The graph oriented a mirrored source's frames: the short must not carry the source's matrix.
  // A chunk too: the join copies its stream, matrix and all.
  if (spec.sourceColour?.orient) await clearDisplayMatrix(spec.output.path);
  const encodeSeconds = secondsSince(encodeStarted);
  const rendered = await ffprobe(spec.output.path, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal });
  const frames = Math.round(rendered.durationSec * (rendered.fps ?? 0));
  ctx.metrics.renderEncoded(spec.encoder === 'h264_nvenc' ? 'nvenc' : 'x264', frames, encodeSeconds);
  ctx.log.info('video encoded', {
    renderId: ctx.payload.renderId,
    encoder: spec.encoder,
    frames,
    seconds: Number(encodeSeconds.toFixed(2)),
    fps: Number((frames / encodeSeconds).toFixed(1)),
  });
  return { ...rendered, encodeFps: Math.max(1, frames) / Math.max(0.001, encodeSeconds) };
}

export const renderShort: TaskHandler<'render-short'> = {
  async run(ctx) {
    const p = ctx.payload;
    if (p.join) return joinRender(ctx, p.join);
    ctx.progress(stageProgress(RENDER_STAGES, 'downloading'), 'downloading');
    const out = path.join(ctx.workDir, 'render.mp4');
    const { spec, info } = await prepareRenderSpec(ctx, p, out);
    if (p.split) {
      const split = await splitRender(ctx, spec, info, p.split);
      if (split) return { split };
    }
    ctx.progress(stageProgress(RENDER_STAGES, 'rendering'), 'rendering');
    // The sound is brought to the platforms' loudness: measured first, half a second a minute.
    if (info.hasAudio) {
      spec.loudness = await measureLoudness(ctx.config.ffmpegPath, spec.sourcePath, {
        stream: spec.audioStream ?? 0,
        start: p.startTime,
        end: p.endTime,
        signal: ctx.signal,
      });
      ctx.log.info('loudness measured', { renderId: p.renderId, ...spec.loudness });
    }
    const durationSec = spec.edit?.cuts.length ? editedDuration(spec.edit) : p.endTime - p.startTime;
    spec.thumbnail = { path: path.join(ctx.workDir, 'render.jpg'), atSec: thumbnailTime(durationSec) };
    const rendered = await encodeRender(ctx, spec, durationSec, (f) =>
      ctx.progress(stageProgress(RENDER_STAGES, 'rendering', f), 'rendering'),
    );
    return finishRender(ctx, out, {
      encoder: spec.encoder,
      captionScript: assPathFor(spec),
      jumpCuts: spec.edit?.cuts.length ? spec.edit : null,
      rendered,
      encodedThumbnail: spec.thumbnail.path,
    });
  },
};

/**
 * A render in chunks, its first step: the cuts (frame-exact, on keyframe boundaries); the sound of
 * the whole render is encoded once, by the first chunk. Undefined when it cannot be cut exactly
 * (interlaced, no frame rate, jump cuts from a variable-rate source): it is then rendered in one pass here. Jump cuts
 * and a crop path of several pieces are cut like any render: each chunk's graph gives its frames the
 * single pass's times (render-args.ts).
 */
async function splitRender(
  ctx: TaskContext<'render-short'>,
  spec: RenderSpec,
  info: ProbeResult,
  asked: NonNullable<TaskLeasePayload<'render-short'>['split']>,
): Promise<RenderSplit | undefined> {
  const p = ctx.payload;
  // Deinterlacing reads the frames either side of each: a chunk's first frame would not see the one
  // before it, as the single pass does.
  if (!spec.gopFrames || spec.interlaced) {
    ctx.log.info('render not split: it cannot be cut exactly', { renderId: p.renderId });
    return undefined;
  }
  ctx.progress(stageProgress(RENDER_STAGES, 'splitting'), 'splitting');
  const frames = await probeFrameTimes(ctx.config.ffprobePath, spec.sourcePath, p.startTime, p.endTime, ctx.signal);
  // The first chunk encodes the sound beside its video: it gets that much less video to render.
  const cuts = planChunkCuts(frames, {
    start: p.startTime,
    end: p.endTime,
    chunks: asked.chunks,
    gopFrames: spec.gopFrames,
    firstChunkExtraShare: info.hasAudio ? SOUND_SHARE_OF_RENDER : 0,
    speeds: asked.speeds,
    // Jump cuts: only the kept frames count, and a cut may fall in a removed stretch.
    ...(spec.edit?.cuts.length ? { keep: clipRanges(spec.edit, p.startTime), fps: spec.sourceFps } : {}),
    // A variable-rate source: cuts between the constant-rate frames its graph makes.
    ...(spec.constantRate ? { constantRate: spec.constantRate } : {}),
  });
  if (!cuts) {
    ctx.log.info('render not split: too few keyframe intervals or no exact cut', { renderId: p.renderId, chunks: asked.chunks });
    return undefined;
  }
  ctx.log.info('render split', {
    renderId: p.renderId,
    chunks: cuts.length,
    ...(asked.speeds ? { speeds: asked.speeds.map((v) => Number(v.toFixed(2))) } : {}),
    encoder: asked.encoder,
    gopFrames: spec.gopFrames,
    hasSound: info.hasAudio,
  });
  const edit = spec.edit?.cuts.length ? spec.edit : null;
  // The caption script every chunk burns in, stored once here: the joined render can be read back as
  // text as a one-pass render can.
  await prepareRender(spec);
  const script = assPathFor(spec);
  const captions = await access(script).then(
    () => ctx.upload(script, renderShortOutputs.captions(p.renderId), 'text/x-ssa'),
    () => undefined,
  );
  return {
    ...(captions ? { captionsKey: captions.objectKey } : {}),
    audio: null,
    hasSound: info.hasAudio,
    cuts,
    gopFrames: spec.gopFrames,
    encoder: asked.encoder,
    ...(edit ? { jumpCuts: { keep: edit.keep, cuts: edit.cuts, removedSec: edit.removedSec, fillerWords: edit.fillerWords } } : {}),
  };
}

/** A render in chunks, its last step: the chunks' video joined as it is, with the sound. */
async function joinRender(
  ctx: TaskContext<'render-short'>,
  join: NonNullable<TaskLeasePayload<'render-short'>['join']>,
): Promise<TaskResult<'render-short'>> {
  ctx.progress(stageProgress(RENDER_STAGES, 'joining'), 'joining');
  // What this host rendered itself (its chunk, maybe the sound) is still on its disk.
  const fetchOne = (url: string, objectKey: string | null | undefined, dest: string) =>
    objectKey ? ctx.objects.fetch(objectKey, url, dest, ctx.signal) : downloadObject(url, dest, ctx.signal);
  const chunkPaths = join.chunkUrls.map((_, i) => path.join(ctx.workDir, `chunk-${i}.mp4`));
  const audioPath = join.audioUrl ? path.join(ctx.workDir, 'audio.mp4') : null;
  const fetched = await Promise.all([
    ...join.chunkUrls.map((url, i) => fetchOne(url, join.chunkObjectKeys?.[i], chunkPaths[i]!)),
    ...(join.audioUrl ? [fetchOne(join.audioUrl, join.audioObjectKey, audioPath!)] : []),
  ]);
  const fromDisk = fetched.filter((f) => 'cached' in f && f.cached).length;
  ctx.log.info('chunks to join fetched', { renderId: ctx.payload.renderId, fromDisk, downloaded: fetched.length - fromDisk });
  const out = path.join(ctx.workDir, 'render.mp4');
  await joinChunks(ctx.config, { chunkPaths, audioPath, out, workDir: ctx.workDir, signal: ctx.signal });
  // The store deletes them once the render is done: this host's copies would only take room.
  for (const key of [...(join.chunkObjectKeys ?? []), join.audioObjectKey]) if (key) await ctx.objects.forget(key);
  return finishRender(ctx, out, { jumpCuts: join.jumpCuts, storedCaptionsKey: join.captionsKey });
}

/** The finished render, its thumbnail and (rendered in one pass) the caption script it burned in,
 *  uploaded. A joined render's script was stored by its split (`storedCaptionsKey`). */
async function finishRender(
  ctx: TaskContext<'render-short'>,
  out: string,
  made: {
    encoder?: string;
    captionScript?: string;
    jumpCuts?: JumpCutPlan | null;
    storedCaptionsKey?: string | null;
    /** The output as its encode probed it (a joined render is probed here). */
    rendered?: ProbeResult;
    /** Where the encode wrote the thumbnail, if it did (a render in one pass). */
    encodedThumbnail?: string;
  },
): Promise<TaskResult<'render-short'>> {
  const p = ctx.payload;
  const { encoder, captionScript, jumpCuts, storedCaptionsKey } = made;
  const rendered = made.rendered ?? (await ffprobe(out, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal }));
  // The caption script as burned in goes up too: what the captions said can be read back as text.
  const hasScript = captionScript
    ? await access(captionScript).then(
        () => true,
        () => false,
      )
    : false;
  ctx.progress(stageProgress(RENDER_STAGES, 'uploading'), 'uploading');
  // Nothing is awaited between starting these and settleAll, so no failure goes unhandled meanwhile.
  // The video goes up while a thumbnail the encode did not write is taken: the one is the network's
  // and the store's, the other this host's CPU (a third of a second of a 45 s render's).
  const video = ctx.upload(out, renderShortOutputs.video(p.renderId), 'video/mp4');
  const thumbnail = (async () => {
    let thumb = made.encodedThumbnail;
    // The encode wrote none where its output ended before the thumbnail's time (a rate or a cut the
    // plan did not foresee); a joined render's is taken from the joined file.
    if (!thumb || !(await nonEmpty(thumb))) {
      thumb = path.join(ctx.workDir, 'render.jpg');
      const started = performance.now();
      await grabThumbnail(ctx.config.ffmpegPath, out, thumb, thumbnailTime(rendered.durationSec), ctx.signal);
      ctx.log.debug('thumbnail grabbed', { renderId: p.renderId, seconds: secondsSince(started) });
    }
    return await ctx.upload(thumb, renderShortOutputs.thumbnail(p.renderId), 'image/jpeg');
  })();
  const captionsUpload = hasScript ? ctx.upload(captionScript!, renderShortOutputs.captions(p.renderId), 'text/x-ssa') : undefined;
  // Each settles before the task ends: none is left writing after a failure of another.
  const [file, thumbnailFile, captions] = await settleAll([video, thumbnail, captionsUpload]);
  return {
    objectKey: file.objectKey,
    sizeBytes: (await stat(out)).size,
    contentType: 'video/mp4',
    durationSec: rendered.durationSec,
    thumbnailKey: thumbnailFile.objectKey,
    captionsKey: captions?.objectKey ?? storedCaptionsKey ?? null,
    // The cuts as made here (the voice activity may have been heard here): the caption files follow them.
    ...(jumpCuts
      ? { jumpCuts: { keep: jumpCuts.keep, cuts: jumpCuts.cuts, removedSec: jumpCuts.removedSec, fillerWords: jumpCuts.fillerWords } }
      : {}),
    width: rendered.width,
    height: rendered.height,
    encoder,
  };
}

/** Half a second in, or half-way through an output shorter than a second (jump cuts can make one):
 *  past the end there is no picture, and the render would fail for want of it. */
const thumbnailTime = (durationSec: number): number => Math.min(0.5, durationSec / 2);

const nonEmpty = (file: string): Promise<boolean> =>
  stat(file).then(
    (s) => s.size > 0,
    () => false,
  );

export const secondsSince = (start: number): number => Number(((performance.now() - start) / 1000).toFixed(3));

/** Promise.all that waits for every one to settle before it fails with the first failure (so that no
 *  ffmpeg or upload outlives the task). */
export async function settleAll<T extends readonly unknown[]>(promises: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}
