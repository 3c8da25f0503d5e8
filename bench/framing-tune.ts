// Tuning speaker attribution on the framing evaluation's development split, fast: each scene is
// analysed once and what attribution decides from (faces, mouths, speech, the voice's envelope) kept
// (FRAMING_CACHE/evidence); every setting tried then replays only attribution, the camera and the
// score, milliseconds a scene.
//   npm run bench:framing:tune -- --per-family N [--from K] [--family a,b] [--try '{"switchCost":[0.4,0.6]}'] [--split heldout] [--each] [--explain] [--trace T0-T1]
// (--each prints every scene's figures; --explain why each scene misses what it misses: framing/explain.ts;
// --trace what attribution weighed for each track at each sample from T0 to T1 s, stage by stage.)
// Tune on the development split only. `--split heldout` is for reporting the chosen setting on scenes
// it was not tuned on (kept evidence is valid while detection itself is unchanged; bench:framing runs
// everything afresh).
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import type { ShortDetections } from '@shorts/common/reframe/types';
import type { SpeakerEvidence } from '../node-agent/src/reframe/detect-shorts.js';
import { attributeSpeakers, type AttributionOptions, type AttributionTrace } from '../node-agent/src/reframe/speakers.js';
import { readWavRange } from '../node-agent/src/reframe/speech.js';
import { voiceChunks, type VoiceChunk } from '../node-agent/src/reframe/voices.js';
import { credibleTracks, type CredibleTrackOptions } from '../node-agent/src/reframe/tracks.js';
import { evaluateScene, loadCast } from './framing/evaluate.js';
import { makeScene, SPLITS } from './framing/scenes.js';
import { composeScene, type SceneLabels } from './framing/compose.js';
import { arg, sceneSelection } from './framing/args.js';
import { scoreScene, summarise, table, type SceneScore } from './framing/score.js';
import { explainScene } from './framing/explain.js';

const { split, perFamily, first, families, cacheDir } = sceneSelection();
const grid = JSON.parse(arg('try') ?? '{}') as Record<string, number[]>;
const traceSpan = arg('trace')?.split('-').map(Number);
if (traceSpan && !(traceSpan.length === 2 && traceSpan[1]! > traceSpan[0]!))
  throw new Error(`--trace takes a span of seconds, T0-T1, not ${arg('trace')}`);
const evidenceDir = path.join(cacheDir, 'evidence');
await mkdir(evidenceDir, { recursive: true });

interface Kept {
  labels: SceneLabels;
  detections: ShortDetections;
  evidence: Omit<SpeakerEvidence, 'envelope' | 'voices'> & { envelope: { start: number; rate: number; values: number[] } };
  stageSec: number;
}

const casting = await loadCast(repoRoot());
if (!casting) {
  console.log('skipped: ../shared/media absent');
  process.exit(0);
}
const scenes: Array<Kept & { voices: VoiceChunk[] }> = [];
/** Voice prints are taken from the scene's sound again (cheap), so evidence kept before them holds. */
async function withVoices(kept: Kept): Promise<Kept & { voices: VoiceChunk[] }> {
  const spec = makeScene(kept.labels.family as (typeof families)[number], kept.labels.seed, casting!.cast, casting!.footage);
  const scene = await composeScene(spec, casting!.cast, cacheDir);
  const audio = await readWavRange(scene.wavPath, kept.evidence.range);
  // The scene's labels as made now (compose.ts): kept evidence holds while detection is unchanged,
  // and is scored against today's labels.
  return { ...kept, labels: scene.labels, voices: voiceChunks(audio, kept.evidence.speech) };
}
for (const family of families) {
  for (let k = 0; k < perFamily; k++) {
    const seed = SPLITS[split] + first + k;
    const file = path.join(evidenceDir, `${family}-${seed}.json`);
    if (existsSync(file)) {
      scenes.push(await withVoices(JSON.parse(await readFile(file, 'utf8')) as Kept));
      continue;
    }
    let evidence: SpeakerEvidence | undefined;
    const result = await evaluateScene(family, seed, casting, cacheDir, (e) => (evidence = e));
    const { voices: _printedAgain, ...seen } = evidence!;
    const kept: Kept = {
      labels: result.scene.labels,
      detections: result.detections,
      evidence: { ...seen, envelope: { ...seen.envelope, values: [...seen.envelope.values] } },
      stageSec: result.score.stageRatio * result.spec.duration,
    };
    await writeFile(file, JSON.stringify(kept));
    scenes.push(await withVoices(kept));
    console.log(`  ${family} ${seed}: analysed`);
  }
}

