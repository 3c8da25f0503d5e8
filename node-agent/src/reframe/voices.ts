// Whose voice is heard: a print of each short stretch of speech (the statistics of its cepstrum, the
// shape of the speaker's vocal tract more than what they say), so that speaker attribution can weigh
// what the lips show during one stretch together with what they showed during the other stretches
// in the same voice. Lip sync over one sentence is often near chance (a listener mouthing along,
// faces a few dozen pixels high); over every sentence a voice says, the face that owns it stands out.
// Plain signal processing, no model: voices only need telling apart within one short, not naming.
import type { Interval, WavRange } from './speech.js';

/** Speech is printed in pieces of about this length: long enough for the statistics to settle,
 *  short enough that a turn taken after a breath (joined with the one before into one stretch of
 *  speech) gets pieces of its own. On the framing evaluation's development scenes (turns 0-6),
 *  pieces of 0.8 s told voices apart too seldom to help, 1.2 and 1.6 s alike. */
export const VOICE_CHUNK_SEC = 1.2;
const FRAME_SEC = 0.025;
const HOP_SEC = 0.01;
const MEL_BANDS = 26;
const CEPSTRA = 12;
const LOW_HZ = 80;
const HIGH_HZ = 7600;
/** Frames quieter than this under the piece's loudest are pauses and consonant tails, not the voice. */
const VOICED_WITHIN_DB = 30;

export interface VoiceChunk extends Interval {
  /** Mean and spread of each cepstral coefficient over the piece's voiced frames, normalised over
   *  the short (normalisePrints); empty when the piece has too few voiced frames to say. */
  print: Float64Array;
}

/** In-place radix-2 FFT of (re, im), length a power of two, with its twiddles (cos, sin) precomputed. */
function fft(re: Float64Array, im: Float64Array, cos: Float64Array, sin: Float64Array): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j]!, re[i]!];
      [im[i], im[j]] = [im[j]!, im[i]!];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const stride = n / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < len / 2; k++) {
        const wr = cos[k * stride]!;
        const wi = sin[k * stride]!;
        const a = i + k;
        const b = a + len / 2;
        const xr = re[b]! * wr - im[b]! * wi;
        const xi = re[b]! * wi + im[b]! * wr;
        re[b] = re[a]! - xr;
        im[b] = im[a]! - xi;
        re[a] = re[a]! + xr;
        im[a] = im[a]! + xi;
      }
    }
  }
}

const toMel = (hz: number) => 2595 * Math.log10(1 + hz / 700);
const fromMel = (mel: number) => 700 * (10 ** (mel / 2595) - 1);

/** Triangular mel filters over the bins of an `nfft`-point spectrum: each its first bin and weights. */
function melFilters(nfft: number, sampleRate: number): Array<{ from: number; weights: Float64Array }> {
  const edges = Array.from({ length: MEL_BANDS + 2 }, (_, i) => toMel(LOW_HZ) + ((toMel(HIGH_HZ) - toMel(LOW_HZ)) * i) / (MEL_BANDS + 1));
  const bins = edges.map((m) => (fromMel(m) * nfft) / sampleRate);
  return Array.from({ length: MEL_BANDS }, (_, b) => {
    const from = Math.max(0, Math.ceil(bins[b]!));
    const to = Math.min(nfft / 2, Math.floor(bins[b + 2]!));
    const weights = Float64Array.from({ length: Math.max(0, to - from + 1) }, (_, j) => {
      const k = from + j;
      return Math.max(0, Math.min((k - bins[b]!) / (bins[b + 1]! - bins[b]!), (bins[b + 2]! - k) / (bins[b + 2]! - bins[b + 1]!)));
    });
    return { from, weights };
  });
}

