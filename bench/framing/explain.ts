// Why a scene scores what it does (bench:framing:tune --explain): which detected track is which actor,
// who is heard when, whom attribution named, and each stretch of scored speech whose speaker the
// window missed, with what it showed instead. Where a scene's figure comes from at a glance.
import { shownAt } from '@shorts/common/reframe/window';
import type { DetectedShot, FaceTrack, Reframe, SpeakerTurn } from '@shorts/common/reframe/types';
import type { SceneLabels } from './compose.js';
import { actorsShown, framedIn, scoredSpeaker, slicedBy, stillSpeakerMoves } from './score.js';

const f1 = (v: number) => v.toFixed(1);

/** Each track's actor: the labelled face its box centres fall in most often ('?' for none). */
function actorsOfTracks(labels: SceneLabels, tracks: FaceTrack[]): Map<number, string> {
  const out = new Map<number, string>();
  for (const track of tracks) {
    const votes = new Map<number, number>();
    for (const s of track.samples) {
      const sample = labels.samples[Math.min(labels.samples.length - 1, Math.max(0, Math.round(s.time * 10)))];
      const cx = s.box.x + s.box.width / 2;
      const cy = s.box.y + s.box.height / 2;
      for (const f of sample?.faces ?? [])
        if (cx >= f.box.x && cx <= f.box.x + f.box.width && cy >= f.box.y && cy <= f.box.y + f.box.height)
          votes.set(f.actor, (votes.get(f.actor) ?? 0) + 1);
    }
    const best = [...votes.entries()].sort((a, b) => b[1] - a[1])[0];
    out.set(track.id, best ? `A${best[0]}` : '?');
  }
  return out;
}

export function explainScene(
  labels: SceneLabels,
  tracks: FaceTrack[],
  turns: SpeakerTurn[],
  reframe: Reframe,
  detectedShots: DetectedShot[] = [],
): string {
  const actor = actorsOfTracks(labels, tracks);
  const who = (id: number | null | undefined) => (id === null ? 'nobody' : id === undefined ? '-' : (actor.get(id) ?? `track ${id}`));
  const lines = [`${labels.family} ${labels.seed}: ${labels.width}x${labels.height}, ${labels.duration} s`];
  for (const track of tracks) {
    const height = track.samples.reduce((a, s) => a + s.box.height, 0) / Math.max(1, track.samples.length);
    lines.push(`  track ${track.id} is ${who(track.id)}: faces ${height.toFixed(0)} px tall`);
  }
  lines.push(
    `  heard: ${labels.runs.map((r) => `${f1(r.start)}-${f1(r.end)} ${r.speaker === 'off' ? 'off screen' : `A${r.speaker}`}`).join(', ')}`,
  );
  lines.push(
    `  named: ${turns.map((t) => `${f1(t.start)}-${f1(t.end)} ${who(t.trackId)}${t.confidence !== undefined ? ` (${t.confidence}, then ${who(t.runnerUp)})` : ''}`).join(', ')}`,
  );
  // Runs of missed samples with the same story, 0.1 s apart.
  let last: { start: number; end: number; story: string } | undefined;
  const misses: Array<typeof last & {}> = [];
  for (const sample of labels.samples) {
    const speaker = scoredSpeaker(labels.runs, sample);
    if (speaker === undefined) continue;
    const shown = shownAt(reframe, sample.time);
    if (framedIn(sample, shown.boxes, speaker)) continue;
    const turn = turns.find((t) => sample.time >= t.start && sample.time < t.end);
    const others = actorsShown(sample, shown.boxes).map((a) => `A${a}`);
    const story = `A${speaker} heard, ${shown.layout} showing ${others.join('+') || 'no whole face'}, named ${turn ? who(turn.trackId) : '-'}`;
    if (last && last.story === story && sample.time - last.end < 0.15) last.end = sample.time + 0.1;
    else misses.push((last = { start: sample.time, end: sample.time + 0.1, story }));
  }
  for (const m of misses) lines.push(`  missed ${f1(m.start)}-${f1(m.end)}: ${m.story}`);
  lines.push(...facelessShots(labels, reframe, detectedShots));
  lines.push(...slicedFaces(labels, reframe));
  lines.push(...stillSpeakerWindowMoves(labels, reframe));
  return lines.join('\n');
}

