// The sound of every short: stereo AAC at 48 kHz (5.1 and 7.1 downmixed with ITU-R BS.775's
// coefficients, mono doubled), at the loudness the platforms normalise to (-14 LUFS integrated, true
// peak at most -1 dBTP). Phones and the networks play stereo; a 6-channel track is either refused
// or downmixed by the player, differently on each.
import { inputGuard } from '@shorts/common/media/input-guard';
import { toolEnv } from '@shorts/common/media/tools';
import { runProcess } from '../run-process.js';

export const TARGET_LUFS = -14;
export const TARGET_TRUE_PEAK_DB = -1;
/** Below this the clip is silence (EBU R128's absolute gate is -70 LUFS): no gain is made up for it. */
const SILENCE_LUFS = -60;
/** The limiter's ceiling, in sample peak: under the true-peak target by what AAC's overshoot and
 *  peaks between samples add. */
const LIMITER_CEILING_DB = -2;

/** The sound streams' channel layout as the encoder gets it: the downmix happens before loudness
 *  is measured or changed, so what is measured is what is heard. */
const STEREO = 'aformat=channel_layouts=stereo';

export const SOUND_OUTPUT_ARGS = ['-c:a', 'aac', '-b:a', '160k', '-ar', '48000', '-ac', '2'];

export interface Loudness {
  /** Integrated loudness of the stereo downmix, LUFS. */
  integrated: number;
  /** True peak, dBTP. */
  truePeak: number;
  /** Gain added to make up for what the limiter took (measured after it), dB. */
  makeupDb?: number;
}

/** How far from the target the limited sound may land before its gain is corrected, LU. */
const MAKEUP_TOLERANCE_LU = 0.5;
const MAKEUP_PASSES = 2;

/**
 * EBU R128 loudness of [start, end] of sound stream `stream` (0 = the first), downmixed to stereo:
 * ffmpeg's ebur128 meter, some half a second of one core for a minute of sound. Null when the
 * source has no such stream.
 */
export async function measureLoudness(
  ffmpegPath: string,
  sourcePath: string,
  o: { stream: number; start: number; end: number; signal?: AbortSignal },
): Promise<Loudness | null> {
  const measured = await meter(ffmpegPath, sourcePath, o, STEREO);
  if (!measured) return null;
  // Where the limiter holds peaks down it takes loudness with them (speech whose peaks sit high):
  // the limited sound is measured again and the gain before the limiter raised by what is missing.
  let loudness: Loudness = measured;
  for (let pass = 0; pass < MAKEUP_PASSES && limits(loudness); pass++) {
    const limited = await meter(ffmpegPath, sourcePath, o, soundFilter(loudness));
    const missing = TARGET_LUFS - (limited?.integrated ?? TARGET_LUFS);
    if (Math.abs(missing) <= MAKEUP_TOLERANCE_LU) break;
    loudness = { ...loudness, makeupDb: (loudness.makeupDb ?? 0) + missing };
  }
  return loudness;
}

async function meter(
  ffmpegPath: string,
  sourcePath: string,
  o: { stream: number; start: number; end: number; signal?: AbortSignal },
  filter: string,
): Promise<Loudness | null> {
  const args = [
    '-nostdin',
    '-hide_banner',
    '-nostats',
    ...inputGuard(),
    '-ss',
    o.start.toFixed(3),
    '-to',
    o.end.toFixed(3),
    '-i',
    sourcePath,
    '-map',
    `0:a:${o.stream}`,
    '-af',
    `${filter},ebur128=peak=true`,
    '-f',
    'null',
    '-',
  ];
  const { code, stderr } = await runProcess(ffmpegPath, args, o.signal, { env: toolEnv() });
  if (code !== 0) {
    if (/matches no streams/i.test(stderr)) return null;
    throw new Error(`ffmpeg could not measure the loudness (exit ${code}): ${stderr.trim().split('\n').slice(-2).join(' | ')}`);
  }
  // The summary comes last: "I: -23.0 LUFS" and, under "True peak:", "Peak: -3.1 dBFS".
  const summary = stderr.slice(stderr.lastIndexOf('Summary:'));
  const integrated = Number(/I:\s+(-?[\d.]+|-inf) LUFS/.exec(summary)?.[1]);
  const truePeak = Number(/Peak:\s+(-?[\d.]+|-inf) dBFS/.exec(summary)?.[1]);
  return { integrated: Number.isFinite(integrated) ? integrated : -70, truePeak: Number.isFinite(truePeak) ? truePeak : -Infinity };
}

/**
 * The audio filter chain of a short's sound: stereo, then the gain that brings it to -14 LUFS; where
 * that gain would lift the peaks past the true-peak target, a limiter holds them under it. Without
 * a measurement (a preview clip) or for silence: stereo only, as it is.
 */
export function soundFilter(loudness: Loudness | null | undefined): string {
  if (!loudness || loudness.integrated < SILENCE_LUFS) return STEREO;
  const gain = gainOf(loudness);
  const chain = [STEREO, `volume=${gain.toFixed(2)}dB`];
  if (limits(loudness)) {
    // alimiter's attack and release in ms; its ceiling is linear.
    chain.push(`alimiter=limit=${Math.pow(10, LIMITER_CEILING_DB / 20).toFixed(4)}:attack=5:release=50:level=0`);
  }
  return chain.join(',');
}

const gainOf = (l: Loudness) => TARGET_LUFS - l.integrated + (l.makeupDb ?? 0);
/** Whether the gain lifts the peaks past the true-peak target (then the limiter holds them). */
const limits = (l: Loudness) => l.integrated >= SILENCE_LUFS && l.truePeak + gainOf(l) > TARGET_TRUE_PEAK_DB;
