import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const text = error instanceof ApiError ? error.message : error instanceof Error ? error.message : String(error);
  return (
    <div class="error" role="alert">
      {text}
    </div>
  );
}

export function ProgressBar({ value, label, state }: { value: number; label: string; state?: 'done' | 'failed' }) {
  const pct = Math.max(0, Math.min(100, value));
  return (
    <div
      class={`progress ${state ?? ''}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(pct)}
    >
      <div style={{ width: `${pct}%` }} />
    </div>
  );
}

/** Loads data with `load`, reloads when deps change, and every `pollMs` while `poll` says so about the latest data.
 *  `reload` starts a load and returns at once (for event handlers); `refresh` is the same load, awaitable. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[], opts: { pollMs?: number; poll?: (v: T) => boolean } = {}) {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const seq = useRef(0);
  const latest = useRef<T | undefined>(undefined);
  const refresh = useCallback(async (): Promise<T | undefined> => {
    const mine = ++seq.current;
    try {
      const v = await load();
      if (mine === seq.current) {
        latest.current = v;
        setData(v);
        setError(null);
      }
      return v;
    } catch (err) {
      if (mine === seq.current) setError(err);
      return undefined;
    }
  }, deps);
  // A load never rejects (its error is kept in `error`).
  const reload = useCallback(() => {
    void refresh();
  }, [refresh]);
  useEffect(() => {
    latest.current = undefined;
    reload();
    if (!opts.pollMs) return;
    // One loop for the screen's life: whoever reloaded last, the newest data decides whether to poll.
    const timer = setInterval(() => {
      const v = latest.current;
      if (v !== undefined && (!opts.poll || opts.poll(v))) reload();
    }, opts.pollMs);
    return () => clearInterval(timer);
  }, [reload]);
  return {
    data,
    error,
    reload,
    refresh,
    setData: (v: T) => {
      latest.current = v;
      setData(v);
    },
  };
}

/** Runs an action, keeping its error (as the API worded it) and a busy flag for the button. */
export function useAction<A extends unknown[], R>(fn: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn(...args);
    } catch (err) {
      setError(err);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, setError };
}

export function Pager({
  total,
  limit,
  offset,
  onPage,
}: {
  total: number;
  limit: number;
  offset: number;
  onPage: (offset: number) => void;
}) {
  const pages = Math.max(1, Math.ceil(total / limit));
  const page = Math.floor(offset / limit) + 1;
  return (
    <nav class="pager" aria-label="Pages">
      <button disabled={offset === 0} onClick={() => onPage(Math.max(0, offset - limit))}>
        Previous
      </button>
      <span aria-live="polite">
        Page {page} of {pages} ({total} in all)
      </span>
      <button disabled={offset + limit >= total} onClick={() => onPage(offset + limit)}>
        Next
      </button>
    </nav>
  );
}

export function Field({ label, children, id }: { label: string; id: string; children: ComponentChildren }) {
  return (
    <div>
      <label for={id}>{label}</label>
      {children}
    </div>
  );
}

/**
 * A number field that keeps what is being typed until it is committed (Enter, Tab, leaving the
 * field): screens that follow the playhead re-render several times a second, and a plain controlled
 * input would put the shown value back over the user's edit before it is committed.
 */
export function NumberInput(props: {
  value: number;
  onCommit: (v: number) => void;
  step?: number;
  min?: number;
  max?: number;
  id?: string;
  testId?: string;
  style?: Record<string, string>;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft === null) return;
    const v = Number(draft);
    setDraft(null);
    if (draft.trim() !== '' && Number.isFinite(v)) props.onCommit(v);
  };
  return (
    <input
      id={props.id}
      type="number"
      step={props.step}
      min={props.min}
      max={props.max}
      style={props.style}
      value={draft ?? props.value}
      onInput={(e) => setDraft((e.target as HTMLInputElement).value)}
      onChange={commit}
      onBlur={commit}
      onKeyDown={(e) => e.key === 'Enter' && commit()}
      data-testid={props.testId}
    />
  );
}

/** A list's filter select: a new value starts the list again from its first page (`onChange` says how). */
export function FilterSelect(props: {
  id: string;
  label: string;
  value: string;
  options: ReadonlyArray<readonly [value: string, label: string]>;
  onChange: (value: string) => void;
}) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={props.value} onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}>
        {props.options.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </div>
  );
}
