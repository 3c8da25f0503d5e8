import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { CAPTION_PRESETS, type StyleItem } from '@shorts/common/render/presets';
import type { WatermarkPlacement } from '@shorts/common/render/watermark-geometry';
import { editedDuration, planJumpCuts, type JumpCutPlan } from '@shorts/common/render/jump-cuts';
import { cutsAnything, editingFromSwitches, jumpCutFlags, type EditingOptions } from '@shorts/common/options/editing';
import type { BearerJob, BearerJobShort, CreatedJob, ShortEditResponse } from '@shorts/common/api/jobs';
import type { BrandPreset } from '@shorts/common/api/brandings';
import type { FileView } from '@shorts/common/api/files';
import type { CreatedRender, RenderCaptionPlacement, RenderStatus } from '@shorts/common/api/renders';
import { api, currentPlan, hrefOf, seconds, stageOf } from '../api.js';
import { PLAN_LIMITS, type Plan } from '../../../src/tenancy/plans.js';
import { BASE_SIZE, initialSize, planSizes, rememberChoice, rememberedChoice, rememberSize, sizeKey, type RenderSize } from '../sizes.js';
import { pageAt, styleFor, type Word } from '../captions.js';
import type { ReframeLayout, ReframeQuality, SourceShot } from '@shorts/common/reframe/types';
import { withCaptionBand } from '@shorts/common/reframe/caption-band';
import { centredCrop, cropAt, layoutAt, qualityLine, readReframe, type Crop } from '../reframe.js';
import { go } from '../router.js';
import { ErrorBox, ProgressBar, useAction, useLoad } from '../ui.js';
import { PostForm } from './Social.js';
import { ShortRenders } from './ShortRenders.js';
import { TranscriptEditor } from './TranscriptEditor.js';
import { CaptionPositionNote } from '../CaptionPositionNote.js';
import { RenderPreview, type CaptionPosition, type PreviewWatermark } from './RenderPreview.js';
import { FramingPanel, useFraming, WindowGrip } from './Framing.js';
import type { FramingOverride } from '@shorts/common/reframe/types';

/** A short as the job's bearer-token form gives it (GET /api/jobs/:jobId). */
export type Short = BearerJobShort;
type JobView = BearerJob;
export type Preset = BrandPreset;

/** The source video's clock, read every animation frame while playing (and on seeks). */
function usePlayhead(video: { current: HTMLVideoElement | null }) {
  const [time, setTime] = useState(0);
  useEffect(() => {
    let raf = 0;
    const loop = () => {
      const v = video.current;
      if (v) setTime((prev) => (Math.abs(prev - v.currentTime) > 0.02 ? v.currentTime : prev));
      raf = requestAnimationFrame(loop);
    };
    raf = requestAnimationFrame(loop);
    return () => cancelAnimationFrame(raf);
  }, []);
  return time;
}

