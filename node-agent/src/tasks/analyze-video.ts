import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { stageProgress } from '@shorts/common/tasks/contract';
import {
  ANALYZE_STAGES,
  DEFAULT_CLIP_LENGTH,
  analyzeVideoOutputs,
  type Picking,
  type AnalyzedShort,
  type AnalyzeVideoLease,
  type AnalyzeVideoResult,
  type ReframePlan,
} from '@shorts/common/tasks/analyze-video';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { AgentConfig } from '../config.js';
import { ANALYSIS_SAMPLE_RATE, extractAudio, NoAudioTrackError, pickSpeechStream, writeSilence } from '../media/audio-extract.js';
import { FROM_PICTURE_REASON, shortsFromPicture } from '../highlights/from-picture.js';
import { readWavInfo } from '../media/wav.js';
import { SilentAudioError, isSilent, scanWav } from '../media/audio-levels.js';
import { joinWords, type Transcript } from '@shorts/common/text/transcript';
import { containerType, ffprobe, measureMediaDuration, type ProbeResult } from '../media/ffmpeg.js';
import { cropClipSize, grabThumbnail } from '../media/clips.js';
import type { SourceColour } from '../media/colour.js';
import { downloadYoutube, YoutubeDownloadError } from '../media/youtube.js';
import { createTranscriber, checkTranscriberAvailable, type TranscriberConfig } from '../transcribe/transcriber.js';
import { createHighlightModel } from '../highlights/highlight-model.js';
import { predefinedShorts } from '../highlights/predefined.js';
import { shortPastEnd } from '@shorts/common/options/predefined-shorts';
import { MAX_SHORT_SEC } from '../highlights/types.js';
import { clipChunks, type Chunk } from '../transcribe/chunked.js';
import { spotTopics, type TopicSpot } from '../transcribe/keyword-spotting.js';
import { VAD_SAMPLE_RATE } from '../transcribe/vad.js';
import { downloadObject, downloadSource } from './download.js';
import { TaskError, type TaskContext, type TaskHandler } from './task-context.js';
import { cropShort, detectSpeakers, type ReframeSource } from './reframe-short.js';

function transcriberConfig(config: AgentConfig, workDir?: string, language?: string | null): TranscriberConfig {
  return { ...config.transcriber, ...(workDir ? { workDir } : {}), ...(language ? { language } : {}) };
}

/** What a payload queued before the picking options existed (or naming none) means. */
export function pickingOf(p: Pick<AnalyzeVideoLease, 'picking' | 'maxAutoShortSec'>): Picking {
  return (
    p.picking ?? {
      clipLength: { min: DEFAULT_CLIP_LENGTH.min, max: Math.min(p.maxAutoShortSec, MAX_SHORT_SEC) },
      maxShorts: null,
      range: null,
      topics: [],
      prompt: null,
      language: null,
    }
  );
}

/** Backends that take a language hint; pocketsphinx has an English model only. */
function languageNote(backend: string, language: string | null): string | undefined {
  if (!language || backend !== 'pocketsphinx' || language.toLowerCase().startsWith('en')) return undefined;
  return `The language "${language}" was not used: this agent's transcriber (pocketsphinx) knows English only.`;
}

/** Words whose middle lies inside the range: a word cut by the range's edge belongs to the side holding most of it. */
function wordsInside(transcript: Transcript, range: { start: number; end: number } | null): Transcript {
  if (!range) return transcript;
  const words = transcript.words.filter((w) => (w.start + w.end) / 2 >= range.start && (w.start + w.end) / 2 < range.end);
  return { ...transcript, words, text: joinWords(words) };
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
  // eslint-disable-next-line no-control-regex -- control characters are what this strips from the name
  name = name.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return (name || 'video').slice(0, 200);
}

