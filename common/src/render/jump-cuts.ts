// Jump cuts (issue 24): which parts of a short a render leaves out, from the transcript's words and
// the voice activity analysis heard. Pure, shared by the agent that renders the cut and the studio
// that shows it on the short's timeline.
import { unionOfRanges as union, type TimeRange } from '../time-ranges.js';
import { fillerKey, resolveEditing, type EditingOptions } from '../options/editing-rules.js';

export type { TimeRange } from '../time-ranges.js';

export interface TimedWord extends TimeRange {
  text: string;
}

export type CutReason = 'silence' | 'filler';

export interface JumpCutPlan {
  /** What stays, in order, on the source's clock, each on a frame boundary of the clip. */
  keep: TimeRange[];
  /** What goes, in order, on the source's clock. */
  cuts: Array<TimeRange & { reason: CutReason }>;
  /** Seconds left out: the clip's length minus the kept ranges'. */
  removedSec: number;
  /** The filler words cut (source clock): never shown, even where a sliver of one is kept. */
  fillerWords: TimedWord[];
}

/** Sound kept either side of speech: word timings and voice activity are a few tens of ms loose. */
export const SPEECH_MARGIN_SEC = 0.04;
/**
 * Voice activity (Silero, 32 ms frames with hysteresis) starts within a frame of a word but lets go
 * of it 0.05-0.14 s late (measured on flite speech against its exact word times): that tail is not
 * speech, and kept as such it would lengthen every pause the cut leaves by as much.
 */
export const VOICE_TAIL_SEC = 0.12;
/** Frame rate assumed when the caller does not know the source's (the studio, for a job analysed
 *  before the source's frame rate was kept). */
const FALLBACK_FPS = 30;

export function isFiller(word: string, fillers: ReadonlySet<string>): boolean {
  const key = fillerKey(word);
  return key !== '' && fillers.has(key);
}

/**
 * The plan for a clip [start, end) of the source. `speech` is voice activity on the source's clock
 * (null or empty: the words alone say where speech is). Never cuts inside a kept word, keeps
 * SPEECH_MARGIN_SEC around speech, never leaves a piece (kept or cut) under 2 frames, and keeps the
 * clip's first and last words.
 */
export function planJumpCuts(input: {
  start: number;
  end: number;
  words: readonly TimedWord[];
  speech?: readonly TimeRange[] | null;
  editing: EditingOptions | undefined;
  fps?: number | null;
}): JumpCutPlan {
  const { start, end } = input;
  const fps = input.fps && input.fps > 0 ? input.fps : FALLBACK_FPS;
  const frame = 1 / fps;
  const whole: JumpCutPlan = { keep: [{ start, end }], cuts: [], removedSec: 0, fillerWords: [] };
  const rules = resolveEditing(input.editing);
  if (!rules || !(end > start)) return whole;

  const words = input.words
    .filter((w) => Number.isFinite(w.start) && Number.isFinite(w.end) && w.end > start && w.start < end && w.text.trim() !== '')
    .map((w) => ({ text: w.text, start: Math.max(start, w.start), end: Math.min(end, Math.max(w.start, w.end)) }))
    .sort((a, b) => a.start - b.start);
  const fillers = rules.fillers ? words.filter((w, i) => i > 0 && i < words.length - 1 && isFiller(w.text, rules.fillers!)) : [];
  const kept = words.filter((w) => !fillers.includes(w));

  // Where something worth hearing sounds: kept words, and voice activity (less its tail) that is not
  // a filler's (nor a sliver either side of one: voice activity is a frame or two loose).
  const voice = subtract(
    (input.speech ?? [])
      .map((r) => ({ start: Math.max(start, r.start), end: Math.min(end, r.end - VOICE_TAIL_SEC) }))
      .filter((r) => r.end > r.start),
    fillers.map((f) => ({ start: f.start - SPEECH_MARGIN_SEC, end: f.end + SPEECH_MARGIN_SEC })),
  );
  const heard = union([...kept, ...voice]);

  const cuts: Array<TimeRange & { reason: CutReason }> = [];
  for (const f of fillers) {
    // A filler goes with no more than the pause around it that silence removal would take.
    const before = lastEndBefore(heard, f.start) ?? start;
    const after = firstStartAfter(heard, f.end) ?? end;
    cuts.push({ start: Math.max(f.start, before + SPEECH_MARGIN_SEC), end: Math.min(f.end, after - SPEECH_MARGIN_SEC), reason: 'filler' });
  }
  if (rules.silence) {
    const { minSilenceSec, keepSec } = rules.silence;
    const half = Math.max(SPEECH_MARGIN_SEC, keepSec / 2);
    const gaps = complement(heard, start, end);
    for (const g of gaps) {
      if (g.end - g.start < minSilenceSec) continue;
      // The clip's own edges have no speech on their far side: the pause left is all on the near one.
      const leading = g.start <= start;
      const trailing = g.end >= end;
      if (leading && trailing) continue;
      const cut = leading
        ? { start, end: g.end - Math.max(SPEECH_MARGIN_SEC, keepSec) }
        : trailing
          ? { start: g.start + Math.max(SPEECH_MARGIN_SEC, keepSec), end }
          : { start: g.start + half, end: g.end - half };
      cuts.push({ ...cut, reason: 'silence' });
    }
  }

  // Cuts on frame boundaries of the clip (its first frame is at `start`), merged where they touch,
  // each at least 2 frames long; a kept piece under 2 frames with no word in it goes too.
  const snap = (t: number) => start + Math.round((t - start) / frame) * frame;
  let merged = mergeCuts(
    cuts.map((c) => ({ ...c, start: snap(c.start), end: snap(c.end) })).filter((c) => c.end - c.start >= 2 * frame - 1e-6),
  );
  const keep = complement(merged, start, end);
  const tooShort = keep.filter((k) => k.end - k.start < 2 * frame - 1e-6 && !kept.some((w) => w.end > k.start && w.start < k.end));
  if (tooShort.length) merged = mergeCuts([...merged, ...tooShort.map((k) => ({ ...k, reason: 'silence' as const }))]);
  const finalKeep = complement(merged, start, end);
  if (!finalKeep.length) return whole;
  const removedSec = merged.reduce((s, c) => s + (c.end - c.start), 0);
  return { keep: finalKeep, cuts: merged, removedSec: round6(removedSec), fillerWords: fillers };
}

