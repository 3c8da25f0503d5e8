// Audio for analysis, decoded from a source: one canonical format (16 kHz mono signed 16-bit WAV)
// that every transcription backend and the VAD accept (read it with wav.ts, measure it with
// audio-levels.ts).
import { inputGuard } from '@shorts/common/media/input-guard';
import { toolEnv } from '@shorts/common/media/tools';
import { runProcess } from '../run-process.js';

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
}

/**
 * Decodes the first audio stream of `inputPath` into a 16 kHz mono s16 WAV. The protocol whitelist
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
    '0:a:0',
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
