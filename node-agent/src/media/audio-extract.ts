// Audio for analysis, decoded from a source: one canonical format (16 kHz mono signed 16-bit WAV)
// that every transcription backend and the VAD accept (read it with wav.ts, measure it with
// audio-levels.ts).
import { inputGuard } from '@shorts/common/media/input-guard';
import { toolEnv } from '@shorts/common/media/tools';
import path from 'node:path';
import { runProcess } from '../run-process.js';
import { speechProbabilities } from '../transcribe/vad.js';
import { readWavPcm } from './wav.js';

export const ANALYSIS_SAMPLE_RATE = 16_000;

/** A source that has no audio stream at all; retrying elsewhere will not help. */
export class NoAudioTrackError extends Error {
  constructor(inputPath: string) {
    super(`the video has no audio track to transcribe (${inputPath.split('/').pop()})`);
    this.name = 'NoAudioTrackError';
  }
}

export interface ExtractOptions {
  signal?: AbortSignal;
  startSec?: number;
  durationSec?: number;
  /** Output size limit (`-fs`): stops the decode where timestamps cannot be trusted to. */
  maxBytes?: number;
  /** Which sound stream (`0:a:<n>`); the first when absent. */
  stream?: number;
}

/**
 * Decodes an audio stream of `inputPath` (the first unless told) into a 16 kHz mono s16 WAV, 5.1 and
 * 7.1 downmixed as the render's stereo is (sound.ts), then to mono. The protocol whitelist
 * keeps a crafted media file (playlists, concat lists) from making ffmpeg open network or other
 * local resources on its own.
 */
export async function extractAudio(ffmpegPath: string, inputPath: string, outWav: string, opts: ExtractOptions = {}): Promise<void> {
  const args = ['-nostdin', '-hide_banner', '-loglevel', 'error', ...inputGuard()];
  if (opts.startSec !== undefined) args.push('-ss', String(opts.startSec));
  args.push('-i', inputPath);
  if (opts.durationSec !== undefined) args.push('-t', String(opts.durationSec));
  if (opts.maxBytes !== undefined) args.push('-fs', String(Math.ceil(opts.maxBytes)));
  args.push(
    '-map',
    `0:a:${opts.stream ?? 0}`,
    '-vn',
    '-sn',
    '-dn',
    '-ac',
    '1',
    '-ar',
    String(ANALYSIS_SAMPLE_RATE),
    '-c:a',
    'pcm_s16le',
    '-f',
    'wav',
    '-y',
    outWav,
  );
  const { code, stderr } = await runProcess(ffmpegPath, args, opts.signal, { env: toolEnv() });
  if (code === 0) return;
  if (/matches no streams|does not contain any stream/i.test(stderr)) throw new NoAudioTrackError(inputPath);
  throw new Error(`ffmpeg could not extract audio (exit ${code}): ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
}

/** `seconds` of silence as the analysis audio of a source that has no sound: reframing's voice
 *  activity and the shorts' loudness read it as they read any. */
export async function writeSilence(ffmpegPath: string, outWav: string, seconds: number, signal?: AbortSignal): Promise<void> {
  const args = [
    ...['-nostdin', '-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `anullsrc=r=${ANALYSIS_SAMPLE_RATE}:cl=mono`],
    ...['-t', seconds.toFixed(3), '-c:a', 'pcm_s16le', '-f', 'wav', '-y', outWav],
  ];
  const { code, stderr } = await runProcess(ffmpegPath, args, signal, { env: toolEnv() });
  if (code !== 0) throw new Error(`ffmpeg could not write silence (exit ${code}): ${stderr.trim().split('\n').pop()}`);
}

/** Speech heard in one stream's samples, over the stretches listened to: the fraction of VAD frames. */
export interface StreamSpeech {
  stream: number;
  speechShare: number;
}

/** A recording's tracks are listened to over this much of it, in a few stretches spread across it. */
const LISTEN_SEC = 90;
const LISTEN_STRETCHES = 3;

/**
 * The sound stream with the most speech, among several (OBS records desktop sound and the
 * microphone as separate tracks, the desktop first): each is heard by the VAD over a few stretches of
 * the source. One stream: it, unheard.
 */
export async function pickSpeechStream(
  ffmpegPath: string,
  inputPath: string,
  o: { streams: number; durationSec: number; workDir: string; signal?: AbortSignal },
): Promise<{ stream: number; heard: StreamSpeech[] }> {
  if (o.streams <= 1) return { stream: 0, heard: [] };
  const stretch = Math.min(o.durationSec, LISTEN_SEC) / LISTEN_STRETCHES;
  const starts = Array.from({ length: LISTEN_STRETCHES }, (_, i) => ((o.durationSec - stretch) * i) / Math.max(1, LISTEN_STRETCHES - 1));
  const heard: StreamSpeech[] = [];
  for (let stream = 0; stream < o.streams; stream++) {
    let frames = 0;
    let speech = 0;
    for (const [i, startSec] of starts.entries()) {
      const wav = path.join(o.workDir, `track-${stream}-${i}.wav`);
      await extractAudio(ffmpegPath, inputPath, wav, { stream, startSec, durationSec: stretch, signal: o.signal });
      const { samples } = await readWavPcm(wav);
      const vad = await speechProbabilities(samples, { signal: o.signal });
      frames += vad.probs.length;
      for (const p of vad.probs) if (p >= 0.5) speech++;
    }
    heard.push({ stream, speechShare: frames ? speech / frames : 0 });
  }
  const best = heard.reduce((a, b) => (b.speechShare > a.speechShare ? b : a));
  return { stream: best.stream, heard };
}
