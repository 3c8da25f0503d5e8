import { stageProgress } from '@shorts/common/tasks/contract';
import { ANALYZE_RANGE_STAGES } from '@shorts/common/tasks/analyze-range';
import { createTranscriber } from '../transcribe/transcriber.js';
import { TaskError, type TaskHandler } from './task-context.js';

/**
 * One range of a long source (a child of analyze-video): a run of whole speech spans of the
 * transcriber's plan over the source's analysis audio. Only those samples are read from the stored
 * audio (one HTTP byte range), and each span is decoded alone from exactly the samples a whole-file
 * run decodes, so the words are that run's; they go back on the source's timeline.
 */
export const analyzeRange: TaskHandler<'analyze-range'> = {
  async run(ctx) {
    const p = ctx.payload;
    ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'reading'), 'reading');
    const first = p.spans[0]!.startSample;
    const last = p.spans.at(-1)!.endSample;
    const samples = await readSamples(p.audioUrl, p.dataOffset, first, last, ctx.signal);

    ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'transcribing'), 'transcribing');
    const chunks = p.spans.map((span, index) => ({
      index,
      startSample: span.startSample - first,
      endSample: span.endSample - first,
      offsetSec: span.startSample / p.sampleRate,
      durationSec: (span.endSample - span.startSample) / p.sampleRate,
    }));
    const transcriber = createTranscriber({ ...ctx.config.transcriber, workDir: ctx.workDir }, ctx.log);
    const transcript = await transcriber.transcribeChunks(samples, chunks, (last - first) / p.sampleRate, {
      signal: ctx.signal,
      onProgress: (f: number) => ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'transcribing', f), 'transcribing'),
    });
    const owns = { start: first / p.sampleRate, end: last / p.sampleRate };
    ctx.log.info('range transcribed', { ...owns, spans: chunks.length, words: transcript.words.length, backend: transcript.backend });
    return { owns, words: transcript.words, language: transcript.language, backend: transcript.backend, readBytes: samples.byteLength };
  },
};

/** Samples [first, last) of the stored 16-bit mono WAV whose data starts at dataOffset: one bounded
 *  byte range, so the store sends these bytes and no others. */
async function readSamples(url: string, dataOffset: number, first: number, last: number, signal: AbortSignal): Promise<Int16Array> {
  const from = dataOffset + first * 2;
  const to = dataOffset + last * 2 - 1;
  let res: Response;
  try {
    res = await fetch(url, { headers: { range: `bytes=${from}-${to}` }, signal });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new TaskError(`Could not read the range's audio from the store: ${(err as Error).message}`, 'SOURCE_READ_FAILED', true);
  }
  // A 4xx is final: the audio is gone (its job was cancelled) or the URL is refused.
  if (res.status !== 206) {
    await res.body?.cancel();
    throw new TaskError(`Could not read the range's audio from the store (HTTP ${res.status})`, 'SOURCE_READ_FAILED', res.status >= 500);
  }
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length !== to - from + 1) {
    throw new TaskError(`The store sent ${bytes.length} bytes of the range's audio, not ${to - from + 1}`, 'SOURCE_READ_FAILED', true);
  }
  // Copied into an aligned buffer: WAV is little-endian like every host this runs on.
  const samples = new Int16Array(bytes.length / 2);
  Buffer.from(samples.buffer).set(bytes);
  return samples;
}
