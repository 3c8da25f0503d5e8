// Director settings (contract 2.9 `director`) as the camera uses them: the coordinator compares them
// to decide whether a render can reuse the stored crop path, the agent plans with them.
import type { DirectorSettings } from './types.js';

/**
 * Used when neither the render options nor a brand preset set them. Padding 1: a face's own width of
 * margin on each side, so a face fills about a third of the window's width, the usual framing of a
 * talking head in 9:16. One speaker at a time: split screen is opt-in.
 */
export const DEFAULT_DIRECTOR: DirectorSettings = Object.freeze({ facePaddingFactor: 1, maxSpeakersToFocus: 1 });

/** Partial director options (render options, presets) completed with the defaults. */
export function directorSettings(director: unknown): DirectorSettings {
  const d = (director ?? {}) as { camera?: { facePaddingFactor?: unknown }; intelligence?: { maxSpeakersToFocus?: unknown } };
  const padding = d.camera?.facePaddingFactor;
  const speakers = d.intelligence?.maxSpeakersToFocus;
  return {
    facePaddingFactor:
      typeof padding === 'number' && Number.isFinite(padding) && padding >= 0 ? padding : DEFAULT_DIRECTOR.facePaddingFactor,
    maxSpeakersToFocus:
      typeof speakers === 'number' && Number.isInteger(speakers) && speakers >= 1 ? speakers : DEFAULT_DIRECTOR.maxSpeakersToFocus,
  };
}

export function sameDirector(a: DirectorSettings, b: DirectorSettings): boolean {
  return a.facePaddingFactor === b.facePaddingFactor && a.maxSpeakersToFocus === b.maxSpeakersToFocus;
}
