// User-defined shorts (`options.predefinedShorts`): the client chose the times, we only attach
// the transcribed text. No 90 s cap here; that limit is for generated shorts.
import { clampedShort, type PredefinedShort } from '@shorts/common/options/predefined-shorts';
import { joinWords, type Transcript } from '@shorts/common/text/transcript';
import { numberShorts, type Short } from './types.js';

/**
 * A word belongs to a short when its middle lies inside it, so a word straddling a cut is counted
 * once, on the side where most of it is heard.
 */
export function predefinedShorts(transcript: Transcript, items: readonly PredefinedShort[]): Short[] {
  return numberShorts(
    items.map((item) => {
      const { startTime, endTime } = clampedShort(item, transcript.durationSec);
      const inside = transcript.words.filter((w) => {
        const mid = (w.start + w.end) / 2;
        return mid >= startTime && mid < endTime;
      });
      return { title: item.title, startTime, endTime, startId: null, endId: null, text: joinWords(inside) };
    }),
  );
}
