import type { TaskType } from './tasks.js';

// Placement by capability. An agent's registered capabilities become plain tags; a task REQUIRES some
// tags (only an agent having all of them may take it) and PREFERS others (offered to an agent without
// them only when no connected agent with them has a free slot, or after a short grace).
//
// Tags:  nvenc                  a real h264_nvenc encode worked on the host
//        encoder:<name>         an ffmpeg video encoder, e.g. encoder:libx264
//        onnx:<provider>        an ONNX execution provider, e.g. onnx:cuda
//        model:<name>           a model file the agent has, e.g. model:whisper-base
//        transcriber            it runs a speech recogniser (any)
//        transcriber:<name>     the speech recogniser it runs, e.g. transcriber:pocketsphinx
//        face-detector          it has a reframing face detector loaded (any)
//        face-detector:<ep>     where that detector's ONNX session runs: face-detector:cuda or :cpu
// Each task type's own placement is in its contract (common/src/tasks/<type>.ts); placementOf
// (common/src/tasks/contracts.ts) adds what an enqueue asks for.
export type CapabilityTag =
  | 'nvenc'
  | 'transcriber'
  | 'face-detector'
  | `encoder:${string}`
  | `onnx:${string}`
  | `model:${string}`
  | `transcriber:${string}`
  | `face-detector:${string}`;

export interface TaskPlacement {
  requires: readonly CapabilityTag[];
  prefers: readonly CapabilityTag[];
}

/** The wire's Capabilities message, as far as placement reads it. */
export interface AdvertisedCapabilities {
  nvenc_available?: boolean;
  video_encoders?: readonly string[];
  onnx_providers?: readonly string[];
  models?: readonly string[];
  transcriber?: string;
  face_detector?: string;
  face_detector_provider?: string;
}

const TAG_PART = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** The tags an agent's advertised capabilities give it (lower case, deduplicated, sorted). */
export function capabilityTags(caps: AdvertisedCapabilities): CapabilityTag[] {
  const tags = new Set<CapabilityTag>();
  const add = (prefix: 'encoder' | 'onnx' | 'model' | 'transcriber' | 'face-detector', value: string) => {
    const v = value.trim().toLowerCase();
    if (TAG_PART.test(v)) tags.add(`${prefix}:${v}`);
  };
  if (caps.nvenc_available) tags.add('nvenc');
  for (const e of caps.video_encoders ?? []) add('encoder', e);
  for (const p of caps.onnx_providers ?? []) add('onnx', p.replace(/^EXECUTION_PROVIDER_/, ''));
  for (const m of caps.models ?? []) add('model', m);
  if (caps.transcriber?.trim()) {
    tags.add('transcriber');
    add('transcriber', caps.transcriber);
  }
  if (caps.face_detector?.trim()) {
    tags.add('face-detector');
    add('face-detector', (caps.face_detector_provider ?? '').replace(/^EXECUTION_PROVIDER_/, ''));
  }
  tags.delete('onnx:unspecified');
  tags.delete('face-detector:unspecified');
  return [...tags].sort();
}

export const isCapabilityTag = (v: string): v is CapabilityTag =>
  v === 'nvenc' ||
  v === 'transcriber' ||
  v === 'face-detector' ||
  /^(encoder|onnx|model|transcriber|face-detector):[a-z0-9][a-z0-9._-]{0,63}$/.test(v);

const TYPE_NOUN: Record<TaskType, string> = {
  'probe-media': 'a media probe agent',
  'analyze-video': 'an analysis agent',
  'analyze-range': 'a transcription agent',
  'reframe-short': 'a reframing agent',
  'render-short': 'a render agent',
  'render-chunk': 'a render agent',
};

/** Words for a tag, for messages a user or operator reads. */
export function describeTag(tag: string): string {
  if (tag === 'nvenc') return 'NVENC';
  if (tag === 'transcriber') return 'a speech recogniser';
  if (tag === 'face-detector') return 'a face detector';
  const [kind, value] = tag.split(':', 2) as [string, string];
  if (kind === 'encoder') return `the ${value} encoder`;
  if (kind === 'onnx') return `the ONNX ${value === 'cuda' ? 'CUDA' : value} execution provider`;
  if (kind === 'model') return `the model ${value}`;
  if (kind === 'transcriber') return `the ${value} transcriber`;
  if (kind === 'face-detector') return `face detection on ${value === 'cuda' ? 'CUDA' : value.toUpperCase()}`;
  return tag;
}

/** "waiting for a render agent" or "waiting for a render agent with NVENC". */
export function waitingMessage(type: TaskType, missing: readonly string[] = []): string {
  const with_ = missing.length ? ` with ${missing.map(describeTag).join(' and ')}` : '';
  return `waiting for ${TYPE_NOUN[type]}${with_}`;
}