/** A signed URL without its signature and expiry: the object it names. */
const objectOf = (url: string) => url.split(/[?#]/)[0];

/**
 * The player's source. Every read of the job signs the source video's URL afresh (a new signature
 * and expiry for the same object), and a new `src` would load the video again from 0:00, paused:
 * so the player keeps the URL it has while the object is the same, and keeps its position and
 * whether it plays. Should the kept signature expire while the player still needs ranges (an error
 * on the element), it takes the newest URL and goes on from the same moment.
 */
function useSourceUrl(url: string | undefined) {
  const kept = useRef(url);
  const latest = useRef(url);
  latest.current = url;
  const resume = useRef<{ time: number; playing: boolean } | null>(null);
  const [, setRenewals] = useState(0);
  if (url !== kept.current && (!url || !kept.current || objectOf(url) !== objectOf(kept.current))) {
    kept.current = url;
    resume.current = null;
  }
  return {
    src: kept.current,
    onError: (v: HTMLVideoElement) => {
      const next = latest.current;
      if (!next || next === kept.current) return;
      resume.current = { time: v.currentTime, playing: !v.paused };
      kept.current = next;
      setRenewals((n) => n + 1);
    },
    onLoadedMetadata: (v: HTMLVideoElement) => {
      const at = resume.current;
      resume.current = null;
      if (!at) return;
      v.currentTime = at.time;
      if (at.playing) void v.play().catch(() => undefined);
    },
  };
}

export function JobPage({ jobId, shortParam }: { jobId: string; shortParam: string | null }) {
  const job = useLoad(() => api<JobView>('GET', `/api/jobs/${jobId}`), [jobId], { pollMs: 2000, poll: (j) => j.status === 'PROCESSING' });
  const j = job.data;
  return (
    <>
      <p>
        <a href="#/jobs">← All jobs</a>
      </p>
      <ErrorBox error={job.error} />
      {j ? (
        <>
          <h1>{j.title || 'Untitled job'}</h1>
          <p>
            <span class={`status ${j.status}`}>{j.status}</span> <span class="stage">{stageOf(j)}</span>
            {j.cost != null ? <span class="muted"> · cost {j.cost} credits</span> : null}
          </p>
          {j.status === 'PROCESSING' ? (
            <div style={{ maxWidth: '420px' }}>
              <ProgressBar value={j.progress} label="Job progress" /> <span class="muted">{j.progress}%</span>
            </div>
          ) : null}
          {j.status === 'FAILED' ? (
            <div class="error" role="alert">
              {j.message ?? 'The job failed'}
            </div>
          ) : null}
          {j.status === 'COMPLETED' && j.data ? <Review job={j} shortParam={shortParam} onChanged={job.reload} /> : null}
        </>
      ) : null}
    </>
  );
}

function Review({ job, shortParam, onChanged }: { job: JobView; shortParam: string | null; onChanged: () => void }) {
  const data = job.data!;
  const shorts = data.shorts;
  const words = data.transcription?.words ?? [];
  const video = useRef<HTMLVideoElement>(null);
  const time = usePlayhead(video);
  const [duration, setDuration] = useState(data.transcription?.durationSec ?? 0);
  const [selectedId, setSelectedId] = useState<number>(shortParam !== null ? Number(shortParam) : (shorts[0]?.id ?? 0));
  const short = shorts.find((s) => s.id === selectedId) ?? shorts[0];
  const [videoSize, setVideoSize] = useState<{ width: number; height: number } | null>(null);
  const sourceSize = { width: data.source?.width ?? videoSize?.width ?? 16, height: data.source?.height ?? videoSize?.height ?? 9 };
  const reframe = short ? readReframe(short.reframe, sourceSize.width, sourceSize.height) : null;

  // Shorts are edited in place (PATCH/POST/DELETE /api/jobs/:id/shorts): each edit names the
  // revision it was made on, taken from the last answer so quick edits need not wait for a reload.
  const revision = useRef(data.shortsRevision ?? 0);
  revision.current = Math.max(revision.current, data.shortsRevision ?? 0);
  const edit = useAction(async (method: 'PATCH' | 'POST' | 'DELETE', path: string, body?: Record<string, unknown>) => {
    const url = `/api/jobs/${job.jobId}/shorts${path}`;
    const res =
      method === 'DELETE'
        ? await api<ShortEditResponse>('DELETE', url, { query: { revision: revision.current } })
        : await api<ShortEditResponse>(method, url, { body: { ...body, revision: revision.current } });
    revision.current = res.revision;
    onChanged();
    return res.short;
  });
  // Framing by hand: the short's whole list of overrides saved at once, on the same revision chain.
  const saveFraming = useAction(async (shortId: number, overrides: FramingOverride[]) => {
    const res = await api<ShortEditResponse>('PUT', `/api/jobs/${job.jobId}/shorts/${shortId}/framing`, {
      body: { overrides, revision: revision.current },
    });
    revision.current = res.revision;
    onChanged();
    return res.short;
  });
  const saveRange = (s: Short, startTime: number, endTime: number) =>
    edit.run('PATCH', `/${s.id}`, { startTime: round1(startTime), endTime: round1(endTime) });
  // While a handle is dragged the mark follows the pointer; the edit is saved when it is let go.
  const [drag, setDrag] = useState<{ id: number; startTime: number; endTime: number } | null>(null);
  const timeline = useRef<HTMLDivElement>(null);
  const timeAtPointer = (e: PointerEvent) => {
    const box = timeline.current!.getBoundingClientRect();
    return Math.min(duration, Math.max(0, ((e.clientX - box.left) / box.width) * duration));
  };
  const onHandleDown = (s: Short, side: 'in' | 'out') => (e: PointerEvent) => {
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
  const onHandleKey = (s: Short, side: 'in' | 'out') => (e: KeyboardEvent) => {
    const step = e.key === 'ArrowLeft' ? -0.5 : e.key === 'ArrowRight' ? 0.5 : 0;
    if (!step) return;
    e.preventDefault();
    void (side === 'in' ? saveRange(s, s.startTime + step, s.endTime) : saveRange(s, s.startTime, s.endTime + step));
  };

  const select = (s: Short) => {
    setSelectedId(s.id);
    if (video.current) video.current.currentTime = s.startTime;
  };
  const seek = (t: number) => {
    if (video.current) video.current.currentTime = t;
  };

  const framing = useFraming({
    shortId: short?.id ?? -1,
    range: { start: short?.startTime ?? 0, end: short?.endTime ?? 0 },
    reframe,
    time,
    sourceSize,
    save: (overrides) => (short ? saveFraming.run(short.id, overrides) : Promise.resolve(undefined)),
    busy: saveFraming.busy,
    error: saveFraming.error,
  });
  // While the window is dragged, the player and the preview show it where it is being put.
  const pathCrop: Crop | null = short ? (reframe ? cropAt(reframe, time) : centredCrop(sourceSize.width, sourceSize.height)) : null;
  const crop: Crop | null = framing.dragBox ?? pathCrop;
  const layout = framing.dragBox ? 'single' : layoutAt(reframe, time);
  const boxes = crop ? ((layout === 'split' || layout === 'stack') && crop.panels?.length ? crop.panels : [crop]) : [];
  const inShort = short && time >= short.startTime - 0.05 && time <= short.endTime + 0.05;
  const shortWords = useMemo(
    () => (short ? words.filter((w) => w.start >= short.startTime - 0.01 && w.start < short.endTime) : []),
    [short, words],
  );
  // The render last started from the panel, and its status polled once here: the panel and the list
  // below both render from this one value, so they never show different numbers at the same moment.
  const [lastRender, setLastRender] = useState<{ shortId: number; renderId: string } | null>(null);
  const renderStatus = useLoad<{ renderId: string; status: RenderStatus } | null>(
    async () =>
      lastRender ? { renderId: lastRender.renderId, status: await api<RenderStatus>('GET', `/api/render/${lastRender.renderId}`) } : null,
    [lastRender?.renderId],
    { pollMs: 1000, poll: (l) => !!l && (l.status.type === 'queued' || l.status.type === 'progress') },
  );
  // Shown for the short it was started from, and only once its own status has come (never the last render's).
  const liveRender =
    lastRender && short && lastRender.shortId === short.id && renderStatus.data?.renderId === lastRender.renderId
      ? renderStatus.data
      : null;
  // The render dialog's jump-cut switches: the timeline shows what they remove and playback skips it.
  const [editing, setEditing] = useState<EditingOptions>({});
  // On the source's frames, as the render cuts (an older job has no frame rate: the plan assumes 30).
  const sourceFps = data.source?.fps ?? null;
  const sourceUrl = useSourceUrl(data.source?.url);
  const cutPlan = useMemo(
    () =>
      short && cutsAnything(editing)
        ? planJumpCuts({ start: short.startTime, end: short.endTime, words: shortWords, editing, fps: sourceFps })
        : null,
    [short, shortWords, editing, sourceFps],
  );
  useEffect(() => {
    const v = video.current;
    if (!v || v.paused || !cutPlan) return;
    const cut = cutPlan.cuts.find((c) => time >= c.start && time < c.end - 0.02);
    if (cut) v.currentTime = cut.end;
  }, [time, cutPlan]);

  return (
    <div class="job-layout">
      <div>
        <div class="player">
          {data.source ? (
            <video
              ref={video}
              src={sourceUrl.src}
              controls
              preload="auto"
              playsInline
              aria-label="Source video"
              onError={(e) => sourceUrl.onError(e.currentTarget)}
              onLoadedMetadata={(e) => {
                const v = e.target as HTMLVideoElement;
                sourceUrl.onLoadedMetadata(v);
                setDuration(v.duration || duration);
                setVideoSize({ width: v.videoWidth, height: v.videoHeight });
              }}
            />
          ) : (
            <p class="muted">The source video is not available.</p>
          )}
          {inShort
            ? boxes.map((box, i) => (
                <div
                  key={i}
                  class="crop-rect"
                  data-testid="crop-rect"
                  data-layout={layout}
                  title={reframe ? `Reframing path (${layout})` : 'Centre crop (no reframing data)'}
                  style={{
                    left: `${(box.x / sourceSize.width) * 100}%`,
                    top: `${(box.y / sourceSize.height) * 100}%`,
                    width: `${(box.width / sourceSize.width) * 100}%`,
                    height: `${(box.height / sourceSize.height) * 100}%`,
                    borderStyle: reframe ? 'solid' : 'dashed',
                    boxShadow: boxes.length > 1 ? 'none' : undefined,
                  }}
                />
              ))
            : null}
          {inShort && reframe ? <LayoutLabel layout={layout} /> : null}
          {inShort && pathCrop && layout === 'single' ? <WindowGrip framing={framing} box={pathCrop} sourceSize={sourceSize} /> : null}
        </div>
        <div class="timeline" ref={timeline} aria-label="Shorts on the source timeline">
          {shorts.map((s) => {
            const r = drag?.id === s.id ? drag : s;
            const at = (t: number) => `${(t / Math.max(duration, 0.001)) * 100}%`;
            return (
              <Fragment key={s.id}>
                <button
                  class={`mark ${s.id === short?.id ? 'selected' : ''}`}
                  aria-label={`Short ${s.id + 1}: ${s.title}, ${seconds(r.startTime)} to ${seconds(r.endTime)}`}
                  style={{ left: at(r.startTime), width: at(r.endTime - r.startTime) }}
                  onClick={() => select(s)}
                />
                {s.id === short?.id
                  ? (['in', 'out'] as const).map((side) => (
                      <div
                        key={`${s.id}-${side}`}
                        class={`handle ${side}`}
                        data-testid={`handle-${side}`}
                        role="slider"
                        tabIndex={0}
                        aria-label={
                          side === 'in' ? `Start of “${s.title}” (drag, or arrow keys)` : `End of “${s.title}” (drag, or arrow keys)`
                        }
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
          {reframe?.shots ? <ShotEdits shots={reframe.shots} duration={duration} /> : null}
          {cutPlan ? <JumpCuts plan={cutPlan} duration={duration} /> : null}
          <div class="head" style={{ left: `${(time / Math.max(duration, 0.001)) * 100}%` }} />
        </div>
        <p class="muted">
          Playhead {seconds(time)} / {seconds(duration)}
          {reframe ? ' · yellow frame: the reframing path' : ' · dashed frame: centre crop (this short has no reframing data)'}
        </p>
        {cutPlan && short ? (
          <p class="muted" data-testid="jump-cut-summary">
            Jump cuts: {cutPlan.cuts.length} removed ({cutPlan.removedSec.toFixed(1)} s, striped on the timeline); the short plays{' '}
            {editedDuration(cutPlan).toFixed(1)} s of {(short.endTime - short.startTime).toFixed(1)} s, and playback here skips what is
            removed.
          </p>
        ) : null}
        {short ? (
          <section class="panel" aria-labelledby="transcript-title">
            <h2 id="transcript-title">Transcript of “{short.title}”</h2>
            <TranscriptEditor
              jobId={job.jobId}
              words={words}
              revision={data.transcription?.revision ?? 0}
              from={short.startTime}
              to={short.endTime}
              activeTime={time}
              onSeek={seek}
              onChanged={onChanged}
            />
          </section>
        ) : null}
        {short ? <FramingPanel framing={framing} range={{ start: short.startTime, end: short.endTime }} /> : null}
        {short ? <Adjust job={job} short={short} playhead={time} duration={duration} edit={edit} onSelect={setSelectedId} /> : null}
      </div>
      <div>
        <section class="panel shorts-panel" aria-labelledby="shorts-title">
          <h2 id="shorts-title">Shorts ({shorts.length})</h2>
          <ul class="shorts-list">
            {shorts.map((s) => (
              <li key={s.id}>
                <button aria-pressed={s.id === short?.id} onClick={() => select(s)}>
                  <strong>{s.title}</strong>
                  <br />
                  <span class="muted">
                    {seconds(s.startTime)} – {seconds(s.endTime)} ({(s.endTime - s.startTime).toFixed(1)} s)
                    {readReframe(s.reframe, sourceSize.width, sourceSize.height) ? ' · reframed' : ''}
                  </span>
                  {s.reframe?.quality ? <ReframeQualityLine quality={s.reframe.quality} /> : null}
                </button>
                <CaptionFiles base={`/api/jobs/${job.jobId}/shorts/${s.id}`} label={`“${s.title}”`} query={jumpCutFlags(editing)} />
              </li>
            ))}
          </ul>
        </section>
        {short ? (
          <RenderPanel
            key={short.id}
            jobId={job.jobId}
            short={short}
            words={shortWords}
            source={video}
            time={time}
            crop={crop}
            layout={layout}
            reframed={!!reframe}
            onEditing={setEditing}
            cutPlan={cutPlan}
            onRendered={(renderId) => setLastRender({ shortId: short.id, renderId })}
            live={liveRender}
            liveError={lastRender?.shortId === short.id ? renderStatus.error : null}
          />
        ) : null}
        {short ? (
          <ShortRenders
            key={`renders-${short.id}`}
            jobId={job.jobId}
            shortId={short.id}
            title={short.title}
            refresh={lastRender?.renderId}
            live={liveRender}
          />
        ) : null}
      </div>
    </div>
  );
}

/** Download links for caption files (SRT, WebVTT, word-level JSON; docs/captions.md) and editor
 *  timelines (FCPXML, OTIO, EDL; docs/exports.md). A short's follow the render dialog's jump-cut
 *  switches; a render's are what it burned in. */
function CaptionFiles({ base, label, query = {} }: { base: string; label: string; query?: Record<string, string | boolean> }) {
  const formats = [
    ['srt', 'SRT'],
    ['vtt', 'VTT'],
    ['json', 'JSON'],
  ] as const;
  const timelines = [
    ['fcpxml', 'FCPXML'],
    ['otio', 'OTIO'],
    ['edl', 'EDL'],
  ] as const;
  const q = Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)]));
  return (
    <>
      <p class="caption-files" data-testid="caption-files">
        <span class="muted">Captions:</span>{' '}
        {formats.map(([ext, name]) => (
          <Fragment key={ext}>
            <a href={hrefOf(`${base}/captions.${ext}`, q)} download aria-label={`Download the captions of ${label} as ${name}`}>
              {name}
            </a>{' '}
          </Fragment>
        ))}
      </p>
      <p class="caption-files" data-testid="timeline-files">
        <span class="muted">Timeline:</span>{' '}
        {timelines.map(([ext, name]) => (
          <Fragment key={ext}>
            <a href={hrefOf(`${base}/timeline.${ext}`, q)} download aria-label={`Download the edit of ${label} as ${name}`}>
              {name}
            </a>{' '}
          </Fragment>
        ))}
      </p>
    </>
  );
}

/** The short's reframe.quality: how much of its speech the camera had a speaker on screen to follow. */
function ReframeQualityLine({ quality }: { quality: ReframeQuality }) {
  const { text, warn } = qualityLine(quality);
  return (
    <>
      <br />
      <span
        class={warn ? 'reframe-quality warn' : 'reframe-quality muted'}
        data-testid="reframe-quality"
        data-warn={warn ? 'true' : 'false'}
        title="Of the short's speech: the share whose speaker was found on screen, the share with a face inside the frame, and the span where speaker detection was least sure (its confidence, 0-1)"
      >
        {warn ? '⚠ ' : ''}
        {text}
      </span>
    </>
  );
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

/** The framing of the moment (single, split, fit, stack), so a change of layout is seen as playback crosses it. */
function LayoutLabel({ layout, announce = true }: { layout: ReframeLayout; announce?: boolean }) {
  // The player's label is announced; the preview's repeats it, so a screen reader hears each change once.
  return announce ? (
    <div class="layout-label" data-testid="layout-label" role="status" aria-label={`Layout: ${layout}`}>
      {layout}
    </div>
  ) : (
    <div class="layout-label" data-testid="preview-layout-label" aria-hidden="true">
      {layout}
    </div>
  );
}

const POSITION_WORDS = { top: 'top', center: 'middle', bottom: 'lower third' } as const;
const TITLE_SOURCE_WORDS = {
  transcript: '(from the transcript: follows its corrections)',
  model: '(written by the model: made again if a correction changes a word it uses)',
  user: '(your title)',
} as const;
const round1 = (t: number) => Math.round(t * 10) / 10;

/** Trim, rename, add and remove shorts in place; running the short again as a new job stays as an option. */
function Adjust({
  job,
  short,
  playhead,
  duration,
  edit,
  onSelect,
}: {
  job: JobView;
  short: Short;
  playhead: number;
  duration: number;
  edit: {
    run: (
      method: 'PATCH' | 'POST' | 'DELETE',
      path: string,
      body?: Record<string, unknown>,
    ) => Promise<ShortEditResponse['short'] | undefined>;
    busy: boolean;
    error: unknown;
  };
  onSelect: (id: number) => void;
}) {
  const [start, setStart] = useState(short.startTime);
  const [end, setEnd] = useState(short.endTime);
  const [title, setTitle] = useState(short.title);
  useEffect(() => {
    setStart(short.startTime);
    setEnd(short.endTime);
    setTitle(short.title);
  }, [short.id, short.startTime, short.endTime, short.title]);
  const at = round1(playhead);
  const add = async () => {
    // A new short from the playhead, 30 s long or to the end of the source.
    const added = await edit.run('POST', '', {
      title: `Short at ${seconds(at)}`,
      startTime: at,
      endTime: round1(Math.min(duration, at + 30)),
    });
    if (added) onSelect(added.id);
  };
  const rerun = useAction(async () => {
    const created = await api<CreatedJob>('POST', '/api/jobs', {
      body: {
        functionName: 'VideoShorts',
        name: `${job.title ?? 'Job'} – ${title}`,
        sourceJobId: job.jobId,
        options: { predefinedShorts: [{ title, start, end }] },
      },
    });
    go(`/jobs/${created.id}`);
  });
  const num = (set: (n: number) => void) => (e: Event) => set(Number((e.target as HTMLInputElement).value));
  return (
    <section class="panel" aria-labelledby="adjust-title">
      <h2 id="adjust-title">Edit this short</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          // The title only when it was changed: an unchanged one stays made from the transcript.
          void edit.run('PATCH', `/${short.id}`, { ...(title.trim() !== short.title ? { title } : {}), startTime: start, endTime: end });
        }}
      >
        <div class="row">
          <div class="grow">
            <label for="adj-title">
              Title{' '}
              <span class="muted" data-testid="title-source" data-source={short.titleSource}>
                {TITLE_SOURCE_WORDS[short.titleSource]}
              </span>
            </label>
            <input id="adj-title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} />
          </div>
          <div>
            <label for="adj-start">Start (s)</label>
            <input id="adj-start" type="number" step="0.1" min="0" value={start} onInput={num(setStart)} style={{ width: '100px' }} />
          </div>
          <div>
            <label for="adj-end">End (s)</label>
            <input id="adj-end" type="number" step="0.1" min="0" value={end} onInput={num(setEnd)} style={{ width: '100px' }} />
          </div>
        </div>
        <div class="row" style={{ marginTop: '8px' }}>
          <button type="button" disabled={edit.busy} onClick={() => void edit.run('PATCH', `/${short.id}`, { startTime: at })}>
            Start at playhead
          </button>
          <button type="button" disabled={edit.busy} onClick={() => void edit.run('PATCH', `/${short.id}`, { endTime: at })}>
            End at playhead
          </button>
          <button class="primary" type="submit" disabled={edit.busy}>
            Save short
          </button>
        </div>
        <div class="row" style={{ marginTop: '8px' }}>
          <button type="button" disabled={edit.busy} onClick={() => void add()}>
            Add short
          </button>
          <button type="button" class="danger" disabled={edit.busy} onClick={() => void edit.run('DELETE', `/${short.id}`)}>
            Remove short
          </button>
          <button
            type="button"
            disabled={rerun.busy}
            onClick={() => void rerun.run()}
            title="A new job (downloads, transcribes and charges again)"
          >
            Run again as a predefined short
          </button>
        </div>
      </form>
      {short.reframeStale ? (
        <p class="muted" data-testid="reframe-stale">
          This short reaches outside the range that was analysed for reframing: it renders with a centre crop.
        </p>
      ) : null}
      <ErrorBox error={edit.error ?? rerun.error} />
    </section>
  );
}

function RenderPanel({
  jobId,
  short,
  words,
  source,
  time,
  crop,
  layout,
  reframed,
  onEditing,
  cutPlan,
  onRendered,
  live,
  liveError,
}: {
  jobId: string;
  short: Short;
  words: Word[];
  source: { current: HTMLVideoElement | null };
  time: number;
  crop: Crop | null;
  layout: ReframeLayout;
  /** Whether the short has a reframing path (without one the preview is a plain centre crop, no layout to name). */
  reframed: boolean;
  onEditing: (editing: EditingOptions) => void;
  cutPlan: JumpCutPlan | null;
  /** A render was queued: the short's render list shows it. */
  onRendered: (renderId: string) => void;
  /** The status of the render this panel started, polled by the job screen (the render list shows the same). */
  live: { renderId: string; status: RenderStatus } | null;
  liveError: unknown;
}) {
  const presets = useLoad(() => api<BrandPreset[]>('GET', '/api/organizations/brandings'), []);
  const active = (presets.data ?? []).filter((p) => p.isActive);
  const [choice, setChoiceState] = useState<string>('');
  // The choice is remembered in the browser, so a reload keeps it (while the preset is still active).
  const setChoice = (next: string) => {
    setChoiceState(next);
    rememberChoice(next);
  };
  useEffect(() => {
    if (choice || !presets.data) return;
    const saved = rememberedChoice();
    const valid = (c: string | null) =>
      !!c && (c.startsWith('brand:') ? active.some((p) => `brand:${p.id}` === c) : CAPTION_PRESETS.some((n) => `style:${n}` === c));
    const def = active.find((p) => p.isDefault);
    setChoiceState(valid(saved) ? saved! : def ? `brand:${def.id}` : 'style:DEFAULT');
  }, [presets.data]);
  const brand = choice.startsWith('brand:') ? active.find((p) => p.id === choice.slice(6)) : undefined;

  // The output size: the plan's sizes (and the preset's own where the plan allows it), remembered per
  // preset; sent with every render, so the API's 720x1280 default never applies by accident.
  const plan = currentPlan();
  const sizes = useMemo(() => {
    const list = planSizes(plan);
    const own = brand?.size;
    if (own && PLAN_LIMITS[plan as Plan]?.renderSides && !list.some((s) => sizeKey(s) === sizeKey(own))) {
      const max = PLAN_LIMITS[plan as Plan].renderSides!;
      if (Math.min(own.width, own.height) <= max.short && Math.max(own.width, own.height) <= max.long)
        list.push({ width: own.width, height: own.height, name: own.name ?? '', label: `${sizeKey(own)} (the preset's own)` });
    }
    return list;
  }, [plan, brand?.id, brand?.size?.width, brand?.size?.height]);
  const [size, setSizeState] = useState<RenderSize>(BASE_SIZE);
  useEffect(() => {
    if (choice) setSizeState(initialSize(sizes, choice, brand?.size));
  }, [choice, sizes]);
  const setSize = (key: string) => {
    const next = sizes.find((s) => sizeKey(s) === key);
    if (!next) return;
    setSizeState(next);
    rememberSize(choice, next);
  };
  const styleName = brand ? brand.preset : choice.slice(6);
  const maxWords = brand?.options?.maxWordsInPage ?? 4;
  // The preview's captions leave out the filler words the render will cut.
  const shownWords = cutPlan?.fillerWords.length
    ? words.filter((w) => !cutPlan.fillerWords.some((f) => f.start === w.start && f.text === w.text))
    : words;
  // Paged as the render pages them: the short's own words only.
  const page = pageAt(
    shownWords.filter((w) => w.end > short.startTime && w.start < short.endTime),
    maxWords,
    time,
  );

  // The switches start as the chosen brand preset has them; a preset's own settings are kept when on.
  const presetEditing: EditingOptions = brand?.options?.editing ?? {};
  const [silences, setSilences] = useState(false);
  const [fillers, setFillers] = useState(false);
  useEffect(() => {
    const jumpCuts = jumpCutFlags(presetEditing);
    setSilences(jumpCuts.removeSilences);
    setFillers(jumpCuts.removeFillers);
  }, [choice]);
  const editing = editingFromSwitches(presetEditing, { silences, fillers });
  useEffect(() => onEditing(editing), [silences, fillers, choice]);

  // What the preview shows is what the request asks for: the caption band and the watermark's box.
  // Automatic: the render places the captions as the coordinator will (the short's band, away from a
  // face framed in the lower third, unless the style places them), and the preview does the same.
  const [captionPosition, setCaptionPosition] = useState<CaptionPosition | 'auto'>('auto');
  const [wmPlacement, setWmPlacement] = useState<WatermarkPlacement | null>(null);
  useEffect(() => setWmPlacement(null), [choice]);
  const presetWm = brand?.options?.waterMark;
  const wmFile = useLoad(
    () => (presetWm?.fileAppId ? api<FileView>('GET', `/api/uploads/files/${presetWm.fileAppId}`) : Promise.resolve(null)),
    [presetWm?.fileAppId],
  );
  const wmSrc = presetWm?.fileAppId ? wmFile.data?.url : presetWm?.waterMarkUrl;
  const placement: WatermarkPlacement = wmPlacement ?? {
    left: presetWm?.left,
    top: presetWm?.top,
    bottom: presetWm?.bottom,
    width: presetWm?.width,
  };
  const previewWatermark: PreviewWatermark | null =
    presetWm && wmSrc
      ? {
          src: wmSrc,
          placement,
          opacity: presetWm.opacity === undefined ? 1 : Number(presetWm.opacity),
          blendMode: presetWm.blendMode ?? 'normal',
        }
      : null;
  // The size the render will have: the one chosen, sent with the request.
  const frame = { width: size.width, height: size.height };
  const presetItems: StyleItem[] = brand?.options?.style ?? [];
  const requestItems: StyleItem[] =
    captionPosition === 'auto' ? presetItems : [...presetItems, { property: 'position', value: captionPosition }];
  // Automatic: the coordinator answers what the render asked with this preset and size would do
  // (its band depends on both); until it has, the short's stored band for the default style.
  const placementBody = {
    id: jobId,
    target: short.id,
    ...(brand ? { brandPresetId: brand.id } : { preset: styleName }),
    size: { width: size.width, height: size.height },
    options: { style: requestItems },
  };
  const placementKey = JSON.stringify([placementBody, short.startTime, short.endTime, short.reframe?.overrides ?? null]);
  const captionPlacement = useLoad(
    () =>
      captionPosition === 'auto'
        ? api<RenderCaptionPlacement>('POST', '/api/render/caption-position', { body: placementBody })
        : Promise.resolve(null),
    [placementKey, captionPosition],
  );
  const answered = captionPosition === 'auto' ? captionPlacement.data : null;
  const bandItems: StyleItem[] =
    captionPosition !== 'auto'
      ? requestItems
      : (answered?.style ??
        (short.captionBand !== 'bottom' ? (withCaptionBand(requestItems, styleName, short.captionBand) ?? requestItems) : requestItems));
  const previewStyle = styleFor(styleName, bandItems);
  const awayFromFace = answered ? answered.movedFromFace === true : bandItems !== requestItems;
  const autoLabel = `Automatic: ${POSITION_WORDS[previewStyle.position.anchor]}${awayFromFace ? ', away from the face' : ''}`;

  // The dragged box kept in the brand preset, so its next renders put the watermark there too.
  const saveWatermark = useAction(async () => {
    if (!brand || !presetWm || !wmPlacement) return;
    const { bottom: _, ...rest } = presetWm;
    await api<BrandPreset>('PUT', `/api/organizations/brandings/${brand.id}`, {
      body: { options: { ...brand.options, waterMark: { ...rest, ...wmPlacement } } },
    });
    presets.reload();
  });
  const start = useAction(async () => {
    const body: Record<string, unknown> = { id: jobId, target: short.id };
    if (brand) body.brandPresetId = brand.id;
    else body.preset = styleName;
    body.size = { width: size.width, height: size.height, ...(size.name ? { name: size.name } : {}) };
    // Sent whenever either switch is on or the preset had one on: an explicit off must win over the preset.
    const options: Record<string, unknown> = { style: requestItems };
    if (silences || fillers || cutsAnything(presetEditing)) options.editing = editing;
    // Top left in output pixels: `top` wins over a preset's `bottom`, which is left out.
    if (wmPlacement && presetWm) {
      const { bottom: _, ...rest } = presetWm;
      options.waterMark = { ...rest, ...wmPlacement };
    }
    body.options = options;
    const { renderId } = await api<CreatedRender>('POST', '/api/render', { body });
    onRendered(renderId);
  });
  const renderId = live?.renderId;
  const s = live?.status;

  return (
    <section class="panel render-panel" aria-labelledby="render-title">
      <h2 id="render-title">Render “{short.title}”</h2>
      <label for="render-style">Brand preset or caption style</label>
      <select id="render-style" value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
        {active.length ? (
          <optgroup label="Brand presets">
            {active.map((p) => (
              <option key={p.id} value={`brand:${p.id}`}>
                {p.name}
                {p.isDefault ? ' (default)' : ''}
              </option>
            ))}
          </optgroup>
        ) : null}
        <optgroup label="Built-in caption styles">
          {CAPTION_PRESETS.map((n) => (
            <option key={n} value={`style:${n}`}>
              {n}
            </option>
          ))}
        </optgroup>
      </select>
      <label for="render-size">Size</label>
      <select id="render-size" value={sizeKey(size)} onChange={(e) => setSize((e.target as HTMLSelectElement).value)}>
        {sizes.map((s) => (
          <option key={sizeKey(s)} value={sizeKey(s)}>
            {s.label}
          </option>
        ))}
      </select>
      {sizes.length === 1 ? (
        <p class="muted" data-testid="size-plan-note">
          The {plan || 'current'} plan renders 720x1280; Pro and Business render larger, landscape and square.
        </p>
      ) : null}
      <fieldset class="jump-cut-switches">
        <legend>Jump cuts</legend>
        <label>
          <input type="checkbox" checked={silences} onChange={(e) => setSilences((e.target as HTMLInputElement).checked)} /> Remove silences
        </label>
        <label>
          <input type="checkbox" checked={fillers} onChange={(e) => setFillers((e.target as HTMLInputElement).checked)} /> Remove filler
          words (um, uh, …)
        </label>
      </fieldset>
      <RenderPreview
        short={short}
        source={source}
        time={time}
        crop={crop}
        layout={layout}
        layoutLabel={reframed ? <LayoutLabel layout={layout} announce={false} /> : null}
        style={previewStyle}
        page={page}
        frame={frame}
        watermark={previewWatermark}
        onWatermark={setWmPlacement}
        captionPosition={captionPosition}
        autoLabel={autoLabel}
        onCaptionPosition={setCaptionPosition}
      />
      {brand && wmPlacement ? (
        <button type="button" onClick={() => void saveWatermark.run()} disabled={saveWatermark.busy}>
          Save watermark position to “{brand.name}”
        </button>
      ) : null}
      <ErrorBox error={saveWatermark.error} />
      {!presetWm ? <p class="muted">No watermark: choose a brand preset with one (Presets) to place it here.</p> : null}
      <p class="muted">Play the source (or select the short) to preview; captions follow the spoken words.</p>
      <button
        class="primary"
        onClick={() => void start.run()}
        disabled={!choice || start.busy || (!!s && (s.type === 'queued' || s.type === 'progress'))}
      >
        Render
      </button>
      <ErrorBox error={start.error ?? liveError} />
      {s ? (
        <div data-testid="render-status" style={{ marginTop: '10px' }}>
          {s.type === 'queued' ? <p>Queued: position {s.queuePosition} in the render queue</p> : null}
          {s.type === 'progress' ? (
            <>
              <p>Rendering: {Math.round((s.progress ?? 0) * 100)}%</p>
              <ProgressBar value={(s.progress ?? 0) * 100} label="Render progress" />
            </>
          ) : null}
          <CaptionPositionNote status={s} />
          {(s.type === 'queued' || s.type === 'progress') && s.stage ? (
            <p class="stage" role="status">
              {s.stage}
            </p>
          ) : null}
          {s.type === 'error' ? (
            <div class="error" role="alert">
              {s.message}
              {s.code ? ` (${s.code})` : ''}
            </div>
          ) : null}
          {s.type === 'done' ? (
            <>
              <p class="notice" role="status">
                Rendered ({((s.size ?? 0) / 1e6).toFixed(2)} MB{s.length ? `, ${s.length.toFixed(1)} s` : ''})
              </p>
              <video
                src={s.url}
                preload="metadata"
                controls
                playsInline
                aria-label="Rendered short"
                data-testid="render-video"
                style={{ width: '100%', maxWidth: '270px', display: 'block', margin: '0 auto' }}
              />
              <p>
                <a class="button" href={s.url} download={`${short.title.replace(/[^\w.-]+/g, '_')}.mp4`}>
                  Download MP4
                </a>
              </p>
              <CaptionFiles base={`/api/render/${renderId}`} label="this render" />
              {s.fileId ? <PostForm fileId={s.fileId} defaultCaption={short.title} /> : null}
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
