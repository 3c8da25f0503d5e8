// Speech the tests make: words spoken by flite, one clip each, joined with the pauses the test asks
// for. Each word's time is where its clip's sound is, so the transcript is exact by construction.
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { FFMPEG } from './media.js';
import type { Word } from '@shorts/common/text/transcript';

const run = promisify(execFile);
export const SPEECH_RATE = 16_000;
/** The gap flite leaves between words said one at a time is trimmed to this. */
const WORD_GAP_SEC = 0.08;
/** Below this a 16-bit sample is quiet enough to be the clip's silence (the tests hear words above it). */
export const QUIET = 400;

/** Reads a mono 16-bit WAV's samples (the 44-byte header flite and ffmpeg write). */
export async function readPcm16(file: string): Promise<Int16Array> {
  const { stdout } = await run(FFMPEG, ['-v', 'error', '-i', file, '-ac', '1', '-ar', String(SPEECH_RATE), '-f', 's16le', '-'], {
    encoding: 'buffer',
    maxBuffer: 512 * 1024 * 1024,
  });
  return new Int16Array(stdout.buffer, stdout.byteOffset, stdout.length / 2);
}

/**
 * `parts`: words (strings) and pauses (numbers, seconds, replacing the usual gap between words).
 * Returns a 16 kHz mono WAV and the words with their times.
 */
export async function makeSpeech(dir: string, parts: Array<string | number>): Promise<{ wav: string; words: Word[]; durationSec: number }> {
  await mkdir(dir, { recursive: true });
  const chunks: Int16Array[] = [];
  const words: Word[] = [];
  let samples = 0;
  let pendingPause: number | null = 0.3;
  const silence = (sec: number) => {
    const n = Math.round(sec * SPEECH_RATE);
    chunks.push(new Int16Array(n));
    samples += n;
  };
  for (const [i, part] of parts.entries()) {
    if (typeof part === 'number') {
      pendingPause = (pendingPause ?? 0) + part;
      continue;
    }
    silence(pendingPause ?? WORD_GAP_SEC);
    pendingPause = null;
    const clip = path.join(dir, `word-${i}.wav`);
    await run('flite', ['-t', part, '-o', clip]);
    const pcm = await readPcm16(clip);
    let a = 0;
    let b = pcm.length;
    while (a < b && Math.abs(pcm[a]!) < QUIET) a++;
    while (b > a && Math.abs(pcm[b - 1]!) < QUIET) b--;
    const sound = pcm.slice(a, b);
    words.push({ text: part, start: samples / SPEECH_RATE, end: (samples + sound.length) / SPEECH_RATE });
    chunks.push(sound);
    samples += sound.length;
  }
  silence(pendingPause ?? 0.3);
  const pcm = new Int16Array(samples);
  let at = 0;
  for (const c of chunks) {
    pcm.set(c, at);
    at += c.length;
  }
  const wav = path.join(dir, 'speech.wav');
  await writeFile(wav, wavFile(pcm, SPEECH_RATE));
  return { wav, words, durationSec: samples / SPEECH_RATE };
}

export function wavFile(pcm: Int16Array, rate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + pcm.length * 2, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(pcm.length * 2, 40);
  return Buffer.concat([header, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.length * 2)]);
}

/**
 * A video of the speech, 25 fps, over a moving test pattern (so every frame differs) or, with
 * `flat`, over one flat colour (so what a render draws on it, captions and watermark, stands out).
 */
export async function speechVideo(
  wav: string,
  out: string,
  durationSec: number,
  size = '640x360',
  opts: { flat?: string } = {},
): Promise<string> {
  const picture = opts.flat ? `color=c=${opts.flat}:s=${size}:r=25:d=${durationSec}` : `testsrc2=s=${size}:r=25:d=${durationSec}`;
  await run(FFMPEG, [
    '-y',
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    picture,
    '-i',
    wav,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-ar',
    '48000',
    '-b:a',
    '192k',
    '-shortest',
    out,
  ]);
  return out;
}
