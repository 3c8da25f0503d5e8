import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AnalyzeResult, AnalyzedShort } from '../../../common/src/analyze-result.js';
import type { AgentConfig } from '../config.js';
import { extractAudio, assertAudible, NoAudioTrackError, SilentAudioError, readWavPcm, toMonoFloat32, measureLevels } from '../media/audio.js';
import { containerType, ffprobe } from '../media/ffmpeg.js';
import { cutCropClip, grabThumbnail } from '../media/clips.js';
import { downloadYoutube, YoutubeDownloadError } from '../media/youtube.js';
import { createTranscriber, checkTranscriberAvailable, transcriberConfigFromEnv, type TranscriberConfig } from '../transcribe/transcriber.js';
import { createHighlightModel } from '../highlights/highlight-model.js';
import { predefinedShorts } from '../highlights/predefined.js';
import { downloadSource } from './download.js';
import { TaskError, type TaskContext, type TaskHandler } from './task-context.js';

interface AnalyzePayload {
  jobId: string;
  source: { kind: 'url'; url: string } | { kind: 'youtube'; videoId: string };
  predefinedShorts: Array<{ title: string; start: number; end: number }> | null;
  maxDownloadBytes: number;
  maxAutoShortSec: number;
}

/** Share of the task's progress each stage ends at (for the agent's own fraction). */
const STAGE_END = { initiating: 0.02, downloading: 0.2, transcribing: 0.7, generating_shorts: 0.75, detecting_speakers: 1 } as const;

function transcriberConfig(config: AgentConfig, workDir?: string): TranscriberConfig {
  return transcriberConfigFromEnv(process.env, { concurrency: config.transcribeConcurrency, ...(workDir ? { workDir } : {}) });
}

export async function analyzePrerequisites(config: AgentConfig): Promise<string | undefined> {
  const check = await checkTranscriberAvailable(transcriberConfig(config), { deep: true });
  if (check.error) return `speech recognition (${check.backend}): ${check.error}`;
  return undefined;
}

/** The name a user will recognise in the file list: the URL's last path segment, decoded when it can be. */
export function fileNameOf(url: string): string {
  const raw = new URL(url).pathname.split('/').pop() ?? '';
  let name = raw;
  try {
    name = decodeURIComponent(raw);
  } catch {
    // A malformed %-escape: keep the segment as it was written.
  }
  name = name.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return (name || 'video').slice(0, 200);
}

async function fetchSource(ctx: TaskContext, p: AnalyzePayload, dir: string): Promise<{ file: string; name: string; bytes: number }> {
  const report = (f: number) => ctx.progress(STAGE_END.initiating + f * (STAGE_END.downloading - STAGE_END.initiating), 'downloading');
  report(0);
  if (p.source.kind === 'youtube') {
    try {
      const file = await downloadYoutube(ctx.config.ytDlpPath, p.source.videoId, dir, {
        ffmpegPath: ctx.config.ffmpegPath, maxBytes: p.maxDownloadBytes, signal: ctx.signal, onProgress: report,
      });
      const { size } = await import('node:fs/promises').then((fs) => fs.stat(file));
      return { file, name: `youtube-${p.source.videoId}.mp4`, bytes: size };
    } catch (err) {
      if (err instanceof YoutubeDownloadError) throw new TaskError(err.message, 'DOWNLOAD_FAILED', err.retryable);
      throw err;
    }
  }
  const file = path.join(dir, 'source');
  const { bytes } = await downloadSource(ctx, p.source.url, file, p.maxDownloadBytes);
  return { file, name: fileNameOf(p.source.url), bytes };
}

/** Loudness (dBFS) of any stretch of the audio, for the selector's speech-energy feature. */
async function loudnessOf(wavPath: string): Promise<(startSec: number, endSec: number) => number> {
  const pcm = await readWavPcm(wavPath);
  const mono = toMonoFloat32(pcm);
  return (start, end) => {
    const slice = mono.subarray(Math.max(0, Math.floor(start * pcm.sampleRate)), Math.min(mono.length, Math.ceil(end * pcm.sampleRate)));
    return slice.length ? measureLevels(slice, pcm.sampleRate).rmsDb : -Infinity;
  };
}