/** Each slide or B-roll shot of the scene: how much of it was shown whole, and the shots detection
 *  found around it (a shot boundary it missed merges the faceless shot into a framed one). */
function facelessShots(labels: SceneLabels, reframe: Reframe, detectedShots: DetectedShot[]): string[] {
  const lines: string[] = [];
  for (const [index, shot] of labels.shots.entries()) {
    if (shot.kind !== 'slide' && shot.kind !== 'broll') continue;
    const samples = labels.samples.filter((s) => s.shot === index && !s.blending);
    const layouts = new Map<string, number>();
    for (const s of samples) {
      const { layout } = shownAt(reframe, s.time);
      layouts.set(layout, (layouts.get(layout) ?? 0) + 1);
    }
    const shown = [...layouts.entries()].map(([layout, n]) => `${layout} ${n}`).join(', ');
    const near = detectedShots
      .filter((d) => d.end > shot.start - 1 && d.start < shot.end + 1)
      .map((d) => `${f1(d.start)}-${f1(d.end)} ${d.transition}`)
      .join(', ');
    lines.push(
      `  ${shot.kind} ${f1(shot.start)}-${f1(shot.end)} (in by ${shot.transition}${shot.transition === 'dissolve' ? ` ${f1(shot.dissolveSec)} s` : ''}): ` +
        `${shown || 'no unblended sample'}; detected shots ${near || 'none'}`,
    );
  }
  return lines;
}

/** Where the window moved while the one person talking held still (what the jitter figure adds up):
 *  each stretch of such frames, how far the window went, and how far the speaker's face went. */
function stillSpeakerWindowMoves(labels: SceneLabels, reframe: Reframe): string[] {
  const stretches: Array<{ start: number; end: number; actor: number; px: number }> = [];
  for (const m of stillSpeakerMoves(labels, reframe).moves) {
    const last = stretches[stretches.length - 1];
    if (last && last.actor === m.actor && m.time - last.end < 0.1) {
      last.end = m.time + 0.04;
      last.px += m.px;
    } else stretches.push({ start: m.time, end: m.time + 0.04, actor: m.actor, px: m.px });
  }
  const faceX = (t: number, actor: number) => {
    const sample = labels.samples[Math.min(labels.samples.length - 1, Math.round(t * 10))];
    const face = sample?.faces.find((f) => f.actor === actor);
    return face ? face.box.x + face.box.width / 2 : NaN;
  };
  return stretches.map((s) => {
    const window = (t: number) => shownAt(reframe, t).boxes[0]!;
    const w0 = window(s.start);
    const w1 = window(s.end);
    return (
      `  window moved ${f1(s.start)}-${f1(s.end)} while A${s.actor} talks still: ${s.px.toFixed(0)} output px; ` +
      `window x ${w0.x.toFixed(0)} -> ${w1.x.toFixed(0)} (${w0.width.toFixed(0)} wide), face centre x ` +
      `${faceX(s.start, s.actor).toFixed(0)} -> ${faceX(s.end, s.actor).toFixed(0)}`
    );
  });
}

/** Each stretch in which a face is cut by the edge of what is shown, and who is framed meanwhile. */
function slicedFaces(labels: SceneLabels, reframe: Reframe): string[] {
  const stretches: Array<{ start: number; end: number; actor: number; story: string }> = [];
  for (const sample of labels.samples) {
    if (sample.blending) continue;
    const shown = shownAt(reframe, sample.time);
    for (const face of sample.faces) {
      if (!slicedBy(face.box, shown.boxes)) continue;
      const story = `${shown.layout} showing ${
        actorsShown(sample, shown.boxes)
          .map((a) => `A${a}`)
          .join('+') || 'no whole face'
      }`;
      const last = [...stretches].reverse().find((s) => s.actor === face.actor);
      if (last && last.story === story && sample.time - last.end < 0.15) last.end = sample.time + 0.1;
      else stretches.push({ start: sample.time, end: sample.time + 0.1, actor: face.actor, story });
    }
  }
  return stretches.map((s) => `  sliced ${f1(s.start)}-${f1(s.end)}: A${s.actor}'s face, ${s.story}`);
}
