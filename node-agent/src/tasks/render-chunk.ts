import { stat } from 'node:fs/promises';
import path from 'node:path';
import { stageProgress } from '@shorts/common/tasks/contract';
import { RENDER_CHUNK_STAGES, renderChunkOutputs } from '@shorts/common/tasks/render-chunk';
import { encodeRenderAudio, keepFirstFrames } from '../media/render-chunks.js';
import { encodeRender, prepareRenderSpec, secondsSince } from './render-short.js';
import type { TaskHandler } from './task-context.js';
import { cutsSilences } from '@shorts/common/options/editing';
import type { TaskLeasePayload } from '@shorts/common/tasks/contracts';
import type { StretchNeed } from '../media/mp4-stretch.js';

type RenderChunkLease = TaskLeasePayload<'render-chunk'>;

// One chunk of a long render (issue 22): the render's own graph over the chunk's frames, video only
// (the first chunk also encodes the whole render's sound), with the encoder and keyframe interval
// its render chose (not this host's: chunks are joined as they are, so they must be encoded alike).
export const renderChunk: TaskHandler<'render-chunk'> = {
  async run(ctx) {
    const p = ctx.payload;
    ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'downloading'), 'downloading');
    const out = path.join(ctx.workDir, `chunk-${p.chunk.index}.mp4`);
    // With frames past its end (keepFrames), rendered here first and cut to its own after.
    const { keepFrames } = p.chunk;
    const rendering = keepFrames ? path.join(ctx.workDir, `chunk-${p.chunk.index}-overrun.mp4`) : out;
    const { spec } = await prepareRenderSpec(ctx, p, rendering, stretchOf(p));
    const { fromUs, toUs, shiftTicks, clockUs, slots, last, encoder, gopFrames } = p.chunk;
    ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'rendering'), 'rendering');
    // The render's sound, when this chunk encodes it, before its video (the chunk was planned that
    // much shorter): not beside it, so that the video's encode time is this agent's own speed, by
    // which the coordinator weighs the chunks of later renders.
    const soundPath = path.join(ctx.workDir, 'audio.mp4');
    if (p.chunk.encodesSound) {
      const soundStarted = performance.now();
      await encodeRenderAudio(ctx.config.ffmpegPath, {
        sourcePath: spec.sourcePath,
        stream: spec.audioStream ?? 0,
        start: p.startTime,
        end: p.endTime,
        out: soundPath,
        signal: ctx.signal,
        edit: spec.edit?.cuts.length ? spec.edit : null,
      });
      ctx.log.info('render sound encoded', { renderId: p.renderId, chunk: p.chunk.index, seconds: secondsSince(soundStarted) });
    }
    const rendered = await encodeRender(
      ctx,
      { ...spec, encoder, gopFrames, chunk: { fromUs, toUs, shiftTicks, clockUs, slots, last } },
      (toUs - fromUs) / 1e6,
      (f) => ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'rendering', f), 'rendering'),
    );
    if (keepFrames) await keepFirstFrames(ctx.config.ffmpegPath, { input: rendering, out, frames: keepFrames, signal: ctx.signal });
    ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'uploading'), 'uploading');
    const [file, audio] = await Promise.all([
      ctx.upload(out, renderChunkOutputs.chunk(p.chunk.index), 'video/mp4'),
      p.chunk.encodesSound ? ctx.upload(soundPath, renderChunkOutputs.sound(p.renderId), 'audio/mp4') : undefined,
    ]);
    // The join often runs here, on the agent that finished last: it reads these from the disk.
    // Nothing else will: they are the first to go when the cache needs room.
    await ctx.objects.keep(file.objectKey, out, { shortLived: true });
    if (audio) await ctx.objects.keep(audio.objectKey, soundPath, { shortLived: true });
    return {
      objectKey: file.objectKey,
      sizeBytes: (await stat(out)).size,
      contentType: 'video/mp4',
      frames: keepFrames ?? Math.max(1, Math.round(rendered.durationSec * (rendered.fps ?? 0))),
      encodeFps: rendered.encodeFps,
      audio: audio ? { objectKey: audio.objectKey, sizeBytes: audio.sizeBytes, contentType: 'audio/mp4' } : null,
    };
  },
};

/**
 * What of the source a chunk reads (issue 35): its video stretch; the sound of the whole render too
 * when it encodes that sound, or when the render's jump cuts need voice activity heard here (every
 * chunk plans the cuts, prepareRenderSpec). Seconds on ffmpeg's `-ss` clock, as the short's times are.
 */
export function stretchOf(p: RenderChunkLease): StretchNeed {
  const video = { from: p.chunk.fromUs / 1e6, to: p.chunk.toUs / 1e6 };
  const wholeSound = p.chunk.encodesSound || (cutsSilences(p.options.editing) && !p.speech?.length);
  return {
    video,
    other: wholeSound ? { from: Math.min(video.from, p.startTime), to: Math.max(video.to, p.endTime) } : video,
  };
}
