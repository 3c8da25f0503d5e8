// User-defined shorts (`options.predefinedShorts`): the client chose the times, we only attach
// the transcribed text. No 90 s cap here; that limit is for generated shorts.
import { joinWords, type Transcript } from '@shorts/common/text/transcript';
import { numberShorts, type Short } from './types.js';

export interface PredefinedShort {
  title: string;
  start: number;
  end: number;
}

/**
 * A word belongs to a short when its middle lies inside it, so a word straddling a cut is counted
 * once, on the side where most of it is heard.
 */
export function predefinedShorts(transcript: Transcript, items: readonly PredefinedShort[]): Short[] {
  const limit = transcript.durationSec > 0 ? transcript.durationSec : Infinity;
  return numberShorts(
    items.map((item) => {
      if (!(Number.isFinite(item.start) && Number.isFinite(item.end) && item.start >= 0 && item.end > item.start)) {
        throw new RangeError(`predefined short "${item.title}" needs 0 <= start < end, got ${item.start}..${item.end}`);
      }
      if (item.start >= limit) {
        throw new RangeError(
          `predefined short "${item.title}" starts at ${item.start} s, after the end of the video (${limit.toFixed(2)} s)`,
        );
      }
      const startTime = item.start;
      const endTime = Math.min(item.end, limit);
      const inside = transcript.words.filter((w) => {
        const mid = (w.start + w.end) / 2;
        return mid >= startTime && mid < endTime;
      });
      return { title: item.title, startTime, endTime, startId: null, endId: null, text: joinWords(inside) };
    }),
  );
}
