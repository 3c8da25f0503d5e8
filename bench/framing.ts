// The framing evaluation: randomized scenes composed from the people in ../shared/media, each with its
// labels (who is where, who is heard when, where the edits are), run through stage 80 as the agent
// runs it (`detectShorts` with the agent's detector and ffmpeg, then `planReframe` with the default
// director), and scored as a viewer would judge the short (bench/framing/score.ts).
//   npm run bench:framing -- --split dev|heldout --per-family N [--from K] [--family a,b] [--json file] [--compose-only]
// Seeds 0-999 are the development split, 1000-1999 the held-out split: tune on dev only.
// Scenes are cached by their spec (FRAMING_CACHE, default the temp folder), so a second run only
// analyses.
import { writeFile } from 'node:fs/promises';
import { repoRoot } from '@shorts/common/paths';
import { composeScene } from './framing/compose.js';
import { SPLITS, makeScene } from './framing/scenes.js';
import { evaluateScene, loadCast } from './framing/evaluate.js';
import { arg, sceneSelection } from './framing/args.js';
import { fix, pct, summarise, table, type FamilySummary, type SceneScore } from './framing/score.js';

const { split, perFamily, first, families, cacheDir } = sceneSelection();

const cast = await loadCast(repoRoot());
if (!cast) {
  console.log('skipped: ../shared/media absent');
  process.exit(0);
}
console.log(
  `framing evaluation, ${split} split (seeds ${SPLITS[split] + first}-${SPLITS[split] + first + perFamily - 1} per family), cast: ${cast.cast.people.map((p) => p.name).join(', ')}; voices: ${cast.cast.voices.map((v) => v.name).join(', ')}`,
);
if (process.argv.includes('--compose-only')) {
  // Makes the scenes ahead of a run (composing is most of a first run's time), nothing else.
  for (const family of families) {
    for (let k = 0; k < perFamily; k++) {
      const spec = makeScene(family, SPLITS[split] + first + k, cast.cast, cast.footage);
      await composeScene(spec, cast.cast, cacheDir);
      console.log(`  ${family} ${spec.seed}: composed`);
    }
  }
  process.exit(0);
}
const all: SceneScore[] = [];
const summaries: FamilySummary[] = [];
for (const family of families) {
  const scores: SceneScore[] = [];
  for (let k = 0; k < perFamily; k++) {
    const seed = SPLITS[split] + first + k;
    const { score, spec } = await evaluateScene(family, seed, cast, cacheDir);
    scores.push(score);
    console.log(
      `  ${family} ${seed}: ${spec.width}x${spec.height} ${spec.fps} fps ${spec.duration.toFixed(1)} s, ${spec.actors.length} people` +
        `${spec.mirror ? ', mirrored' : ''}${spec.content.height < spec.height || spec.content.width < spec.width ? ', bars' : ''}` +
        ` | on speaker ${pct(score.onSpeaker)} (${score.scoredSamples} samples), latencies ${score.latencies.map((l) => l.toFixed(2)).join(' ')}, ` +
        `false switches ${score.falseSwitches}/${score.switches}, sliced ${score.slicedSamples}/${score.faceSamples}, jitter ${fix(score.jitter)}` +
        `${score.facelessSamples ? `, faceless whole ${score.facelessWhole}/${score.facelessSamples}` : ''}` +
        `${score.facecamSamples ? `, facecam stacked ${score.facecamStacked}/${score.facecamSamples}` : ''}, stage ${score.stageRatio.toFixed(3)}x`,
    );
  }
  all.push(...scores);
  summaries.push(summarise(family, scores));
}
console.log();
console.log(table(summaries));
const json = arg('json');
if (json) await writeFile(json, JSON.stringify({ split, perFamily, summaries, scenes: all }, null, 1));
