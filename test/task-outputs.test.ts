import test from 'ava';
import { TASK_CONTRACTS } from '@shorts/common/tasks/contracts';
import { SOURCE_EXTENSIONS, analyzeVideoOutputs } from '@shorts/common/tasks/analyze-video';
import { renderShortOutputs } from '@shorts/common/tasks/render-short';
import { renderChunkOutputs } from '@shorts/common/tasks/render-chunk';
import { reframeShortOutputs } from '@shorts/common/tasks/reframe-short';
import { TASK_TYPES } from '@shorts/common/tasks';

// Each task type's output names are declared once, in its contract (common/src/tasks/<type>.ts): the
// agent names its uploads with the name functions, the coordinator signs and checks by the pattern.
const writes = (type: keyof typeof TASK_CONTRACTS, name: string) => TASK_CONTRACTS[type].outputs.pattern.test(name);

test('every name an agent gives an upload is one its type may write', (t) => {
  const id = '0b3c9f4e-7a2d-4c1b-9e8f-1a2b3c4d5e6f';
  for (const ext of SOURCE_EXTENSIONS) t.true(writes('analyze-video', analyzeVideoOutputs.source(ext)), ext);
  for (const name of [
    analyzeVideoOutputs.sourceThumbnail,
    analyzeVideoOutputs.audio,
    analyzeVideoOutputs.short(0),
    analyzeVideoOutputs.short(12),
    analyzeVideoOutputs.shortThumbnail(3),
  ]) {
    t.true(writes('analyze-video', name), name);
  }
  for (const name of [
    renderShortOutputs.video(id),
    renderShortOutputs.thumbnail(id),
    renderShortOutputs.captions(id),
    renderShortOutputs.audio(id),
  ]) {
    t.true(writes('render-short', name), name);
  }
  t.true(writes('render-chunk', renderChunkOutputs.chunk(7)));
  // A short reframed by a child of its own is named as the whole-file analysis names it.
  for (const name of [reframeShortOutputs.short(4), reframeShortOutputs.shortThumbnail(4)]) {
    t.true(writes('reframe-short', name), name);
    t.true(writes('analyze-video', name), name);
  }
  t.true(
    writes('render-chunk', renderChunkOutputs.sound('01a219ac-a65b-7c7d-99e9-8c3f04955bba')),
    "the first chunk writes the render's sound",
  );
});

test('no type writes a name another type writes, a page or a name of no kind it makes', (t) => {
  for (const type of TASK_TYPES) {
    for (const name of ['evil.svg', 'render.html', 'source.html', 'short-1.svg', 'chunk-1.jpg', 'x.mp4', '../render.mp4'])
      t.false(writes(type, name), `${type} ${name}`);
  }
  t.false(writes('render-short', analyzeVideoOutputs.short(0)));
  t.false(writes('analyze-video', renderChunkOutputs.chunk(0)));
  t.false(writes('probe-media', 'source.mp4'));
  t.false(writes('analyze-range', analyzeVideoOutputs.audio));
  // A short's child writes its crop and nothing of the analysis's own.
  for (const name of [analyzeVideoOutputs.audio, analyzeVideoOutputs.sourceThumbnail, analyzeVideoOutputs.source('mp4')])
    t.false(writes('reframe-short', name), name);
});
