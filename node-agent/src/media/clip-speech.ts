// Voice activity for jump cuts (issue 24) when the analysis stored none for the short (reframing's
// detection did not run, or found nothing): the render hears the clip itself, so silences still come
// from voice activity and words, never from word timings alone (a word the transcriber missed is
// not a pause). Silero over the clip's sound: about a second of CPU for a minute of short.
import path from 'node:path';
import { extractAudio, NoAudioTrackError } from './audio-extract.js';
import { readWavRange, speechIntervals, type Interval } from '../reframe/speech.js';
import { speechProbabilities, VAD_SAMPLE_RATE } from '../transcribe/vad.js';

/** Pauses inside speech shorter than this are bridged: a dip within a word, not a pause to cut.
 *  Shorter than reframing's (0.3 s), since a user may ask to cut pauses of 0.3 s. */
const JUMP_CUT_MIN_PAUSE_SEC = 0.1;

/** Speech heard in [start, end) of the source, on the source's clock; null when it has no sound. */
export async function clipSpeech(
  ffmpegPath: string,
  sourcePath: string,
  range: Interval,
  workDir: string,
  signal?: AbortSignal,
  stream?: number,
): Promise<Interval[] | null> {
  const wav = path.join(workDir, 'clip-speech.wav');
  try {
    await extractAudio(ffmpegPath, sourcePath, wav, { startSec: range.start, durationSec: range.end - range.start, signal, stream });
  } catch (err) {
    if (err instanceof NoAudioTrackError) return null;
    throw err;
  }
  const audio = await readWavRange(wav, { start: 0, end: range.end - range.start });
  if (audio.sampleRate !== VAD_SAMPLE_RATE)
    throw new Error(`speech detection needs ${VAD_SAMPLE_RATE} Hz audio, got ${audio.sampleRate} Hz`);
  if (!audio.samples.length) return [];
  const vad = await speechProbabilities(audio.samples, { signal });
  return speechIntervals(vad, range.start, JUMP_CUT_MIN_PAUSE_SEC).map((r) => ({ start: r.start, end: Math.min(r.end, range.end) }));
}
