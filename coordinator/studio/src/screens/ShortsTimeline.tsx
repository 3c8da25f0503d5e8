import { Fragment } from 'preact';
import { useRef, useState } from 'preact/hooks';
import type { BearerJobShort } from '@shorts/common/api/jobs';
import { editedDuration, type JumpCutPlan } from '@shorts/common/render/jump-cuts';
import type { SourceShot } from '@shorts/common/reframe/types';
import { seconds } from '../api.js';

type Short = BearerJobShort;
type Side = 'in' | 'out';

/**
 * The shorts on the source's timeline: a mark per short, the selected one's start and end handles
 * (dragged, or moved with the arrow keys), its source edits and jump cuts, and the playhead.
 */
export function ShortsTimeline({
  shorts,
  selected,
  duration,
  time,
  shots,
  cutPlan,
  onSelect,
  saveRange,
}: {
  shorts: Short[];
  selected: Short | undefined;
  duration: number;
  time: number;
  /** The selected short's source shots (its reframing data), if it has them. */
  shots: SourceShot[] | undefined;
  cutPlan: JumpCutPlan | null;
  onSelect: (s: Short) => void;
  /** Saves a short's new range (the edit is sent when a handle is let go, or on each arrow key). */
  saveRange: (s: Short, startTime: number, endTime: number) => Promise<unknown>;
}) {
  const { drag, timeline, onHandleDown, onHandleKey } = useHandleDrag(duration, saveRange);
  return (
    <div class="timeline" ref={timeline} aria-label="Shorts on the source timeline">
      {shorts.map((s) => {
        const r = drag?.id === s.id ? drag : s;
        const at = (t: number) => `${(t / Math.max(duration, 0.001)) * 100}%`;
        return (
          <Fragment key={s.id}>
            <button
              class={`mark ${s.id === selected?.id ? 'selected' : ''}`}
              aria-label={`Short ${s.id + 1}: ${s.title}, ${seconds(r.startTime)} to ${seconds(r.endTime)}`}
              style={{ left: at(r.startTime), width: at(r.endTime - r.startTime) }}
              onClick={() => onSelect(s)}
            />
            {s.id === selected?.id
              ? (['in', 'out'] as const).map((side) => (
                  <div
                    key={`${s.id}-${side}`}
                    class={`handle ${side}`}
                    data-testid={`handle-${side}`}
                    role="slider"
                    tabIndex={0}
                    aria-label={side === 'in' ? `Start of “${s.title}” (drag, or arrow keys)` : `End of “${s.title}” (drag, or arrow keys)`}
                    aria-valuemin={0}
                    aria-valuemax={duration}
                    aria-valuenow={side === 'in' ? r.startTime : r.endTime}
                    style={{ left: at(side === 'in' ? r.startTime : r.endTime) }}
                    onPointerDown={onHandleDown(s, side)}
                    onKeyDown={onHandleKey(s, side)}
                  />
                ))
              : null}
          </Fragment>
        );
      })}
      {shots ? <ShotEdits shots={shots} duration={duration} /> : null}
      {cutPlan ? <JumpCuts plan={cutPlan} duration={duration} /> : null}
      <div class="head" style={{ left: `${(time / Math.max(duration, 0.001)) * 100}%` }} />
    </div>
  );
}

