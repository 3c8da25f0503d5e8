// The face detector an agent is configured with, created once per process: an ONNX session is
// costly to create and is reused across tasks.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '@shorts/common/logger';
import { repoRoot } from '@shorts/common/paths';
import type { AgentConfig } from '../config.js';
import { BlazeFaceDetector } from './blazeface.js';
import type { FaceDetector } from './face-detector.js';

export type FaceDetectorKind = AgentConfig['faceDetector'];

export type FaceDetectorConfig = Pick<AgentConfig, 'faceDetector' | 'faceDetectorModel'>;

/** Where a model that does not ship with npm is expected when FACE_DETECTOR_MODEL is not set. */
export const DEFAULT_MODEL_FILES: Partial<Record<FaceDetectorKind, string>> = {
  scrfd: 'models/scrfd_2.5g_bnkps.onnx',
  yunet: 'models/face_detection_yunet_2023mar.onnx',
};

/** A configured detector that cannot be created: the message says what to fix. */
export class FaceDetectorConfigError extends Error {
  override name = 'FaceDetectorConfigError';
}

function modelFile(config: FaceDetectorConfig): string | undefined {
  const configured = config.faceDetectorModel ?? DEFAULT_MODEL_FILES[config.faceDetector];
  if (!configured) return undefined;
  const file = path.resolve(repoRoot(), configured);
  if (!existsSync(file)) {
    throw new FaceDetectorConfigError(
      `FACE_DETECTOR=${config.faceDetector} needs the model file ${file}, which does not exist` +
        (config.faceDetectorModel ? ' (FACE_DETECTOR_MODEL)' : ' (set FACE_DETECTOR_MODEL, or place the file there; see models/README.md)'),
    );
  }
  return file;
}

/** Threads for one inference: one on small hosts, where ffmpeg decodes on the other core and other
 *  tasks run beside; a few on large ones, where a single frame's inference is the critical path. */
export function detectorThreads(cores = os.cpus().length): number {
  return Math.max(1, Math.min(4, Math.floor(cores / 4)));
}

export async function createFaceDetector(config: FaceDetectorConfig, log: Logger): Promise<FaceDetector> {
  const file = modelFile(config);
  const threads = detectorThreads();
  switch (config.faceDetector) {
    case 'blazeface':
      return BlazeFaceDetector.create({ variant: 'back', log, threads, ...(file ? { modelPath: file } : {}) });
    case 'blazeface-front':
      return BlazeFaceDetector.create({ variant: 'front', log, threads, ...(file ? { modelPath: file } : {}) });
    case 'scrfd':
    case 'yunet': {
      const { createAnchorFreeDetector } = await import('./anchor-free.js');
      return createAnchorFreeDetector(config.faceDetector, file!, log, threads);
    }
  }
}

let shared: { key: string; detector: Promise<FaceDetector> } | undefined;

/** The process's detector for this configuration, created on first use. A failed creation is not
 *  kept, so a fixed configuration (a model file put in place) works without a restart. */
export function sharedFaceDetector(config: FaceDetectorConfig, log: Logger): Promise<FaceDetector> {
  const key = `${config.faceDetector}:${config.faceDetectorModel ?? ''}`;
  if (shared?.key !== key) {
    const detector = createFaceDetector(config, log);
    shared = { key, detector };
    detector.catch(() => {
      if (shared?.detector === detector) shared = undefined;
    });
  }
  return shared.detector;
}