async function fetchSource(
  ctx: TaskContext<'analyze-video'>,
  p: AnalyzeVideoLease,
  dir: string,
): Promise<{ file: string; name: string; bytes: number }> {
  const report = (f: number) => ctx.progress(stageProgress(ANALYZE_STAGES, 'downloading', f), 'downloading');
  report(0);
  if (p.source.kind === 'youtube') {
    try {
      const file = await downloadYoutube(ctx.config.ytDlpPath, p.source.videoId, dir, {
        ffmpegPath: ctx.config.ffmpegPath,
        maxBytes: p.maxDownloadBytes,
        signal: ctx.signal,
        onProgress: report,
      });
      const { size } = await import('node:fs/promises').then((fs) => fs.stat(file));
      return { file, name: `youtube-${p.source.videoId}.mp4`, bytes: size };
    } catch (err) {
      if (err instanceof YoutubeDownloadError) throw new TaskError(err.message, 'DOWNLOAD_FAILED', err.retryable);
      throw err;
    }
  }
  const file = path.join(dir, 'source');
  if (p.source.kind === 'object') {
    // Already in the organization's storage (a studio upload): the coordinator signed the URL.
    const { bytes } = await ctx.objects.fetch(p.source.objectKey, p.source.url, file, ctx.signal);
    return { file, name: path.posix.basename(p.source.objectKey), bytes };
  }
  const { bytes } = await downloadSource(ctx, p.source.url, file, p.maxDownloadBytes, 'the video', (partial) => refuseEarly(ctx, partial));
  return { file, name: fileNameOf(p.source.url), bytes };
}

/**
 * What an MP4's index alone shows, read before its media data arrives: a file with no video (an M4A)
 * or past the source limits is refused without fetching the rest. A partial file that cannot be read
 * decides nothing; the whole file is checked again once it is here.
 */
async function refuseEarly(ctx: TaskContext<'analyze-video'>, partial: string): Promise<void> {
  const probed = await ffprobe(partial, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal }).catch(() => undefined);
  if (!probed) return;
  if (!probed.hasVideo) throw notVideo();
  if (probed.width && probed.height) checkSourceLimits(probed, ctx.config);
}

const notVideo = () => new TaskError('The URL did not return a video file that can be read (no video stream found)', 'NOT_VIDEO');

/** Decoded audio may run this far past the billed length (codec priming, last-frame padding). */
const LENGTH_TOLERANCE_SEC = 0.5;

/**
 * How far decoded audio may run past the streams' end and still be billed as what it decodes to.
 * A recording joined from clips overlaps its timestamps at each join (a 45.1 s file decoding to
 * 46.1 s); a file made to lie about its length (every packet at 0) decodes to many times it. Past
 * this slack the decode was stopped by the byte cap, the real length is unknown, and the file is refused.
 */
export function lengthSlackSec(measuredSec: number): number {
  return Math.max(3, measuredSec * 0.03);
}

/**
 * The most bytes the analysis WAV may take for `billedSec`: `-t` stops on timestamps, which a crafted
 * file can make lie (every packet at 0), while this stops on what was written. It leaves room past
 * the slack so that such a file is caught by the length check instead of passing just under it.
 */
export function analysisWavByteCap(billedSec: number): number {
  const bytesPerSec = ANALYSIS_SAMPLE_RATE * 2 /* s16 */ * 1; /* mono */
  const header = 1024; // RIFF, fmt and ffmpeg's LIST/INFO chunk are under 100 bytes
  return Math.ceil((billedSec + lengthSlackSec(billedSec) + 1) * bytesPerSec) + header;
}

/**
 * The analysis audio of `file` into `wav`, never more than `measuredSec` plus the slack, and the
 * length to bill: the measured one, or what the audio decodes to when it runs a little past it
 * (then that is what is transcribed). Audio that runs on past the slack was stopped by the byte cap
 * and its real length is unknown: the file is refused.
 */
export async function extractAnalysisAudio(
  ffmpegPath: string,
  file: string,
  wav: string,
  measuredSec: number,
  signal?: AbortSignal,
  stream = 0,
): Promise<{ billedSec: number; decodedSec: number }> {
  await extractAudio(ffmpegPath, file, wav, { signal, stream, durationSec: measuredSec, maxBytes: analysisWavByteCap(measuredSec) });
  const decodedSec = (await readWavInfo(wav)).durationSec;
  if (decodedSec > measuredSec + lengthSlackSec(measuredSec)) {
    throw new TaskError(
      `The audio decodes to at least ${decodedSec.toFixed(1)} s but the file's streams end at ${measuredSec.toFixed(1)} s; a file whose length cannot be told is refused`,
      'LENGTH_MISMATCH',
    );
  }
  return { billedSec: decodedSec > measuredSec + LENGTH_TOLERANCE_SEC ? decodedSec : measuredSec, decodedSec };
}

