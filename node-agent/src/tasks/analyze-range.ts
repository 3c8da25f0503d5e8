import { stageProgress } from '@shorts/common/tasks/contract';
import { ANALYZE_RANGE_STAGES } from '@shorts/common/tasks/analyze-range';
import { createTranscriber } from '../transcribe/transcriber.js';
import { readStoredSamples } from '../media/stored-audio.js';
import type { TaskHandler } from './task-context.js';

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
    const samples = await readStoredSamples(p.audioUrl, { dataOffset: p.dataOffset, first, last }, ctx.signal);

    ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'transcribing'), 'transcribing');
    const chunks = p.spans.map((span, index) => ({
      index,
      startSample: span.startSample - first,
      endSample: span.endSample - first,
      offsetSec: span.startSample / p.sampleRate,
      durationSec: (span.endSample - span.startSample) / p.sampleRate,
    }));
    const transcriber = createTranscriber(
      { ...ctx.config.transcriber, workDir: ctx.workDir, ...(p.language ? { language: p.language } : {}) },
      ctx.log,
    );
    const transcript = await transcriber.transcribeChunks(samples, chunks, (last - first) / p.sampleRate, {
      signal: ctx.signal,
      onProgress: (f: number) => ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'transcribing', f), 'transcribing'),
    });
    const owns = { start: first / p.sampleRate, end: last / p.sampleRate };
    ctx.log.info('range transcribed', { ...owns, spans: chunks.length, words: transcript.words.length, backend: transcript.backend });
    return { owns, words: transcript.words, language: transcript.language, backend: transcript.backend, readBytes: samples.byteLength };
  },
};
