// How well voice prints (node-agent/src/reframe/voices.ts) tell the framing evaluation's voices apart:
// each scene's labelled runs of one voice are printed as speaker attribution prints speech, and every
// pair of pieces within a scene is a same-voice or an other-voice pair. Prints the share of
// (same, other) pairs ordered right (the AUC) and the distance quantiles of each kind.
//   npm run bench:framing:voices -- --split dev|heldout --per-family N [--from K] [--family a,b]
import { repoRoot } from '@shorts/common/paths';
import { readWavRange } from '../node-agent/src/reframe/speech.js';
import { voiceChunks, voiceDistance } from '../node-agent/src/reframe/voices.js';
import { composeScene } from './framing/compose.js';
import { loadCast } from './framing/evaluate.js';
import { makeScene, SPLITS } from './framing/scenes.js';
import { sceneSelection } from './framing/args.js';

const { split, perFamily, first, families, cacheDir } = sceneSelection();
const casting = await loadCast(repoRoot());
if (!casting) {
  console.log('skipped: ../shared/media absent');
  process.exit(0);
}

const quantiles = (xs: number[]) =>
  [0.1, 0.5, 0.9].map((q) => xs.sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]?.toFixed(2) ?? '—').join(' / ');
/** Share of (same, other) pairs where the same-voice pair is the closer one. */
function auc(same: number[], other: number[]): number {
  const sorted = [...other].sort((a, b) => a - b);
  let wins = 0;
  for (const s of same) {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! <= s) lo = mid + 1;
      else hi = mid;
    }
    wins += sorted.length - lo;
  }
  return same.length && other.length ? wins / (same.length * other.length) : NaN;
}

for (const family of families) {
  const same: number[] = [];
  const other: number[] = [];
  const perScene: string[] = [];
  for (let k = 0; k < perFamily; k++) {
    const spec = makeScene(family, SPLITS[split] + first + k, casting.cast, casting.footage);
    const scene = await composeScene(spec, casting.cast, cacheDir);
    const audio = await readWavRange(scene.wavPath, { start: 0, end: spec.duration });
    const runs = scene.labels.runs.filter((r) => r.end - r.start >= 0.4);
    const chunks = runs.flatMap((run) => voiceChunks(audio, [run]).map((c) => ({ c, who: run.speaker })));
    // Printed together, as attribution prints a short's speech (the normalisation is over the short).
    const together = voiceChunks(
      audio,
      chunks.map(({ c }) => c),
      1e9,
    );
    const s0: number[] = [];
    const o0: number[] = [];
    for (let i = 0; i < together.length; i++)
      for (let j = i + 1; j < together.length; j++) {
        const [a, b] = [chunks[i]!.who, chunks[j]!.who];
        if (a === 'off' && b === 'off') continue;
        const d = voiceDistance(together[i]!, together[j]!);
        if (Number.isNaN(d)) continue;
        (a === b ? s0 : o0).push(d);
      }
    same.push(...s0);
    other.push(...o0);
    perScene.push(`${spec.seed}: ${(100 * auc(s0, o0)).toFixed(0)} %`);
  }
  console.log(
    `${family}: AUC ${(100 * auc(same, other)).toFixed(1)} % (${same.length} same, ${other.length} other pairs); distance 10/50/90 %: same ${quantiles(same)}, other ${quantiles(other)}`,
  );
  console.log(`  ${perScene.join(', ')}`);
}