/** Refuses a source whose frames are too large or too many to decode within reason. */
export function checkSourceLimits(
  info: { width: number; height: number; fps: number | null; peakFps: number | null },
  limits: { maxSourcePixels: number; maxSourceFps: number },
): void {
  if (info.width * info.height > limits.maxSourcePixels) {
    throw new TaskError(
      `The video is ${info.width}x${info.height}; sources are limited to ${limits.maxSourcePixels.toLocaleString('en-US')} pixels a frame`,
      'SOURCE_TOO_LARGE',
    );
  }
  const fps = Math.max(info.fps ?? 0, info.peakFps ?? 0);
  if (fps > limits.maxSourceFps) {
    throw new TaskError(
      `The video runs at ${Math.round(fps)} frames a second; sources are limited to ${limits.maxSourceFps}`,
      'SOURCE_TOO_LARGE',
    );
  }
}

type FetchedSource = Awaited<ReturnType<typeof fetchSource>>;

/**
 * The fetched file's streams, with the length to bill: what decodes, not what the header declares.
 * Notes a file that declares more than it holds.
 */
async function probeFetched(ctx: TaskContext<'analyze-video'>, file: string): Promise<{ info: ProbeResult; notes: string[] }> {
  // The content decides, not the extension or the server's content type.
  const probed = await ffprobe(file, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal }).catch(() => undefined);
  if (!probed || !probed.width || !probed.height) throw notVideo();
  checkSourceLimits(probed, ctx.config);
  // The price is for what will be decoded, not for what the container's header declares: a file
  // that says 1 s but holds an hour of audio is an hour (the longest stream, read packet by packet).
  const measured = await measureMediaDuration(ctx.config.ffmpegPath, file, ctx.signal).catch((err) => {
    ctx.signal.throwIfAborted();
    ctx.log.warn('could not measure the media length', { err: (err as Error).message });
    return 0;
  });
  if (!(measured > 0)) throw new TaskError('The video could not be read to its end (no stream has any packets)', 'NOT_VIDEO');
  const notes: string[] = [];
  if (Math.abs(measured - probed.durationSec) > Math.max(1, measured * 0.02)) {
    ctx.log.warn('declared length differs from the measured one; billing the measured', {
      declaredSec: probed.durationSec,
      measuredSec: measured,
    });
    // A download cut short (or a file that claims more than it holds): what arrived is what counts.
    if (measured < probed.durationSec)
      notes.push(
        `The file declares ${probed.durationSec.toFixed(1)} s but its streams end at ${measured.toFixed(1)} s (cut short?): the ${measured.toFixed(1)} s that arrived were analysed and billed.`,
      );
  }
  return { info: { ...probed, durationSec: measured }, notes };
}

/** Refuses shorts or a range the client asked for past the end of the video. */
function checkAskedTimes(p: AnalyzeVideoLease, picking: Picking, durationSec: number): void {
  const pastEnd = shortPastEnd(p.predefinedShorts, durationSec);
  if (pastEnd) throw new TaskError(pastEnd, 'SHORT_PAST_END');
  if (picking.range && picking.range.start >= durationSec) {
    throw new TaskError(
      `The range starts at ${picking.range.start} s, past the end of the video (${durationSec.toFixed(2)} s)`,
      'RANGE_PAST_END',
    );
  }
}

/**
 * The audio stream heard and rendered (null when there is none): a recording with several sound
 * tracks (OBS: desktop, then microphone) is heard on the one with speech, and rendered with it.
 */
async function chooseSpeechTrack(
  ctx: TaskContext<'analyze-video'>,
  file: string,
  info: ProbeResult,
  dir: string,
  notes: string[],
): Promise<number | null> {
  const track = await pickSpeechStream(ctx.config.ffmpegPath, file, {
    streams: info.audioStreams.length,
    durationSec: info.durationSec,
    workDir: dir,
    signal: ctx.signal,
  });
  if (track.heard.length) {
    ctx.log.info('sound track with speech chosen', { stream: track.stream, heard: track.heard });
    const share = (h: (typeof track.heard)[number]) => `track ${h.stream + 1}: ${Math.round(h.speechShare * 100)} %`;
    notes.push(
      `The video has ${track.heard.length} sound tracks; track ${track.stream + 1} has the most speech and is transcribed and rendered (speech heard: ${track.heard.map(share).join(', ')}).`,
    );
  }
  return info.audioStreams.length ? track.stream : null;
}

