// Framing by hand on the job page: the crop window dragged at the playhead, a layout forced or a face
// pinned over a span. Each change saves the short's whole list of overrides
// (PUT /api/jobs/:jobId/shorts/:shortId/framing), so undo and redo are saving the list before or after.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Box, FramingOverride, Reframe, ReframeLayout } from '@shorts/common/reframe/types';
import { seconds } from '../api.js';
import { ErrorBox, NumberInput } from '../ui.js';
import '../framing.css';

const LAYOUTS: Array<[ReframeLayout, string]> = [
  ['single', 'Single'],
  ['split', 'Split'],
  ['fit', 'Fit'],
  ['stack', 'Stack'],
];

interface Span {
  start: number;
  end: number;
}

const r2 = (v: number) => Math.round(v * 100) / 100;

/** JSON with keys in one order, to compare a list sent with the list served. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The camera's segment at `time`, inside the short: what a change at the playhead applies to. */
function segmentSpan(reframe: Reframe | null, time: number, short: Span): Span {
  const seg = reframe?.segments.find((s) => time >= s.start && time < s.end);
  const start = Math.max(short.start, seg?.start ?? short.start);
  const end = Math.min(short.end, seg?.end ?? short.end);
  return end > start ? { start: r2(start), end: r2(end) } : { start: short.start, end: short.end };
}

export interface Framing {
  overrides: FramingOverride[];
  span: Span;
  /** Set by hand in the panel; null: the segment at the playhead. */
  setSpan: (span: Span | null) => void;
  spanFixed: boolean;
  add: (o: FramingOverride) => void;
  remove: (i: number) => void;
  undo: () => void;
  redo: () => void;
  canUndo: boolean;
  canRedo: boolean;
  /** The window while it is being dragged (source pixels), else null. */
  dragBox: Box | null;
  startDrag: (e: PointerEvent, box: Box, player: HTMLElement) => void;
  busy: boolean;
  error: unknown;
  faces: number[];
}

