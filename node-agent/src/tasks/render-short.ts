import { access, readFile, stat, writeFile } from 'node:fs/promises';
import { decodes, rasteriseSvg, sniffImage, stillPng } from '../../../common/src/media/image.js';
import path from 'node:path';
import { resolveCaptionStyle } from '../../../common/src/render/presets.js';
import { stageProgress } from '../../../common/src/tasks/contract.js';
import { RENDER_STAGES } from '../../../common/src/tasks/render-short.js';
import { planReframe } from '../../../common/src/reframe/camera.js';
import { FfmpegError, ffprobe, runFfmpeg } from '../media/ffmpeg.js';
import { assPathFor, prepareRender, type RenderSpec } from '../media/render-args.js';
import { editedDuration, planJumpCuts, resolveEditing } from '../../../common/src/render/jump-cuts.js';
import { clipSpeech } from '../media/clip-speech.js';
import { isBundledFfmpeg } from '../../../common/src/media/tools.js';
import { grabThumbnail } from '../media/clips.js';
import { downloadObject, downloadSource } from './download.js';
import { TaskError, type TaskHandler } from './task-context.js';
import { checkSourceLimits } from './analyze-video.js';

const WATERMARK_MAX_BYTES = 10_000_000;

export const renderShort: TaskHandler<'render-short'> = {
  async run(ctx) {
    const p = ctx.payload;
    ctx.progress(stageProgress(RENDER_STAGES, 'downloading'), 'downloading');
    const source = path.join(ctx.workDir, 'source.mp4');
    await downloadObject(p.sourceUrl, source, ctx.signal);
    const info = await ffprobe(source, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal }).catch(() => undefined);
    if (!info?.width || !info.height) throw new TaskError('The job\'s source video could not be read', 'SOURCE_MISSING');
    checkSourceLimits(info, ctx.config);

    let watermark: RenderSpec['watermark'];
    const wm = p.options.waterMark;
    if (p.watermark && wm) {
      let image = path.join(ctx.workDir, 'watermark');
      if (p.watermarkObjectUrl) await downloadObject(p.watermarkObjectUrl, image, ctx.signal);
      else await downloadSource(ctx, p.watermark.url!, image, WATERMARK_MAX_BYTES);
      // Judged by its bytes; an SVG reaches the renderer only as a PNG rasterised from clean markup.
      const bytes = await readFile(image);
      const kind = sniffImage(bytes);
      if (!kind || (kind !== 'svg' && !(await decodes(bytes)))) throw new TaskError('The watermark is not a PNG, JPEG, WebP, GIF or SVG image', 'WATERMARK_FORMAT');
      image = path.join(ctx.workDir, 'watermark.png');
      await writeFile(image, kind === 'svg' ? await rasteriseSvg(bytes) : await stillPng(bytes));
      watermark = {
        imagePath: image,
        left: wm.left, top: wm.top, bottom: wm.bottom, width: wm.width,
        opacity: wm.opacity === undefined ? 1 : Number(wm.opacity),
        blendMode: wm.blendMode ?? 'normal',
      };
    }

    let reframe = p.reframe;
    if (p.recompute) {
      reframe = planReframe(p.recompute.detections, p.recompute.director, p.output);
      ctx.log.info('camera path recomputed', { renderId: p.renderId, director: p.recompute.director, keyframes: reframe.keyframes.length });
    }

    // Jump cuts are planned here, where the source's frame rate is known: cuts land on its frames.
    // Silences need voice activity: the analysis's when it stored some, else heard here.
    let speech = p.speech;
    if (resolveEditing(p.options.editing)?.silence && !speech?.length && info.hasAudio) {
      speech = await clipSpeech(ctx.config.ffmpegPath, source, { start: p.startTime, end: p.endTime }, ctx.workDir, ctx.signal).catch((err) => {
        if (ctx.signal.aborted) throw err;
        // A render is not lost for want of voice activity: the words alone then say where speech is.
        ctx.log.warn('voice activity unavailable: silences from word timings alone', { renderId: p.renderId, err });
        return null;
      });
      ctx.log.info('voice activity heard for jump cuts', { renderId: p.renderId, intervals: speech?.length ?? 0 });
    }
    const edit = p.options.editing
      ? planJumpCuts({ start: p.startTime, end: p.endTime, words: p.words, speech, editing: p.options.editing, fps: info.fps })
      : null;
    if (edit) ctx.log.info('jump cuts planned', { renderId: p.renderId, cuts: edit.cuts.length, removedSec: edit.removedSec, fillers: edit.fillerWords.length });

    const out = path.join(ctx.workDir, 'render.mp4');
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
      ...(edit?.cuts.length ? { edit, sourceFps: info.fps, sourceHasAudio: info.hasAudio } : {}),
    };
    const args = await prepareRender(spec);
    ctx.progress(stageProgress(RENDER_STAGES, 'rendering'), 'rendering');
    const encodeStarted = performance.now();
    try {
      await runFfmpeg(ctx.config.ffmpegPath, args, {
        durationSec: edit ? editedDuration(edit) : p.endTime - p.startTime,
        signal: ctx.signal,
        onProgress: (f) => ctx.progress(stageProgress(RENDER_STAGES, 'rendering', f), 'rendering'),
      });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      ctx.log.error('ffmpeg failed', { err });
      // A graph ffmpeg cannot set up fails again on any agent: fail once, with the filter's reason.
      const refused = err instanceof FfmpegError && err.graphRefused;
      const reason = err instanceof FfmpegError ? err.reason : String((err as Error).message).split('\n').slice(-1)[0];
      throw new TaskError(`Rendering failed: ${reason}`, 'RENDERING_ERROR', !refused);
    }
    const encodeSeconds = (performance.now() - encodeStarted) / 1000;
    const rendered = await ffprobe(out, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal });
    ctx.metrics.renderEncoded(spec.encoder === 'h264_nvenc' ? 'nvenc' : 'x264', Math.round(rendered.durationSec * (rendered.fps ?? 0)), encodeSeconds);
    const thumb = path.join(ctx.workDir, 'render.jpg');
    // Half a second in, or half-way through an output shorter than a second (jump cuts can make one):
    // a seek past the end writes no picture, and the render would fail for want of its thumbnail.
    await grabThumbnail(ctx.config.ffmpegPath, out, thumb, Math.min(0.5, rendered.durationSec / 2), ctx.signal);
    ctx.progress(stageProgress(RENDER_STAGES, 'uploading'), 'uploading');
    // The caption script as burned in goes up too: what the captions said can be read back as text.
    const script = assPathFor(spec);
    const hasScript = await access(script).then(() => true, () => false);
    const [file, thumbnail, captions] = await Promise.all([
      ctx.upload(out, `render-${p.renderId}.mp4`, 'video/mp4'),
      ctx.upload(thumb, `render-${p.renderId}.jpg`, 'image/jpeg'),
      hasScript ? ctx.upload(script, `render-${p.renderId}.ass`, 'text/x-ssa') : undefined,
    ]);
    return {
      objectKey: file.objectKey,
      sizeBytes: (await stat(out)).size,
      contentType: 'video/mp4',
      durationSec: rendered.durationSec,
      thumbnailKey: thumbnail.objectKey,
      captionsKey: captions?.objectKey ?? null,
      width: rendered.width,
      height: rendered.height,
      encoder: spec.encoder,
    };
  },
};