/** Cepstra (coefficients 1..CEPSTRA) and loudness (dB) of the audio's frames inside `pieces`. */
function cepstra(
  audio: WavRange,
  pieces: Interval[],
): { times: Float64Array; loudness: Float64Array; ceps: Array<Float64Array | undefined> } {
  const frame = Math.round(FRAME_SEC * audio.sampleRate);
  const hop = Math.round(HOP_SEC * audio.sampleRate);
  let nfft = 1;
  while (nfft < frame) nfft <<= 1;
  const filters = melFilters(nfft, audio.sampleRate);
  const window = Float64Array.from({ length: frame }, (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (frame - 1)));
  const cos = Float64Array.from({ length: nfft / 2 }, (_, k) => Math.cos((-2 * Math.PI * k) / nfft));
  const sin = Float64Array.from({ length: nfft / 2 }, (_, k) => Math.sin((-2 * Math.PI * k) / nfft));
  const dct = Array.from({ length: CEPSTRA }, (_, c) =>
    Float64Array.from({ length: MEL_BANDS }, (_, m) => Math.cos((Math.PI * (c + 1) * (m + 0.5)) / MEL_BANDS)),
  );
  const count = audio.samples.length >= frame ? Math.floor((audio.samples.length - frame) / hop) + 1 : 0;
  const times = Float64Array.from({ length: count }, (_, f) => audio.startSec + (f * hop + frame / 2) / audio.sampleRate);
  const loudness = new Float64Array(count).fill(-Infinity);
  const ceps: Array<Float64Array | undefined> = new Array<Float64Array | undefined>(count);
  const re = new Float64Array(nfft);
  const im = new Float64Array(nfft);
  const logMel = new Float64Array(MEL_BANDS);
  for (let f = 0; f < count; f++) {
    // Only speech is printed: the frames between pieces are never read.
    if (!pieces.some((p) => times[f]! >= p.start && times[f]! < p.end)) continue;
    re.fill(0);
    im.fill(0);
    let energy = 0;
    for (let i = 0; i < frame; i++) {
      const j = f * hop + i;
      // Pre-emphasis: the formants that tell vocal tracts apart count more than the low hum.
      const v = (audio.samples[j]! - 0.97 * (j > 0 ? audio.samples[j - 1]! : 0)) / 32768;
      re[i] = v * window[i]!;
      energy += v * v;
    }
    fft(re, im, cos, sin);
    for (let b = 0; b < MEL_BANDS; b++) {
      const { from, weights } = filters[b]!;
      let sum = 0;
      for (let j = 0; j < weights.length; j++) sum += weights[j]! * (re[from + j]! ** 2 + im[from + j]! ** 2);
      logMel[b] = Math.log(sum + 1e-10);
    }
    const c = new Float64Array(CEPSTRA);
    for (let n = 0; n < CEPSTRA; n++) {
      let sum = 0;
      for (let m = 0; m < MEL_BANDS; m++) sum += logMel[m]! * dct[n]![m]!;
      c[n] = sum;
    }
    loudness[f] = 10 * Math.log10(energy / frame + 1e-12);
    ceps[f] = c;
  }
  return { times, loudness, ceps };
}

/** Speech cut into pieces of about `chunkSec` (each stretch into equal pieces), each with its print. */
export function voiceChunks(audio: WavRange, speech: Interval[], chunkSec = VOICE_CHUNK_SEC): VoiceChunk[] {
  const pieces = speech.flatMap((s) => {
    const n = Math.max(1, Math.round((s.end - s.start) / chunkSec));
    return Array.from({ length: n }, (_, k) => ({
      start: s.start + ((s.end - s.start) * k) / n,
      end: s.start + ((s.end - s.start) * (k + 1)) / n,
    }));
  });
  const { times, loudness, ceps } = cepstra(audio, pieces);
  const chunks = pieces.map((piece) => {
    const frames: number[] = [];
    for (let f = 0; f < times.length; f++) if (ceps[f] && times[f]! >= piece.start && times[f]! < piece.end) frames.push(f);
    const loudest = Math.max(...frames.map((f) => loudness[f]!));
    const voiced = frames.filter((f) => loudness[f]! >= loudest - VOICED_WITHIN_DB);
    if (voiced.length < 10) return { ...piece, print: new Float64Array(0) };
    const print = new Float64Array(2 * CEPSTRA);
    for (let c = 0; c < CEPSTRA; c++) {
      const values = voiced.map((f) => ceps[f]![c]!);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      print[c] = mean;
      print[CEPSTRA + c] = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length);
    }
    return { ...piece, print };
  });
  normalisePrints(chunks);
  return chunks;
}

/** Each coefficient in units of its spread over the short's pieces: what the room and the microphone
 *  add is the same in all of them, and what differs between voices is measured on one scale. */
function normalisePrints(chunks: VoiceChunk[]): void {
  const printed = chunks.filter((c) => c.print.length);
  if (printed.length < 2) return;
  const dims = printed[0]!.print.length;
  for (let d = 0; d < dims; d++) {
    const values = printed.map((c) => c.print[d]!);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const spread = Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length) || 1;
    for (const c of printed) c.print[d] = (c.print[d]! - mean) / spread;
  }
}

/** Distance of two prints (root mean square of their normalised differences): about 1.6-1.9 between
 *  two voices, 0.9-1.2 between two pieces of different words in one voice, near 0 for the same words
 *  said again; NaN when either has no print. */
export function voiceDistance(a: VoiceChunk, b: VoiceChunk): number {
  if (!a.print.length || !b.print.length) return NaN;
  let sum = 0;
  for (let d = 0; d < a.print.length; d++) sum += (a.print[d]! - b.print[d]!) ** 2;
  return Math.sqrt(sum / a.print.length);
}
