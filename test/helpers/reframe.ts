// What a crop path shows at a moment, as the filter graph (node-agent/src/media/reframe-graph.ts)
// draws it: in a split segment the panels of the keyframe the segment starts with, held still for the
// whole segment; elsewhere the window interpolated between keyframes. Face-cut checks run on these.
import { createLogger } from '@shorts/common/logger';
import type { Box, Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { detectShorts } from '../../node-agent/src/reframe/detect-shorts.js';
import { sharedFaceDetector } from '../../node-agent/src/reframe/detector-factory.js';
import { FFMPEG } from './media.js';
import { interpolate } from '@shorts/common/reframe/camera';

/** The source boxes drawn at `time` (one window, or each panel of a split). */
export function boxesShownAt(r: Reframe, time: number): Box[] {
  const segment = r.segments.find((s, i) => time >= s.start && (time < s.end || i === r.segments.length - 1));
  if (segment?.layout === 'split') {
    // The segment's starting keyframe: the later of two at one time, as at a cut.
    const key = r.keyframes.filter((k) => k.time <= segment.start + 1e-9).pop() ?? r.keyframes[0];
    if (key?.panels && key.panels.length >= 2) return key.panels.slice(0, 2);
  }
  return [interpolate(r.keyframes, time)];
}

/** Detection over the whole of a test video, as stage 80 runs it on one short from 0 to its end. */
export async function detectWholeVideo(video: {
  videoPath: string;
  wavPath: string;
  width: number;
  height: number;
  durationSec: number;
}): Promise<ShortDetections> {
  const log = createLogger({}, 'silent');
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