/** A time on the source's clock on the edited clip's clock (0 = the first kept moment). Times in a
 *  cut land on the join that replaced it. */
export function editedTime(plan: Pick<JumpCutPlan, 'keep'>, t: number): number {
  let out = 0;
  for (const k of plan.keep) {
    if (t < k.start) return out;
    if (t <= k.end) return out + (t - k.start);
    out += k.end - k.start;
  }
  return out;
}

/** The edited clip's length in seconds. */
export const editedDuration = (plan: Pick<JumpCutPlan, 'keep'>) => plan.keep.reduce((s, k) => s + (k.end - k.start), 0);

/** Words that survive the cuts, on the edited clip's clock (a word partly in a cut keeps its kept part). */
export function editedWords<W extends TimedWord>(plan: JumpCutPlan, words: readonly W[]): W[] {
  const out: W[] = [];
  for (const w of words) {
    if (plan.fillerWords.some((f) => f.start === w.start && f.end === w.end && f.text === w.text)) continue;
    const inside = plan.keep.filter((k) => w.end > k.start && w.start < k.end);
    if (!inside.length) continue;
    const s = Math.max(w.start, inside[0]!.start);
    const e = Math.min(w.end, inside[inside.length - 1]!.end);
    out.push({ ...w, start: editedTime(plan, s), end: editedTime(plan, e) });
  }
  return out;
}

// ---- ranges ---------------------------------------------------------------------------------------

function mergeCuts(cuts: ReadonlyArray<TimeRange & { reason: CutReason }>): Array<TimeRange & { reason: CutReason }> {
  const sorted = cuts
    .filter((c) => c.end > c.start)
    .map((c) => ({ ...c }))
    .sort((a, b) => a.start - b.start);
  const out: Array<TimeRange & { reason: CutReason }> = [];
  for (const c of sorted) {
    const last = out[out.length - 1];
    if (last && c.start <= last.end + 1e-9) {
      if (c.reason === 'filler') last.reason = 'filler';
      last.end = Math.max(last.end, c.end);
    } else out.push(c);
  }
  return out;
}

/** [start, end) less the ranges. */
function complement(ranges: readonly TimeRange[], start: number, end: number): TimeRange[] {
  const out: TimeRange[] = [];
  let t = start;
  for (const r of union(ranges)) {
    if (r.start > t + 1e-9) out.push({ start: t, end: Math.min(end, r.start) });
    t = Math.max(t, r.end);
  }
  if (end > t + 1e-9) out.push({ start: t, end });
  return out;
}

function subtract(ranges: readonly TimeRange[], holes: readonly TimeRange[]): TimeRange[] {
  let out = union(ranges);
  for (const h of holes) {
    out = out.flatMap((r) => {
      if (h.end <= r.start || h.start >= r.end) return [r];
      const parts: TimeRange[] = [];
      if (h.start > r.start) parts.push({ start: r.start, end: h.start });
      if (h.end < r.end) parts.push({ start: h.end, end: r.end });
      return parts;
    });
  }
  return out;
}

const lastEndBefore = (ranges: readonly TimeRange[], t: number) => ranges.filter((r) => r.end <= t).at(-1)?.end;
const firstStartAfter = (ranges: readonly TimeRange[], t: number) => ranges.find((r) => r.start >= t)?.start;
const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