export function useFraming(opts: {
  shortId: number;
  range: Span;
  reframe: Reframe | null;
  time: number;
  sourceSize: { width: number; height: number };
  /** Saves the whole list; resolves undefined when the save failed (its error is shown by the caller's action). */
  save: (overrides: FramingOverride[]) => Promise<unknown>;
  busy: boolean;
  error: unknown;
}): Framing {
  const served = opts.reframe?.overrides ?? [];
  const [history, setHistory] = useState<{ shortId: number; lists: FramingOverride[][]; at: number }>({
    shortId: opts.shortId,
    lists: [served],
    at: 0,
  });
  // Another short selected: its own history, from what the server has.
  const h = history.shortId === opts.shortId ? history : { shortId: opts.shortId, lists: [served], at: 0 };
  useEffect(() => {
    if (history.shortId !== opts.shortId) setHistory(h);
  }, [opts.shortId]);
  const [fixed, setFixed] = useState<Span | null>(null);
  useEffect(() => setFixed(null), [opts.shortId]);
  const span = fixed ?? segmentSpan(opts.reframe, opts.time, opts.range);
  const [dragBox, setDragBox] = useState<Box | null>(null);

  // What this page last sent, until the job read back shows it: any other change to the served list
  // (a trim clipped it, another tab edited it) starts the history again from the server's list, so
  // an undo never sends spans the short no longer holds.
  const sent = useRef<string | null>(null);
  const goTo = async (lists: FramingOverride[][], at: number) => {
    const before = h;
    setHistory({ shortId: opts.shortId, lists, at });
    sent.current = canonical(lists[at]!);
    // A refused save leaves the list where the server has it.
    if ((await opts.save(lists[at]!)) === undefined) {
      sent.current = null;
      setHistory(before);
    }
  };
  const push = (list: FramingOverride[]) => void goTo([...h.lists.slice(0, h.at + 1), list], h.at + 1);
  const current = h.lists[h.at] ?? served;
  const servedKey = canonical(served);
  useEffect(() => {
    if (servedKey === sent.current) sent.current = null;
    if (sent.current !== null || servedKey === canonical(current)) return;
    setHistory({ shortId: opts.shortId, lists: [served], at: 0 });
  }, [servedKey]);
  // Setting the same span again replaces what was there rather than stacking a second override on it.
  const add = (o: FramingOverride) => push([...current.filter((x) => !(x.start === o.start && x.end === o.end)), o]);

  const latest = useRef({ span, add });
  latest.current = { span, add };
  const startDrag = (e: PointerEvent, box: Box, player: HTMLElement) => {
    e.preventDefault();
    const el = e.currentTarget as HTMLElement;
    el.setPointerCapture(e.pointerId);
    const rect = player.getBoundingClientRect();
    const { width: W, height: H } = opts.sourceSize;
    const from = { x: e.clientX, y: e.clientY };
    let moved: Box = { ...box };
    const move = (m: PointerEvent) => {
      const dx = ((m.clientX - from.x) / rect.width) * W;
      const dy = ((m.clientY - from.y) / rect.height) * H;
      moved = {
        ...box,
        x: Math.round(Math.min(Math.max(0, box.x + dx), W - box.width)),
        y: Math.round(Math.min(Math.max(0, box.y + dy), H - box.height)),
      };
      setDragBox(moved);
    };
    const up = () => {
      el.removeEventListener('pointermove', move);
      el.removeEventListener('pointerup', up);
      el.removeEventListener('pointercancel', up);
      setDragBox(null);
      if (moved.x === Math.round(box.x) && moved.y === Math.round(box.y)) return;
      const { span: s, add: addNow } = latest.current;
      addNow({
        start: s.start,
        end: s.end,
        kind: 'window',
        window: { x: moved.x, y: moved.y, width: Math.round(box.width), height: Math.round(box.height) },
      });
    };
    el.addEventListener('pointermove', move);
    el.addEventListener('pointerup', up);
    el.addEventListener('pointercancel', up);
  };

  const undo = () => {
    if (h.at > 0) void goTo(h.lists, h.at - 1);
  };
  const redo = () => {
    if (h.at < h.lists.length - 1) void goTo(h.lists, h.at + 1);
  };
  useUndoKeys(undo, redo);

  const faces = [...new Set((opts.reframe?.segments ?? []).flatMap((s) => s.tracks))].sort((a, b) => a - b);
  return {
    overrides: current,
    span,
    setSpan: setFixed,
    spanFixed: fixed !== null,
    add,
    remove: (i) => push(current.filter((_, j) => j !== i)),
    undo,
    redo,
    canUndo: h.at > 0,
    canRedo: h.at < h.lists.length - 1,
    dragBox,
    startDrag,
    busy: opts.busy,
    error: opts.error,
    faces,
  };
}

/** Ctrl/Cmd+Z and Ctrl/Cmd+Shift+Z (or Ctrl+Y), except while typing in a field. */
function useUndoKeys(undo: () => void, redo: () => void) {
  const keys = useRef({ undo: () => {}, redo: () => {} });
  keys.current = { undo, redo };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (!(e.ctrlKey || e.metaKey) || target?.closest('input, textarea, select, [contenteditable="true"]')) return;
      const k = e.key.toLowerCase();
      if (k === 'z' && !e.shiftKey) keys.current.undo();
      else if ((k === 'z' && e.shiftKey) || k === 'y') keys.current.redo();
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}

/** The grip on the crop window in the source player: dragging it moves the window over the span. */
export function WindowGrip({ framing, box, sourceSize }: { framing: Framing; box: Box; sourceSize: { width: number; height: number } }) {
  const shown = framing.dragBox ?? box;
  return (
    <div
      class="window-grip"
      data-testid="window-grip"
      role="button"
      aria-label={`Move the window over ${seconds(framing.span.start)} – ${seconds(framing.span.end)} (drag)`}
      title="Drag to move the window over the span shown under Framing"
      style={{
        left: `${((shown.x + shown.width / 2) / sourceSize.width) * 100}%`,
        top: `${(shown.y / sourceSize.height) * 100}%`,
      }}
      onPointerDown={(e) => framing.startDrag(e, box, (e.currentTarget as HTMLElement).closest('.player') as HTMLElement)}
    >
      ✥ Move
    </div>
  );
}

