// ONNX sessions for reframing: on the CUDA execution provider when the host has an NVIDIA GPU and
// onnxruntime's CUDA provider loads, else on CPU. The provider actually used is reported back, so the
// agent can say what it runs on.
import { existsSync } from 'node:fs';
import type { InferenceSession } from 'onnxruntime-node';
import type { Logger } from '@shorts/common/logger';

export type OnnxProvider = 'CPU' | 'CUDA';

/** The NVIDIA driver's device nodes; without them the CUDA provider cannot load, and trying only
 *  makes onnxruntime print an error. */
export function hostHasNvidiaGpu(): boolean {
  return existsSync('/dev/nvidiactl') || existsSync('/proc/driver/nvidia/version');
}

export interface OnnxSessionHandle {
  session: InferenceSession;
  provider: OnnxProvider;
}

export async function createOnnxSession(
  modelPath: string,
  opts: { log: Logger; threads?: number; tryCuda?: boolean },
): Promise<OnnxSessionHandle> {
  const ort = await import('onnxruntime-node');
  const base: InferenceSession.SessionOptions = {
    intraOpNumThreads: opts.threads ?? 1,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    // The barracuda exports carry unused initialisers that onnxruntime warns about on every load.
    logSeverityLevel: 3,
  };
  if (opts.tryCuda ?? hostHasNvidiaGpu()) {
    try {
      const session = await ort.InferenceSession.create(modelPath, { ...base, executionProviders: ['cuda'] });
      return { session, provider: 'CUDA' };
    } catch (err) {
      // onnxruntime-node installs its CUDA provider only on request (and it needs CUDA 12 + cuDNN).
      opts.log.warn('CUDA execution provider did not load; running on CPU', { model: modelPath, err: (err as Error).message });
    }
  }
  const session = await ort.InferenceSession.create(modelPath, { ...base, executionProviders: ['cpu'] });
  return { session, provider: 'CPU' };
}
