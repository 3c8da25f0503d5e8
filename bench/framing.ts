// The framing evaluation: randomized scenes composed from the people in ../shared/media, each with its
// labels (who is where, who is heard when, where the edits are), run through stage 80 as the agent
// runs it (`detectShorts` with the agent's detector and ffmpeg, then `planReframe` with the default
// director), and scored as a viewer would judge the short (bench/framing/score.ts).
//   npm run bench:framing -- --split dev|heldout --per-family N [--family a,b] [--json file]
// Seeds 0-999 are the development split, 1000-1999 the held-out split: tune on dev only.
// Scenes are cached by their spec (FRAMING_CACHE, default the temp folder), so a second run only
// analyses.
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '@shorts/common/paths';
import { FAMILIES, SPLITS, type Family, type Split } from './framing/scenes.js';
import { evaluateScene, loadCast } from './framing/evaluate.js';
import { summarise, type FamilySummary, type SceneScore } from './framing/score.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const split = (arg('split') ?? 'dev') as Split;
if (!(split in SPLITS)) throw new Error(`--split must be dev or heldout, not ${split}`);
const perFamily = Number(arg('per-family') ?? 5);
const families = (arg('family')?.split(',') ?? [...FAMILIES]) as Family[];
for (const f of families) if (!FAMILIES.includes(f)) throw new Error(`unknown family ${f} (${FAMILIES.join(', ')})`);
const first = Number(arg('from') ?? 0);
const cacheDir = process.env.FRAMING_CACHE ?? path.join(os.tmpdir(), 'shorts-framing');

const cast = await loadCast(repoRoot());
if (!cast) {
  console.log('skipped: ../shared/media absent');
  process.exit(0);
}
console.log(
  `framing evaluation, ${split} split (seeds ${SPLITS[split] + first}-${SPLITS[split] + first + perFamily - 1} per family), cast: ${cast.cast.people.map((p) => p.name).join(', ')}; voices: ${cast.cast.voices.map((v) => v.name).join(', ')}`,
);
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
        `false switches ${score.falseSwitches}/${score.switches}, sliced ${score.slicedSamples}/${score.faceSamples}, jitter ${fix(score.jitter)}, stage ${score.stageRatio.toFixed(3)}x`,
    );
  }
  all.push(...scores);
  summaries.push(summarise(family, scores));
}
console.log();
console.log(table(summaries));
const json = arg('json');
if (json) await writeFile(json, JSON.stringify({ split, perFamily, summaries, scenes: all }, null, 1));

function pct(v: number | undefined): string {
  return v === undefined ? '—' : `${(100 * v).toFixed(1)} %`;
}
function fix(v: number | undefined, digits = 2): string {
  return v === undefined ? '—' : v.toFixed(digits);
}

export function table(rows: FamilySummary[]): string {
  const head =
    '| family | scenes | on speaker, mean | 10th pct | switch median | worst | false switches/min | sliced | jitter px/frame (mean, max) | faceless shown whole | facecam stacked | stage / source (mean, max) |';
  const lines = rows.map(
    (s) =>
      `| ${s.family} | ${s.scenes} | ${pct(s.onSpeakerMean)} | ${pct(s.onSpeakerP10)} | ${fix(s.latencyMedian)} s | ${fix(s.latencyWorst)} s | ${s.falsePerMinute.toFixed(2)} | ${pct(s.slicedShare)} | ${fix(s.jitterMean)}, ${fix(s.jitterMax)} | ${pct(s.facelessWhole)} | ${pct(s.facecamStacked)} | ${s.stageMean.toFixed(3)}, ${s.stageMax.toFixed(3)} |`,
  );
  return [head, `|${'---|'.repeat(12)}`, ...lines].join('\n');
}