/**
 * The source and its thumbnail stored, and the source kept on this host too. Started while the audio
 * is decoded and planned: the store's side of the copy is not this agent's work, and a long source's
 * ranges wait on both.
 */
async function storeSource(
  ctx: TaskContext<'analyze-video'>,
  source: FetchedSource,
  info: ProbeResult,
  thumbPath: string,
  audioStream: number | null,
): Promise<AnalyzeVideoResult['source']> {
  const container = containerType(info);
  const [sourceObj, sourceThumb] = await Promise.all([
    ctx.upload(source.file, analyzeVideoOutputs.source(container.extension), container.contentType),
    ctx.upload(thumbPath, analyzeVideoOutputs.sourceThumbnail, 'image/jpeg'),
  ]);
  // Kept on this host too: the job's later tasks here (its shorts' reframing) read it from the disk.
  await ctx.objects.keep(sourceObj.objectKey, source.file);
  return {
    name: source.name,
    objectKey: sourceObj.objectKey,
    sizeBytes: sourceObj.sizeBytes,
    contentType: container.contentType,
    thumbnailKey: sourceThumb.objectKey,
    width: info.width,
    height: info.height,
    fps: info.fps,
    audioStream,
  };
}

export const analyzeVideo: TaskHandler<'analyze-video'> = {
  async run(ctx) {
    const p = ctx.payload;
    const dir = path.join(ctx.workDir, 'analyze');
    await mkdir(dir, { recursive: true });
    ctx.progress(stageProgress(ANALYZE_STAGES, 'initiating'), 'initiating');
    if (p.stitched) return finishRanged(ctx, p.stitched, dir);

    const source = await fetchSource(ctx, p, dir);
    const { info, notes } = await probeFetched(ctx, source.file);
    // The price follows from these; the coordinator checks the credits now, not after the work.
    await ctx.facts({ durationSec: info.durationSec, downloadBytes: source.bytes });
    ctx.signal.throwIfAborted();
    const picking = pickingOf(p);
    checkAskedTimes(p, picking, info.durationSec);
    const audioStream = await chooseSpeechTrack(ctx, source.file, info, dir, notes);
    const thumbPath = path.join(dir, 'source-thumb.jpg');
    await grabThumbnail(ctx.config.ffmpegPath, source.file, thumbPath, Math.min(1, info.durationSec / 2), ctx.signal, info.colour);
    const storing = storeSource(ctx, source, info, thumbPath, audioStream);
    // Awaited below; a decode that fails first ends the task, and the upload's own failure with it.
    storing.catch(() => undefined);
    try {
      return await hearAndPick(ctx, dir, { source, info, notes, picking, audioStream, storing });
    } catch (err) {
      // The upload ends before the task does: nothing it stores lands after a failure is cleaned up.
      await storing.catch(() => undefined);
      throw err;
    }
  },
};

/** A fetched source, probed and checked, on its way to the store. */
interface FetchedAnalysis {
  source: FetchedSource;
  info: ProbeResult;
  notes: string[];
  picking: Picking;
  audioStream: number | null;
  storing: Promise<AnalyzeVideoResult['source']>;
}