function describe(o: FramingOverride): string {
  if (o.kind === 'window') return `window held at x ${Math.round(o.window.x)}, y ${Math.round(o.window.y)}`;
  if (o.kind === 'layout') return `layout ${o.layout}`;
  return `face ${o.trackId} followed`;
}

/** The span, the layout and face controls, the list of overrides, undo and redo. */
export function FramingPanel({ framing, range }: { framing: Framing; range: Span }) {
  const { span } = framing;
  const setEdge = (edge: 'start' | 'end') => (v: number) => {
    const next = { ...span, [edge]: Math.min(range.end, Math.max(range.start, v)) };
    if (next.end > next.start) framing.setSpan(next);
  };
  const [face, setFace] = useState<string>('');
  return (
    <section class="panel framing-panel" aria-labelledby="framing-title" data-testid="framing-panel">
      <h2 id="framing-title">Framing</h2>
      <p class="muted">
        Drag ✥ on the yellow window to move it, or set a layout or a face, over this span; the render follows.{' '}
        {framing.spanFixed ? (
          <button type="button" class="link" onClick={() => framing.setSpan(null)}>
            Use the shot at the playhead
          </button>
        ) : (
          'The span follows the shot at the playhead.'
        )}
      </p>
      <div class="framing-span">
        <label>
          From (s){' '}
          <NumberInput value={span.start} step={0.1} min={range.start} max={range.end} onCommit={setEdge('start')} testId="framing-from" />
        </label>
        <label>
          to (s) <NumberInput value={span.end} step={0.1} min={range.start} max={range.end} onCommit={setEdge('end')} testId="framing-to" />
        </label>
      </div>
      <div class="framing-layouts" role="group" aria-label="Layout over the span">
        {LAYOUTS.map(([layout, label]) => (
          <button
            key={layout}
            type="button"
            disabled={framing.busy}
            onClick={() => framing.add({ start: span.start, end: span.end, kind: 'layout', layout })}
          >
            {label}
          </button>
        ))}
      </div>
      {framing.faces.length ? (
        <div class="framing-face">
          <label>
            Face{' '}
            <select value={face} onChange={(e) => setFace((e.target as HTMLSelectElement).value)} data-testid="framing-face">
              <option value="">choose…</option>
              {framing.faces.map((id) => (
                <option key={id} value={String(id)}>
                  Face {id}
                </option>
              ))}
            </select>
          </label>{' '}
          <button
            type="button"
            disabled={framing.busy || face === ''}
            onClick={() => framing.add({ start: span.start, end: span.end, kind: 'face', trackId: Number(face) })}
          >
            Pin face
          </button>
        </div>
      ) : null}
      {framing.overrides.length ? (
        <ul class="framing-list" data-testid="framing-list">
          {framing.overrides.map((o, i) => (
            <li key={i}>
              {seconds(o.start)} – {seconds(o.end)}: {describe(o)}{' '}
              <button
                type="button"
                class="link"
                aria-label={`Remove the framing over ${seconds(o.start)} – ${seconds(o.end)}`}
                onClick={() => framing.remove(i)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No framing set by hand: the camera frames the whole short.</p>
      )}
      <div class="framing-history">
        <button type="button" onClick={framing.undo} disabled={!framing.canUndo || framing.busy} title="Undo (Ctrl+Z)">
          Undo framing
        </button>
        <button type="button" onClick={framing.redo} disabled={!framing.canRedo || framing.busy} title="Redo (Ctrl+Shift+Z)">
          Redo framing
        </button>
      </div>
      <ErrorBox error={framing.error} />
    </section>
  );
}
