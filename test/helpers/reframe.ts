// What a crop path shows at a moment, as the filter graph (node-agent/src/media/reframe-graph.ts)
// draws it (common/src/reframe/window.ts): in a split or stack segment the panels of the keyframe the
// segment starts with, held still for the whole segment; elsewhere the window interpolated between
// keyframes. Face-cut checks run on these.
import { createLogger } from '@shorts/common/logger';
import type { Box, Reframe, ShortDetections } from '@shorts/common/reframe/types';
import { shownAt } from '@shorts/common/reframe/window';
import { detectShorts, type DetectShortsDeps } from '../../node-agent/src/reframe/detect-shorts.js';
import { sharedFaceDetector } from '../../node-agent/src/reframe/detector-factory.js';
import { FFMPEG } from './media.js';

/** The source boxes drawn at `time` (one window, or each panel of a split or stack). */
export function boxesShownAt(r: Reframe, time: number): Box[] {
  return shownAt(r, time).boxes;
}

/** Detection over the whole of a test video, as stage 80 runs it on one short from 0 to its end. */
export async function detectWholeVideo(
  video: {
    videoPath: string;
    wavPath: string;
    width: number;
    height: number;
    durationSec: number;
  },
  onSpeakerEvidence?: DetectShortsDeps['onSpeakerEvidence'],
): Promise<ShortDetections> {
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
    { ffmpegPath: FFMPEG, detector, log, ...(onSpeakerEvidence ? { onSpeakerEvidence } : {}) },
  );
  return found!;
}