/** The handles' drag: while a handle is dragged the mark follows the pointer; the edit is saved when it is let go. */
function useHandleDrag(duration: number, saveRange: (s: Short, startTime: number, endTime: number) => Promise<unknown>) {
  const [drag, setDrag] = useState<{ id: number; startTime: number; endTime: number } | null>(null);
  const timeline = useRef<HTMLDivElement>(null);
  const timeAtPointer = (e: PointerEvent) => {
    const box = timeline.current!.getBoundingClientRect();
    return Math.min(duration, Math.max(0, ((e.clientX - box.left) / box.width) * duration));
  };
  const onHandleDown = (s: Short, side: Side) => (e: PointerEvent) => {
    e.preventDefault();
    (e.target as HTMLElement).setPointerCapture(e.pointerId);
    setDrag({ id: s.id, startTime: s.startTime, endTime: s.endTime });
    const el = e.target as HTMLElement;
    let latest = { id: s.id, startTime: s.startTime, endTime: s.endTime };
    const move = (m: PointerEvent) => {
      const t = timeAtPointer(m);
      latest =
        side === 'in'
          ? { ...latest, startTime: Math.min(t, latest.endTime - 1) }
          : { ...latest, endTime: Math.max(t, latest.startTime + 1) };
      setDrag(latest);
    };
    const up = () => {
      el.removeEventListener('pointermove', move);
      el.removeEventListener('pointerup', up);
      el.removeEventListener('pointercancel', up);
      void saveRange(s, latest.startTime, latest.endTime).finally(() => setDrag(null));
    };
    el.addEventListener('pointermove', move);
    el.addEventListener('pointerup', up);
    el.addEventListener('pointercancel', up);
  };
  const onHandleKey = (s: Short, side: Side) => (e: KeyboardEvent) => {
    const step = e.key === 'ArrowLeft' ? -0.5 : e.key === 'ArrowRight' ? 0.5 : 0;
    if (!step) return;
    e.preventDefault();
    void (side === 'in' ? saveRange(s, s.startTime + step, s.endTime) : saveRange(s, s.startTime, s.endTime + step));
  };
  return { drag, timeline, onHandleDown, onHandleKey };
}

/** The source's edits inside the selected short: a thin mark on each hard cut, a band over each dissolve's blend. */
function ShotEdits({ shots, duration }: { shots: SourceShot[]; duration: number }) {
  const at = (t: number) => `${(t / Math.max(duration, 0.001)) * 100}%`;
  return (
    <>
      {shots.map((shot, i) => {
        if (shot.transition === 'cut') {
          return (
            <div key={i} class="shot-cut" data-testid="shot-cut" title={`Cut at ${seconds(shot.start)}`} style={{ left: at(shot.start) }} />
          );
        }
        if (shot.transition === 'dissolve') {
          const end = Math.max(shot.start, shot.transitionEnd ?? shot.start);
          return (
            <div
              key={i}
              class="shot-dissolve"
              data-testid="shot-dissolve"
              title={`Dissolve ${seconds(shot.start)} to ${seconds(end)}`}
              style={{ left: at(shot.start), width: at(end - shot.start) }}
            />
          );
        }
        return null;
      })}
    </>
  );
}

/** What the render's jump cuts leave out of the selected short: a striped band under each removed range. */
function JumpCuts({ plan, duration }: { plan: JumpCutPlan; duration: number }) {
  const at = (t: number) => `${(t / Math.max(duration, 0.001)) * 100}%`;
  return (
    <>
      {plan.cuts.map((c, i) => (
        <div
          key={i}
          class="jump-cut"
          data-testid="jump-cut"
          data-start={c.start.toFixed(3)}
          data-end={c.end.toFixed(3)}
          title={`Removed (${c.reason}) ${seconds(c.start)} to ${seconds(c.end)}`}
          style={{ left: at(c.start), width: at(c.end - c.start) }}
        />
      ))}
    </>
  );
}

/** Under the timeline: the playhead, what the crop frame shows, and what the jump cuts remove from the selected short. */
export function TimelineNotes({
  time,
  duration,
  reframed,
  cutPlan,
  selected,
}: {
  time: number;
  duration: number;
  reframed: boolean;
  cutPlan: JumpCutPlan | null;
  selected: Short | undefined;
}) {
  return (
    <>
      <p class="muted">
        Playhead {seconds(time)} / {seconds(duration)}
        {reframed ? ' · yellow frame: the reframing path' : ' · dashed frame: centre crop (this short has no reframing data)'}
      </p>
      {cutPlan && selected ? (
        <p class="muted" data-testid="jump-cut-summary">
          Jump cuts: {cutPlan.cuts.length} removed ({cutPlan.removedSec.toFixed(1)} s, striped on the timeline); the short plays{' '}
          {editedDuration(cutPlan).toFixed(1)} s of {(selected.endTime - selected.startTime).toFixed(1)} s, and playback here skips what is
          removed.
        </p>
      ) : null}
    </>
  );
}