/** The source's audio decoded and transcribed (or planned in ranges for child tasks), then the shorts picked. */
async function hearAndPick(ctx: TaskContext<'analyze-video'>, dir: string, a: FetchedAnalysis): Promise<AnalyzeVideoResult> {
  const p = ctx.payload;
  const { source, notes, picking } = a;
  let info = a.info;
  ctx.progress(stageProgress(ANALYZE_STAGES, 'transcribing'), 'transcribing');
  const wav = path.join(dir, 'audio.wav');
  // What pickAndReframe is given, whichever way the sound went.
  const transcribed = async (heard: Pick<Transcribed, 'loudness' | 'transcript' | 'notes' | 'fromPicture'>): Promise<Transcribed> => ({
    sourceFile: source.file,
    width: info.width,
    height: info.height,
    colour: info.colour,
    wav,
    durationSec: info.durationSec,
    downloadBytes: source.bytes,
    storedSource: await a.storing,
    ...heard,
  });
  let audio: ScannedAudio | undefined;
  try {
    info = { ...info, durationSec: await decodeBilled(ctx, source, wav, info.durationSec, a.audioStream) };
    audio = await scanWav(wav);
    if (isSilent(audio.levels)) throw new SilentAudioError(audio.levels);
  } catch (err) {
    if (!(err instanceof NoAudioTrackError || err instanceof SilentAudioError)) throw err;
    return pickAndReframe(ctx, dir, await transcribed(await withoutSpeech(ctx, err, wav, info.durationSec, audio, notes)));
  }
  const transcriber = createTranscriber(transcriberConfig(ctx.config, dir, picking.language), ctx.log);
  const note = languageNote(transcriber.name, picking.language);
  if (note) notes.push(note);
  if (p.rangesFromSec !== undefined && info.durationSec >= p.rangesFromSec)
    return planRanges(ctx, transcriber, wav, picking.range, { durationSec: info.durationSec, downloadBytes: source.bytes }, a.storing);
  const transcript = await transcribeAsked(ctx, transcriber, wav, picking.range);
  ctx.log.info('transcribed', { backend: transcript.backend, words: transcript.words.length, durationSec: info.durationSec });
  // On a farm with free slots the shorts may be reframed side by side, each child reading its
  // short's samples of this audio, stored for them.
  const inChildren: ReframeInChildren | undefined =
    (p.reframeSlots ?? 0) >= 2
      ? {
          storeAudio: () => storeAnalysisAudio(ctx, wav),
          fetchSource: async () => undefined,
        }
      : undefined;
  return pickAndReframe(ctx, dir, await transcribed({ loudness: audio.loudness, transcript, notes }), inChildren);
}

type ScannedAudio = Awaited<ReturnType<typeof scanWav>>;

/**
 * The analysis audio decoded into `wav`, never more than was billed even when the packets'
 * timestamps lie, and the length to bill: grown, and the reservation with it, when the audio
 * decodes a little past the streams' end.
 */
async function decodeBilled(
  ctx: TaskContext<'analyze-video'>,
  source: FetchedSource,
  wav: string,
  measuredSec: number,
  audioStream: number | null,
): Promise<number> {
  const { billedSec, decodedSec } = await extractAnalysisAudio(
    ctx.config.ffmpegPath,
    source.file,
    wav,
    measuredSec,
    ctx.signal,
    audioStream ?? 0,
  );
  if (billedSec !== measuredSec) {
    // The reservation grows with it; the credits may not cover it.
    ctx.log.warn("the audio decodes past the streams' end; billing the decoded length", { measuredSec, decodedSec });
    await ctx.facts({ durationSec: billedSec, downloadBytes: source.bytes });
  }
  return billedSec;
}

/**
 * What a source with nothing to hear is analysed with: the shorts are the client's own times, or
 * chosen from the picture, over silence written for a missing track.
 */
async function withoutSpeech(
  ctx: TaskContext<'analyze-video'>,
  err: NoAudioTrackError | SilentAudioError,
  wav: string,
  durationSec: number,
  scanned: ScannedAudio | undefined,
  notes: string[],
): Promise<Pick<Transcribed, 'loudness' | 'transcript' | 'notes' | 'fromPicture'>> {
  if (err instanceof NoAudioTrackError) await writeSilence(ctx.config.ffmpegPath, wav, durationSec, ctx.signal);
  const note = `No speech: ${err.message}. ${ctx.payload.predefinedShorts?.length ? 'The shorts are the times asked for' : FROM_PICTURE_REASON}, without captions.`;
  ctx.log.info('analysing a source without speech', { note });
  return {
    // A silent track was scanned already; silence written for a missing one is scanned here.
    loudness: (scanned ?? (await scanWav(wav))).loudness,
    transcript: { language: '', text: '', words: [], backend: 'none', durationSec },
    notes: [...notes, note],
    fromPicture: true,
  };
}

/**
 * Only the range is decoded: the speech spans are planned over the whole audio (so they are the
 * whole-file run's) and cut to it.
 */
function spansInRange(chunks: Chunk[], range: Picking['range']): Chunk[] {
  return range ? clipChunks(chunks, range.start * VAD_SAMPLE_RATE, range.end * VAD_SAMPLE_RATE, VAD_SAMPLE_RATE) : chunks;
}

