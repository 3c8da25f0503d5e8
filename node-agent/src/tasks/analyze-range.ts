import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { stageProgress } from '../../../common/src/tasks/contract.js';
import { ANALYZE_RANGE_STAGES } from '../../../common/src/tasks/analyze-range.js';
import { extractAudio, NoAudioTrackError, readWavPcm } from '../media/audio.js';
import { createTranscriber } from '../transcribe/transcriber.js';
import { analysisWavByteCap } from './analyze-video.js';
import { TaskError, type TaskHandler } from './task-context.js';

/**
 * One time range of a long source (a child of analyze-video): its audio read straight from the
 * stored source over the signed URL, where ffmpeg's input seek asks the store for byte ranges, so
 * only this range's part of the file (and the container's index) crosses the network; then
 * transcribed, its words put on the source's timeline. The parent joins the ranges.
 */
export const analyzeRange: TaskHandler<'analyze-range'> = {
  async run(ctx) {
    const p = ctx.payload;
    const dir = path.join(ctx.workDir, 'range');
    await mkdir(dir, { recursive: true });
    ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'reading'), 'reading');
    const wav = path.join(dir, 'range.wav');
    const lengthSec = p.end - p.start;
    try {
      await extractAudio(ctx.config.ffmpegPath, p.sourceUrl, wav, {
        // A little past the end, so that the last span's samples are all there whatever ffmpeg rounds.
        signal: ctx.signal, startSec: p.start, durationSec: lengthSec + 0.1, maxBytes: analysisWavByteCap(lengthSec + 0.1), storedObjectUrl: true,
      });
    } catch (err) {
      if (err instanceof NoAudioTrackError) throw new TaskError('Nothing to transcribe: the video has no audio track', 'NO_SPEECH');
      if (ctx.signal.aborted) throw err;
      // The store was unreachable or the read broke off: another attempt may well succeed. A 4xx is
      // final: the source is gone (its job was cancelled) or the URL is refused.
      const message = (err as Error).message.replace(/\?exp=[^:\s]*/, '');
      const refused = /Server returned 4\d\d/.test(message);
      throw new TaskError(`Could not read the range ${p.start}-${p.end} s of the stored source: ${message}`, 'SOURCE_READ_FAILED', !refused);
    }
    ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'transcribing'), 'transcribing');
    const transcriber = createTranscriber({ ...ctx.config.transcriber, workDir: dir }, ctx.log);
    const onProgress = (f: number) => ctx.progress(stageProgress(ANALYZE_RANGE_STAGES, 'transcribing', f), 'transcribing');
    const round3 = (n: number) => Math.round(n * 1000) / 1000;
    if (p.spans) {
      // The whole source's spans, each decoded alone from the same samples as a whole-file run.
      const { samples, sampleRate } = await readWavPcm(wav);
      const at = (sec: number) => Math.max(0, Math.min(samples.length, Math.round((sec - p.start) * sampleRate)));
      const chunks = p.spans.map((span, index) => {
        const startSample = at(span.start);
        const endSample = at(span.end);
        return { index, startSample, endSample, offsetSec: span.start, durationSec: (endSample - startSample) / sampleRate };
      });
      const transcript = await transcriber.transcribeChunks(samples, chunks, lengthSec, { signal: ctx.signal, onProgress });
      const owns = { start: p.spans[0]!.start, end: p.spans.at(-1)!.end };
      ctx.log.info('range transcribed', { start: p.start, end: p.end, spans: chunks.length, words: transcript.words.length, backend: transcript.backend });
      return { start: p.start, end: p.end, owns, words: transcript.words, language: transcript.language, backend: transcript.backend };
    }
    const transcript = await transcriber.transcribe(wav, { signal: ctx.signal, onProgress });
    const words = transcript.words.map((w) => ({ ...w, start: round3(w.start + p.start), end: round3(w.end + p.start) }));
    ctx.log.info('range transcribed', { start: p.start, end: p.end, words: words.length, backend: transcript.backend });
    return { start: p.start, end: p.end, words, language: transcript.language, backend: transcript.backend };
  },
};
