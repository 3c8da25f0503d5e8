// Original file: protos/shorts/v1/agent.proto

import type { GpuInfo as _shorts_v1_GpuInfo, GpuInfo__Output as _shorts_v1_GpuInfo__Output } from '../../shorts/v1/GpuInfo.js';
import type { ExecutionProvider as _shorts_v1_ExecutionProvider, ExecutionProvider__Output as _shorts_v1_ExecutionProvider__Output } from '../../shorts/v1/ExecutionProvider.js';
import type { Long } from '@grpc/proto-loader';

export interface Capabilities {
  'cpu_cores'?: (number);
  'gpus'?: (_shorts_v1_GpuInfo)[];
  /**
   * A real 1-frame h264_nvenc encode succeeded on this host.
   */
  'nvenc_available'?: (boolean);
  'onnx_providers'?: (_shorts_v1_ExecutionProvider)[];
  'free_disk_bytes'?: (number | string | Long);
  'task_types'?: (string)[];
  'max_concurrent_tasks'?: (number);
  'ffmpeg_version'?: (string);
  'video_encoders'?: (string)[];
  'transcriber'?: (string);
  /**
   * The face detector reframing runs (FACE_DETECTOR; e.g. "blazeface-back-256"); empty when the
   * agent does not analyse videos.
   */
  'face_detector'?: (string);
  /**
   * Where that detector's ONNX session runs: CUDA only when the provider loaded on this host.
   */
  'face_detector_provider'?: (_shorts_v1_ExecutionProvider);
  /**
   * Model files the agent has (for example "whisper-base.en", "silero-vad"); tasks may require one.
   */
  'models'?: (string)[];
}

export interface Capabilities__Output {
  'cpu_cores': (number);
  'gpus': (_shorts_v1_GpuInfo__Output)[];
  /**
   * A real 1-frame h264_nvenc encode succeeded on this host.
   */
  'nvenc_available': (boolean);
  'onnx_providers': (_shorts_v1_ExecutionProvider__Output)[];
  'free_disk_bytes': (number);
  'task_types': (string)[];
  'max_concurrent_tasks': (number);
  'ffmpeg_version': (string);
  'video_encoders': (string)[];
  'transcriber': (string);
  /**
   * The face detector reframing runs (FACE_DETECTOR; e.g. "blazeface-back-256"); empty when the
   * agent does not analyse videos.
   */
  'face_detector': (string);
  /**
   * Where that detector's ONNX session runs: CUDA only when the provider loaded on this host.
   */
  'face_detector_provider': (_shorts_v1_ExecutionProvider__Output);
  /**
   * Model files the agent has (for example "whisper-base.en", "silero-vad"); tasks may require one.
   */
  'models': (string)[];
}