/**
 * Long: the source is stored and measured, and the transcriber's plan of speech spans made over the
 * whole audio (the VAD: seconds for an hour). Child tasks decode the spans in ranges, each reading
 * only its samples of this audio, stored for them (the very samples the plan was made from), and
 * this task comes back for the shorts.
 */
async function planRanges(
  ctx: TaskContext<'analyze-video'>,
  transcriber: ReturnType<typeof createTranscriber>,
  wav: string,
  range: Picking['range'],
  facts: { durationSec: number; downloadBytes: number },
  storing: Promise<AnalyzeVideoResult['source']>,
): Promise<AnalyzeVideoResult> {
  const chunks = spansInRange((await transcriber.plan(wav, ctx.signal)).chunks, range);
  if (!chunks.length) throw new TaskError('No speech long enough for a short was found in this video', 'NO_SHORTS');
  const [audio, storedSource] = await Promise.all([storeAnalysisAudio(ctx, wav), storing]);
  ctx.log.info('analysing in ranges', { durationSec: facts.durationSec, fromSec: ctx.payload.rangesFromSec, spans: chunks.length });
  return {
    ranged: true,
    durationSec: facts.durationSec,
    downloadBytes: facts.downloadBytes,
    source: storedSource,
    transcript: { language: '', text: '', words: [], backend: '' },
    shorts: [],
    rangePlan: {
      audio,
      spans: chunks.map((c) => ({ startSample: c.startSample, endSample: c.endSample })),
    },
  };
}

/** The transcript of the whole audio, or of the words inside the range asked for. */
async function transcribeAsked(
  ctx: TaskContext<'analyze-video'>,
  transcriber: ReturnType<typeof createTranscriber>,
  wav: string,
  range: Picking['range'],
): Promise<Transcript> {
  const onProgress = (f: number) => ctx.progress(stageProgress(ANALYZE_STAGES, 'transcribing', f), 'transcribing');
  if (!range) return transcriber.transcribe(wav, { signal: ctx.signal, onProgress });
  const planned = await transcriber.plan(wav, ctx.signal);
  const chunks = spansInRange(planned.chunks, range);
  if (!chunks.length) throw new TaskError('No speech was found in the range asked for', 'NO_SHORTS');
  return wordsInside(
    await transcriber.transcribeChunks(planned.mono, chunks, planned.durationSec, { signal: ctx.signal, onProgress }),
    range,
  );
}

/** The analysis WAV stored for the children that read their samples of it (ranges, shorts). */
async function storeAnalysisAudio(
  ctx: TaskContext<'analyze-video'>,
  wav: string,
): Promise<NonNullable<AnalyzeVideoResult['reframing']>['audio']> {
  const [{ dataOffset, sampleRate }, stored] = await Promise.all([
    readWavInfo(wav),
    ctx.upload(wav, analyzeVideoOutputs.audio, 'audio/wav'),
  ]);
  return { objectKey: stored.objectKey, dataOffset, sampleRate };
}

/** A missing or silent audio track is the user's video, not a fault to retry. */
function nothingToTranscribe(err: unknown): unknown {
  if (err instanceof NoAudioTrackError || err instanceof SilentAudioError)
    return new TaskError(`Nothing to transcribe: ${err.message}`, 'NO_SPEECH');
  return err;
}

/**
 * The final part of a ranged analysis: the source this task stored in its first part, and the
 * transcript the coordinator joined from the ranges. What follows is the whole-file analysis's own
 * second half, so the shorts and their reframing are the same as if one agent had done it all.
 */