export const analyzeVideo: TaskHandler = {
  async run(ctx) {
    const p = ctx.payload as unknown as AnalyzePayload;
    const dir = path.join(ctx.workDir, 'analyze');
    await mkdir(dir, { recursive: true });
    ctx.progress(0.01, 'initiating');

    const source = await fetchSource(ctx, p, dir);
    // The content decides, not the extension or the server's content type.
    const info = await ffprobe(source.file).catch(() => undefined);
    if (!info || !info.width || !info.height || !(info.durationSec > 0)) {
      throw new TaskError('The URL did not return a video file that can be read (no video stream found)', 'NOT_VIDEO');
    }
    // The price follows from these; the coordinator checks the credits now, not after the work.
    await ctx.facts({ durationSec: info.durationSec, downloadBytes: source.bytes });
    ctx.signal.throwIfAborted();
    for (const s of p.predefinedShorts ?? []) {
      if (s.end > info.durationSec + 0.05) {
        throw new TaskError(`The short "${s.title}" ends at ${s.end} s, past the end of the video (${info.durationSec.toFixed(2)} s)`, 'SHORT_PAST_END');
      }
    }
    const thumbPath = path.join(dir, 'source-thumb.jpg');
    await grabThumbnail(ctx.config.ffmpegPath, source.file, thumbPath, Math.min(1, info.durationSec / 2), ctx.signal);
    const container = containerType(info);
    const [sourceObj, sourceThumb] = await Promise.all([
      ctx.upload(source.file, `source.${container.extension}`, container.contentType),
      ctx.upload(thumbPath, 'source-thumb.jpg', 'image/jpeg'),
    ]);

    ctx.progress(STAGE_END.downloading, 'transcribing');
    const wav = path.join(dir, 'audio.wav');
    try {
      await extractAudio(ctx.config.ffmpegPath, source.file, wav, { signal: ctx.signal });
      await assertAudible(wav);
    } catch (err) {
      if (err instanceof NoAudioTrackError || err instanceof SilentAudioError) {
        throw new TaskError(`Nothing to transcribe: ${err.message}`, 'NO_SPEECH');
      }
      throw err;
    }
    const transcriber = createTranscriber(transcriberConfig(ctx.config, dir), ctx.log);
    const transcript = await transcriber.transcribe(wav, {
      signal: ctx.signal,
      onProgress: (f: number) => ctx.progress(STAGE_END.downloading + f * (STAGE_END.transcribing - STAGE_END.downloading), 'transcribing'),
    });
    ctx.log.info('transcribed', { backend: transcript.backend, words: transcript.words.length, durationSec: info.durationSec });

    ctx.progress(STAGE_END.transcribing, 'generating_shorts');
    const picked = p.predefinedShorts?.length
      ? predefinedShorts(transcript, p.predefinedShorts)
      : await createHighlightModel(process.env, ctx.log).pick(transcript, { signal: ctx.signal, energy: await loudnessOf(wav) });
    if (!picked.length) throw new TaskError('No speech long enough for a short was found in this video', 'NO_SHORTS');

    // Speaker-aware reframing arrives with its own issue; until then each short is a centred crop.
    ctx.progress(STAGE_END.generating_shorts, 'detecting_speakers');
    const shorts: AnalyzedShort[] = [];
    for (const [i, s] of picked.entries()) {
      const clip = path.join(dir, `short-${i}.mp4`);
      const thumb = path.join(dir, `short-${i}.jpg`);
      await cutCropClip(ctx.config.ffmpegPath, source.file, clip, { start: s.startTime, end: s.endTime, srcW: info.width, srcH: info.height }, ctx.signal);
      await grabThumbnail(ctx.config.ffmpegPath, clip, thumb, 0.5, ctx.signal);
      const [crop, cropThumb] = await Promise.all([ctx.upload(clip, `short-${i}.mp4`, 'video/mp4'), ctx.upload(thumb, `short-${i}.jpg`, 'image/jpeg')]);
      shorts.push({
        title: s.title, reason: s.reason ?? null, startTime: s.startTime, endTime: s.endTime, startId: s.startId, endId: s.endId, text: s.text,
        crop: { objectKey: crop.objectKey, sizeBytes: crop.sizeBytes, contentType: 'video/mp4', thumbnailKey: cropThumb.objectKey },
        reframe: null,
      });
      ctx.progress(STAGE_END.generating_shorts + ((i + 1) / picked.length) * (STAGE_END.detecting_speakers - STAGE_END.generating_shorts), 'detecting_speakers');
    }

    const result: AnalyzeResult = {
      durationSec: info.durationSec,
      downloadBytes: source.bytes,
      source: {
        name: source.name, objectKey: sourceObj.objectKey, sizeBytes: sourceObj.sizeBytes, contentType: container.contentType,
        thumbnailKey: sourceThumb.objectKey, width: info.width, height: info.height,
      },
      transcript: { language: transcript.language, text: transcript.text, words: transcript.words, backend: transcript.backend },
      shorts,
    };
    return result as unknown as Record<string, unknown>;
  },
};
