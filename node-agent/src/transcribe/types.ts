import type { Transcript } from '@shorts/common/text/transcript';

export interface TranscribeOptions {
  signal?: AbortSignal;
  /** Fraction 0..1 of this transcription done; called often, never decreasing. */
  onProgress?(fraction: number): void;
}

/** One speech-to-text backend. Input is always a 16 kHz mono s16 WAV (see media/audio-extract.ts). */
export interface Transcriber {
  readonly name: string;
  transcribe(wavPath: string, opts?: TranscribeOptions): Promise<Transcript>;
}

/** Reports progress only forward and only in visible steps, so callers can forward it unthrottled. */
export function progressReporter(onProgress: ((f: number) => void) | undefined, step = 0.01): (f: number) => void {
  let last = -1;
  return (f) => {
    if (!onProgress) return;
    const v = Math.min(1, Math.max(0, f));
    if (v > last && (v - last >= step || v === 1)) {
      last = v;
      onProgress(v);
    }
  };
}