async function finishRanged(
  ctx: TaskContext<'analyze-video'>,
  stitched: NonNullable<AnalyzeVideoLease['stitched']>,
  dir: string,
): Promise<AnalyzeVideoResult> {
  ctx.progress(stageProgress(ANALYZE_STAGES, 'downloading'), 'downloading');
  const file = path.join(dir, 'source');
  const wav = path.join(dir, 'audio.wav');
  // With free slots in the farm the shorts are reframed by children, which read the source
  // themselves: this part needs only the audio, unless it picks a single short.
  const inChildren = !!stitched.audioKey && !!stitched.audioUrl && (ctx.payload.reframeSlots ?? 0) >= 2;
  const fetchSource = () => ctx.objects.fetch(stitched.source.objectKey, stitched.sourceUrl, file, ctx.signal);
  // The audio the first part decoded (the ranges read it too), else decoded again from the source.
  await Promise.all([
    inChildren && stitched.audioUrl ? undefined : fetchSource(),
    stitched.audioUrl ? downloadObject(stitched.audioUrl, wav, ctx.signal) : undefined,
  ]);
  let audio: Awaited<ReturnType<typeof scanWav>>;
  try {
    // The loudness the shorts are picked with, and the audio the reframing's voice activity reads.
    if (!stitched.audioUrl)
      await extractAudio(ctx.config.ffmpegPath, file, wav, {
        signal: ctx.signal,
        stream: stitched.source.audioStream ?? 0,
        durationSec: stitched.durationSec,
        maxBytes: analysisWavByteCap(stitched.durationSec),
      });
    audio = await scanWav(wav);
    if (isSilent(audio.levels)) throw new SilentAudioError(audio.levels);
  } catch (err) {
    throw nothingToTranscribe(err);
  }
  const { dataOffset, sampleRate } = await readWavInfo(wav);
  return pickAndReframe(
    ctx,
    dir,
    {
      sourceFile: file,
      width: stitched.source.width,
      height: stitched.source.height,
      wav,
      loudness: audio.loudness,
      transcript: { ...stitched.transcript, durationSec: stitched.durationSec },
      durationSec: stitched.durationSec,
      downloadBytes: stitched.downloadBytes,
      storedSource: stitched.source,
    },
    inChildren
      ? {
          storeAudio: async () => ({ objectKey: stitched.audioKey!, dataOffset, sampleRate }),
          fetchSource: async () => void (await fetchSource()),
        }
      : undefined,
  );
}

interface Transcribed {
  sourceFile: string;
  width: number;
  height: number;
  /** Probed with the source; a ranged analysis's last part probes it when it reframes here. */
  colour?: SourceColour;
  wav: string;
  loudness: Awaited<ReturnType<typeof scanWav>>['loudness'];
  transcript: Transcript;
  durationSec: number;
  downloadBytes: number;
  storedSource: AnalyzeVideoResult['source'];
  notes?: string[];
  /** No speech: automatic shorts come from the picture (highlights/from-picture.ts). */
  fromPicture?: boolean;
}

/** Where the shorts may be reframed by reframe-short children instead (on a farm with free slots):
 *  the stored analysis audio they read (stored when they are), and how to fetch the source if the
 *  shorts are reframed here after all (a single short). */
interface ReframeInChildren {
  storeAudio: () => Promise<NonNullable<AnalyzeVideoResult['reframing']>['audio']>;
  fetchSource: () => Promise<void>;
}

/**
 * Where the asked topics are said, listened for in the audio: pocketsphinx's transcript often
 * mishears an uncommon subject word, and its keyword spotter finds it (transcribe/keyword-spotting.ts).
 * Other transcribers hear topic words well enough; a spotting failure leaves the transcript's mentions.
 */
async function spotAskedTopics(
  ctx: TaskContext<'analyze-video'>,
  dir: string,
  t: Transcribed,
  topics: readonly string[],
  range: Picking['range'],
): Promise<TopicSpot[] | undefined> {
  if (!topics.length || t.transcript.backend !== 'pocketsphinx') return undefined;
  const { pocketsphinxBin, pocketsphinxModelDir } = ctx.config.transcriber;
  try {
    const spots = await spotTopics(t.wav, topics, {
      bin: pocketsphinxBin,
      modelDir: pocketsphinxModelDir,
      workDir: dir,
      range,
      signal: ctx.signal,
    });
    ctx.log.info('asked topics spotted in the audio', { topics: topics.length, spots: spots.length });
    return spots;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    ctx.log.warn('keyword spotting failed; topics are matched in the transcript only', { err: (err as Error).message });
    return undefined;
  }
}

/** Shorts picked over the whole transcript, then each one's speakers found and its crop cut (here,
 *  or by a child task per short). */
