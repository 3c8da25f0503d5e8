// One scene of the framing evaluation, end to end: composed (or taken from the cache), analysed by
// stage 80's own code as the agent runs it on a short spanning the whole scene (detectWholeVideo), its path planned with
// the default director for a 1080x1920 short, and scored against the labels.
import { performance } from 'node:perf_hooks';
import { createLogger } from '@shorts/common/logger';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { Reframe, ShortDetections } from '@shorts/common/reframe/types';
import type { SpeakerEvidence } from '../../node-agent/src/reframe/detect-shorts.js';
import { sharedFaceDetector } from '../../node-agent/src/reframe/detector-factory.js';
import { detectWholeVideo } from '../../test/helpers/reframe.js';
import { composeScene, type ComposedScene } from './compose.js';
import { findCast, findFootage, mediaDir, type Cast, type Footage } from './people.js';
import { makeScene, type Family, type SceneSpec } from './scenes.js';
import { scoreScene, type SceneScore } from './score.js';

export interface Casting {
  cast: Cast;
  footage: Footage[];
}

/** The people, voices and footage of the shared media folder, or undefined when it is absent. */
export async function loadCast(root: string): Promise<Casting | undefined> {
  const dir = mediaDir(root);
  if (!dir) return undefined;
  return { cast: await findCast(dir), footage: await findFootage(dir) };
}

export interface SceneResult {
  spec: SceneSpec;
  scene: ComposedScene;
  detections: ShortDetections;
  reframe: Reframe;
  score: SceneScore;
}

const log = createLogger({ bench: 'framing' }, 'warn');

export async function evaluateScene(
  family: Family,
  seed: number,
  casting: Casting,
  cacheDir: string,
  onSpeakerEvidence?: (evidence: SpeakerEvidence) => void,
): Promise<SceneResult> {
  const spec = makeScene(family, seed, casting.cast, casting.footage);
  const scene = await composeScene(spec, casting.cast, cacheDir);
  // Loaded before the clock starts: an agent loads its detector once, at start.
  await sharedFaceDetector({ faceDetector: 'blazeface' }, log);
  const t0 = performance.now();
  const detections = await detectWholeVideo(
    { ...scene, width: spec.width, height: spec.height, durationSec: spec.duration },
    onSpeakerEvidence,
  );
  const reframe = planReframe(detections, DEFAULT_DIRECTOR, { width: 1080, height: 1920 });
  const stageSec = (performance.now() - t0) / 1000;
  return { spec, scene, detections, reframe, score: scoreScene(scene.labels, reframe, stageSec) };
}
