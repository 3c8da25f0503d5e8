import { stat } from 'node:fs/promises';
import path from 'node:path';
import { stageProgress } from '@shorts/common/tasks/contract';
import { RENDER_CHUNK_STAGES, renderChunkOutputs } from '@shorts/common/tasks/render-chunk';
import { encodeRender, prepareRenderSpec } from './render-short.js';
import type { TaskHandler } from './task-context.js';

// One chunk of a long render (issue 22): the render's own graph over the chunk's frames, video only,
// with the encoder and keyframe interval its render chose (not this host's: chunks are joined as
// they are, so they must be encoded alike).
export const renderChunk: TaskHandler<'render-chunk'> = {
  async run(ctx) {
    const p = ctx.payload;
    ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'downloading'), 'downloading');
    const out = path.join(ctx.workDir, `chunk-${p.chunk.index}.mp4`);
    const { spec } = await prepareRenderSpec(ctx, p, out);
    const { fromUs, toUs, shiftTicks, last, encoder, gopFrames } = p.chunk;
    ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'rendering'), 'rendering');
    const rendered = await encodeRender(ctx, { ...spec, encoder, gopFrames, chunk: { fromUs, toUs, shiftTicks, last } }, (toUs - fromUs) / 1e6,
      (f) => ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'rendering', f), 'rendering'));
    ctx.progress(stageProgress(RENDER_CHUNK_STAGES, 'uploading'), 'uploading');
    const file = await ctx.upload(out, renderChunkOutputs.chunk(p.chunk.index), 'video/mp4');
    return {
      objectKey: file.objectKey,
      sizeBytes: (await stat(out)).size,
      contentType: 'video/mp4',
      frames: Math.max(1, Math.round(rendered.durationSec * (rendered.fps ?? 0))),
    };
  },
};