async function pickAndReframe(
  ctx: TaskContext<'analyze-video'>,
  dir: string,
  t: Transcribed,
  inChildren?: ReframeInChildren,
): Promise<AnalyzeVideoResult> {
  const p = ctx.payload;
  const { transcript } = t;
  ctx.progress(stageProgress(ANALYZE_STAGES, 'generating_shorts'), 'generating_shorts');
  const picking = pickingOf(p);
  const notes = [...(t.notes ?? [])];
  let picked;
  if (p.predefinedShorts?.length) picked = predefinedShorts(transcript, p.predefinedShorts);
  else if (t.fromPicture) picked = await shortsFromPicture(ctx.config.ffmpegPath, t.sourceFile, t.durationSec, ctx.signal);
  else {
    const model = createHighlightModel(ctx.config.highlightApi, ctx.log);
    if (picking.prompt && !model.readsPrompt)
      notes.push('The prompt was ignored: no language-model picker is configured (HIGHLIGHT_API_URL), so the shorts were picked offline.');
    picked = await model.pick(transcript, {
      signal: ctx.signal,
      energy: t.loudness,
      minSec: picking.clipLength.min,
      maxSec: picking.clipLength.max,
      ...(picking.maxShorts ? { maxShorts: picking.maxShorts } : {}),
      topics: picking.topics,
      topicSpots: await spotAskedTopics(ctx, dir, t, picking.topics, picking.range),
      range: picking.range,
      prompt: picking.prompt,
    });
    if (picking.topics.length && picked.length && picked.every((s) => s.scores?.topicMatch === 0))
      notes.push(
        `No stretch of the talk mentions ${picking.topics.map((x) => `"${x}"`).join(' or ')}: the shorts are the best on any subject.`,
      );
  }
  if (!picked.length) throw new TaskError('No speech long enough for a short was found in this video', 'NO_SHORTS');
  const reframePlan: ReframePlan = { director: { ...DEFAULT_DIRECTOR }, output: cropClipSize(t.width, t.height) };
  const analysed = (short: (typeof picked)[number]) => ({
    title: short.title,
    ...('titledBy' in short && short.titledBy ? { titledBy: short.titledBy } : {}),
    reason: short.reason ?? null,
    startTime: short.startTime,
    endTime: short.endTime,
    startId: short.startId,
    endId: short.endId,
    text: short.text,
    ...(short.score !== undefined && 'scores' in short && short.scores ? { score: short.score, scores: short.scores } : {}),
  });
  const result = {
    durationSec: t.durationSec,
    downloadBytes: t.downloadBytes,
    source: t.storedSource,
    transcript: { language: transcript.language, text: transcript.text, words: transcript.words, backend: transcript.backend },
    ...(notes.length ? { notes } : {}),
    reframePlan,
  };
  if (inChildren && picked.length >= 2) {
    ctx.log.info('shorts picked; each is reframed by a child task', { shorts: picked.length });
    return {
      ...result,
      shorts: picked.map((s) => ({ ...analysed(s), crop: null, reframe: null, detections: null })),
      reframing: { audio: await inChildren.storeAudio() },
    };
  }
  await inChildren?.fetchSource();

  // Stage 80: who is on screen and who speaks in each short, the camera path planned from it,
  // and the crop clip rendered along that path.
  ctx.progress(stageProgress(ANALYZE_STAGES, 'detecting_speakers'), 'detecting_speakers');
  const stage = (from: number, to: number) => (f: number) =>
    ctx.progress(stageProgress(ANALYZE_STAGES, 'detecting_speakers', from + f * (to - from)), 'detecting_speakers');
  const colour = t.colour ?? (await ffprobe(t.sourceFile, { ffprobePath: ctx.config.ffprobePath, signal: ctx.signal })).colour;
  const source: ReframeSource = {
    sourceFile: t.sourceFile,
    width: t.width,
    height: t.height,
    wavPath: t.wav,
    colour,
    audioStream: t.storedSource.audioStream,
  };
  const detections = await detectSpeakers(
    ctx,
    p.jobId,
    source,
    picked.map((s) => ({ start: s.startTime, end: s.endTime })),
    stage(0, 0.6),
  );
  const shorts: AnalyzedShort[] = [];
  for (const [i, s] of picked.entries()) {
    const progress = stage(0.6 + (0.4 * i) / picked.length, 0.6 + (0.4 * (i + 1)) / picked.length);
    const found = detections[i]!;
    const { crop, reframe } = await cropShort(
      ctx,
      dir,
      source,
      { index: i, start: s.startTime, end: s.endTime },
      found,
      reframePlan,
      progress,
    );
    shorts.push({ ...analysed(s), crop, reframe, detections: found });
  }
  return { ...result, shorts };
}
