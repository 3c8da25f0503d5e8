// A render-short payload that fits its contract, for tests whose small domain sits on render-short
// (a type whose contract declares children) and reads a field of its own beside these.
import type { TaskPayload } from '@shorts/common/tasks/contracts';

export function renderShortPayload(): TaskPayload<'render-short'> {
  return {
    renderId: 'r1',
    jobId: 'j1',
    shortId: 0,
    startTime: 0,
    endTime: 30,
    words: [],
    sourceObjectKey: 'sources/s1.mp4',
    output: { width: 1080, height: 1920 },
    captionPreset: 'default',
    options: {},
    reframe: null,
    recompute: null,
    watermark: null,
  };
}
