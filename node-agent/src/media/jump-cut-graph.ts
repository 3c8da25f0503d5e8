// Jump cuts in the render graph (issue 24): the kept ranges of a plan (common/src/render/jump-cuts.ts)
// joined in the one filter graph of the render. Pure: the caller runs ffmpeg.
//
// The picture is cut before reframing: select keeps the frames of the kept ranges and setpts closes
// the gaps, so everything after it (reframing, captions, watermark) runs on the edited clock and only
// on frames that are shown. The crop path is remapped onto that clock, so a change of framing inside
// a cut lands on the jump cut itself: one cut, not two. The sound is trimmed range by range and joined
// with a short crossfade, each range lengthened by half the fade at a join, so the joined sound is as
// long as the kept ranges and stays on the picture's clock.
import type { JumpCutPlan } from '@shorts/common/render/jump-cuts';
import { sumOf } from './filter-expression.js';
import { sec } from './reframe-graph.js';

export { remapReframe } from '@shorts/common/reframe/crop-pieces';

/** Long enough to hide the step in the waveform at a join, short enough to stay inside the pause. */
export const JOIN_CROSSFADE_SEC = 0.02;

/** The kept ranges on the clip's clock (0 = the clip's start, where input seeking puts it). */
export function clipRanges(plan: Pick<JumpCutPlan, 'keep'>, clipStart: number): Array<{ start: number; end: number }> {
  return plan.keep.map((k) => ({ start: k.start - clipStart, end: k.end - clipStart }));
}

/**
 * Appends the picture's cut to `graph` and returns its output label. A frame is kept when its time
 * falls in a kept range (half a frame early, as the frame boundaries the plan was snapped to are);
 * its new time is its old one less the cuts before it.
 */
export function buildVideoCut(plan: Pick<JumpCutPlan, 'keep'>, clipStart: number, fps: number, graph: string[], input = '0:v'): string {
  const half = 0.5 / (fps > 0 ? fps : 30);
  const keep = clipRanges(plan, clipStart);
  const selected = keep.map((k) => `gte(t,${sec(k.start - half)})*lt(t,${sec(k.end - half)})`);
  const shifts: string[] = [];
  let t = 0;
  for (const k of keep) {
    const gap = k.start - t;
    // Any time inside the gap tells the frames after it from those before: its middle.
    if (gap > 1e-9) shifts.push(`${sec(gap)}*gte(T,${sec(t + gap / 2)})`);
    t = k.end;
  }
  const shift = shifts.length ? sumOf(shifts) : '0';
  graph.push(`[${input}]select='${sumOf(selected)}',setpts='PTS-(${shift})/TB'[jumpcut]`);
  return 'jumpcut';
}

/** Appends the sound's cut to `graph` and returns its output label. */
export function buildAudioCut(plan: Pick<JumpCutPlan, 'keep'>, clipStart: number, graph: string[], input = '0:a:0'): string {
  const keep = clipRanges(plan, clipStart);
  const fade = JOIN_CROSSFADE_SEC;
  const pieces = keep.map((k, i) => ({
    start: i > 0 ? k.start - fade / 2 : k.start,
    end: i < keep.length - 1 ? k.end + fade / 2 : k.end,
  }));
  if (pieces.length === 1) {
    graph.push(`[${input}]atrim=start=${sec(pieces[0]!.start)}:end=${sec(pieces[0]!.end)},asetpts=PTS-STARTPTS[jumpcut_a]`);
    return 'jumpcut_a';
  }
  const labels = pieces.map((_, i) => `jc${i}`);
  graph.push(`[${input}]asplit=${pieces.length}${labels.map((l) => `[${l}in]`).join('')}`);
  pieces.forEach((p, i) => graph.push(`[${labels[i]}in]atrim=start=${sec(p.start)}:end=${sec(p.end)},asetpts=PTS-STARTPTS[${labels[i]}]`));
  let joined = labels[0]!;
  for (let i = 1; i < labels.length; i++) {
    const out = i === labels.length - 1 ? 'jumpcut_a' : `jcx${i}`;
    // Triangular curves sum to 1 across the fade: the level holds through it.
    graph.push(`[${joined}][${labels[i]}]acrossfade=d=${sec(fade)}:c1=tri:c2=tri[${out}]`);
    joined = out;
  }
  return 'jumpcut_a';
}
