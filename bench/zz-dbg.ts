import { readFile } from 'node:fs/promises';
import { repoRoot } from '@shorts/common/paths';
import { attributeSpeakers } from '../node-agent/src/reframe/speakers.js';
import { readWavRange } from '../node-agent/src/reframe/speech.js';
import { voiceChunks, voiceDistance } from '../node-agent/src/reframe/voices.js';
import { loadCast } from '../bench/framing/evaluate.js';
import { makeScene } from '../bench/framing/scenes.js';
import { composeScene } from '../bench/framing/compose.js';
const [family, seed] = [process.argv[2]!, Number(process.argv[3])];
const kept = JSON.parse(await readFile(`/work/fr/framing-cache/evidence/${family}-${seed}.json`, 'utf8'));
const casting = (await loadCast(repoRoot()))!;
const spec = makeScene(family as never, seed, casting.cast, casting.footage);
const scene = await composeScene(spec, casting.cast, '/work/fr/framing-cache');
const audio = await readWavRange(scene.wavPath, kept.evidence.range);
const ev = kept.evidence;
const voices = voiceChunks(audio, ev.speech);
console.log('runs', kept.labels.runs.map((r: any) => `${r.start.toFixed(1)}-${r.end.toFixed(1)}:${r.speaker}`).join(' '));
console.log('speech', ev.speech.map((r: any) => `${r.start.toFixed(1)}-${r.end.toFixed(1)}`).join(' '));
// who is heard per voice piece (label majority)
const who = (c: any) => { const r = kept.labels.runs.filter((r: any) => r.end > c.start && r.start < c.end).sort((a: any, b: any) => (Math.min(b.end, c.end) - Math.max(b.start, c.start)) - (Math.min(a.end, c.end) - Math.max(a.start, c.start)))[0]; return r?.speaker; };
console.log('pieces', voices.map((c) => `${c.start.toFixed(1)}:${who(c)}`).join(' '));
for (const c of voices) console.log(`${c.start.toFixed(1)} ${who(c)}`.padEnd(10), voices.map((d) => voiceDistance(c, d).toFixed(1)).join(' '));
const env = { ...ev.envelope, values: Float32Array.from(ev.envelope.values) };
// track → person by label samples? print tracks' mean x
console.log('tracks', ev.tracks.map((t: any) => `${t.id}@x${Math.round(t.samples[0].box.x)} ${t.samples[0].time.toFixed(1)}-${t.samples.at(-1).time.toFixed(1)}${t.lipsTooSmall ? ' small' : ''}`).join(', '));
for (const vp of [0.8]) {
  const turns = attributeSpeakers(ev.tracks, ev.speech, ev.range, ev.fps, { voicePool: vp }, env, voices);
  console.log(`vp ${vp}:`, turns.map((t) => `${t.start.toFixed(1)}-${t.end.toFixed(1)}:${t.trackId}(${t.confidence})`).join(' '));
}