// Every combination of the settings tried: attribution's options, and the doubtful-face filter's
// (unsureScore, minPresence: tracks.ts).
type Setting = Partial<AttributionOptions> & Partial<CredibleTrackOptions>;
let settings: Setting[] = [{}];
for (const [key, values] of Object.entries(grid)) settings = settings.flatMap((s) => values.map((v) => ({ ...s, [key]: v })));

/** The scene's tracks as the agent keeps them (evidence kept before it dropped doubtful faces is
 *  filtered here as the agent filters it now), in the evidence and in the detections alike. */
function credible(scene: Kept, options: Partial<CredibleTrackOptions>): Pick<Kept, 'evidence' | 'detections'> {
  const tracks = credibleTracks(scene.evidence.tracks, scene.detections.shots ?? [], scene.evidence.fps, options);
  const ids = new Set(tracks.map((t) => t.id));
  return {
    evidence: { ...scene.evidence, tracks },
    detections: { ...scene.detections, tracks: scene.detections.tracks.filter((t) => ids.has(t.id)) },
  };
}

/** Prints each stage of attribution over [from, to) s: a row a sample (S where speech is heard), a column
 *  a track. */
function traceOf(
  scene: string,
  tracks: Array<{ id: number }>,
  speech: Array<{ start: number; end: number }>,
  [from, to]: [number, number],
): AttributionTrace {
  return (stage, grid, values) => {
    console.log(`${scene}, ${stage} (tracks ${tracks.map((t) => t.id).join(', ')})`);
    grid.forEach((t, i) => {
      if (t < from || t >= to) return;
      const heard = speech.some((s) => t >= s.start && t < s.end) ? 'S' : ' ';
      console.log(`  ${t.toFixed(2).padStart(6)} ${heard} ${values.map((v) => v[i]!.toFixed(2).padStart(5)).join(' ')}`);
    });
  };
}

for (const options of settings) {
  const scores: SceneScore[] = scenes.map((scene) => {
    const { labels, stageSec, voices } = scene;
    const { evidence, detections } = credible(scene, options);
    const envelope = { ...evidence.envelope, values: Float32Array.from(evidence.envelope.values) };
    const trace = traceSpan && traceOf(`${labels.family} ${labels.seed}`, evidence.tracks, evidence.speech, traceSpan as [number, number]);
    const turns = attributeSpeakers(evidence.tracks, evidence.speech, evidence.range, evidence.fps, options, envelope, voices, trace).map(
      (t) => ({
        start: Number(t.start.toFixed(3)),
        end: Number(t.end.toFixed(3)),
        trackId: t.trackId,
        ...(t.confidence !== undefined ? { confidence: t.confidence } : {}),
        ...(t.runnerUp !== undefined ? { runnerUp: t.runnerUp } : {}),
      }),
    );
    const reframe = planReframe({ ...detections, turns }, DEFAULT_DIRECTOR, { width: 1080, height: 1920 });
    if (process.argv.includes('--explain')) console.log(explainScene(labels, evidence.tracks, turns, reframe, detections.shots));
    return scoreScene(labels, reframe, stageSec);
  });
  console.log(`\n${JSON.stringify(options)}`);
  console.log(
    table(
      families.map((f) =>
        summarise(
          f,
          scores.filter((s) => s.family === f),
        ),
      ),
    ),
  );
  if (process.argv.includes('--each'))
    for (const s of scores) {
      const faceless = s.facelessSamples ? `, faceless whole ${s.facelessWhole}/${s.facelessSamples}` : '';
      const facecam = s.facecamSamples ? `, stacked ${s.facecamStacked}/${s.facecamSamples}` : '';
      console.log(
        `${s.family} ${s.seed}: ${s.onSpeaker === undefined ? '—' : `${(100 * s.onSpeaker).toFixed(1)} %`} on speaker, ` +
          `worst switch ${Math.max(0, ...s.latencies).toFixed(2)} s, false switches ${s.falseSwitches} in ${s.duration} s, ` +
          `sliced ${s.slicedSamples}/${s.faceSamples}${faceless}${facecam}` +
          `${s.jitter ? `, jitter ${s.jitter.toFixed(2)} px a frame` : ''}`,
      );
    }
  const low = scores.filter((s) => s.onSpeaker !== undefined && s.onSpeaker < 0.8);
  console.log(`under 80 %: ${low.map((s) => `${s.family} ${s.seed} ${(100 * s.onSpeaker!).toFixed(0)} %`).join(', ') || 'none'}`);
}
