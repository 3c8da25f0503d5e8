import { Fragment } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { CAPTION_PRESETS } from '../../../../common/src/render/presets.js';
import { api, seconds, stageOf } from '../api.js';
import { captionCss, pageAt, styleFor, type Word } from '../captions.js';
import type { ReframeLayout, SourceShot } from '../../../../common/src/reframe/types.js';
import { centredCrop, cropAt, drawCrop, layoutAt, readReframe, type Crop } from '../reframe.js';
import { go } from '../router.js';
import { ErrorBox, ProgressBar, useAction, useLoad } from '../ui.js';
import { PostForm } from './Social.js';

export interface Short {
  id: number; title: string; reason?: string; startTime: number; endTime: number; text: string;
  cropFileUrl: string | null; reframe?: unknown;
}
interface JobView {
  jobId: string; stage?: string; title: string | null; status: string; progress: number; createdAt: string; message?: string; cost?: number;
  data?: { transcription: { words: Word[]; durationSec?: number } | null; shorts: Short[]; source?: { url: string; width: number | null; height: number | null } };
}
export interface Preset { id: string; name: string; preset: string | null; options: Record<string, any>; isActive: boolean; isDefault: boolean }

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

export function JobPage({ jobId, shortParam }: { jobId: string; shortParam: string | null }) {
  const job = useLoad(() => api<JobView>('GET', `/api/jobs/${jobId}`), [jobId], { pollMs: 2000, poll: (j) => j.status === 'PROCESSING' });
  const j = job.data;
  return (
    <>
      <p><a href="#/jobs">← All jobs</a></p>
      <ErrorBox error={job.error} />
      {j ? (
        <>
          <h1>{j.title || 'Untitled job'}</h1>
          <p>
            <span class={`status ${j.status}`}>{j.status}</span>{' '}
            <span class="stage">{stageOf(j)}</span>
            {j.cost != null ? <span class="muted"> · cost {j.cost} credits</span> : null}
          </p>
          {j.status === 'PROCESSING' ? <div style={{ maxWidth: '420px' }}><ProgressBar value={j.progress} label="Job progress" /> <span class="muted">{j.progress}%</span></div> : null}
          {j.status === 'FAILED' ? <div class="error" role="alert">{j.message ?? 'The job failed'}</div> : null}
          {j.status === 'COMPLETED' && j.data ? <Review job={j} shortParam={shortParam} /> : null}
        </>
      ) : null}
    </>
  );
}

function Review({ job, shortParam }: { job: JobView; shortParam: string | null }) {
  const data = job.data!;
  const shorts = data.shorts;
  const words = data.transcription?.words ?? [];
  const video = useRef<HTMLVideoElement>(null);
  const time = usePlayhead(video);
  const [duration, setDuration] = useState(data.transcription?.durationSec ?? 0);
  const [selectedId, setSelectedId] = useState<number>(shortParam !== null ? Number(shortParam) : shorts[0]?.id ?? 0);
  const short = shorts.find((s) => s.id === selectedId) ?? shorts[0];
  const [videoSize, setVideoSize] = useState<{ width: number; height: number } | null>(null);
  const sourceSize = { width: data.source?.width ?? videoSize?.width ?? 16, height: data.source?.height ?? videoSize?.height ?? 9 };
  const reframe = short ? readReframe(short.reframe, sourceSize.width, sourceSize.height) : null;

  const select = (s: Short) => {
    setSelectedId(s.id);
    if (video.current) video.current.currentTime = s.startTime;
  };
  const seek = (t: number) => { if (video.current) video.current.currentTime = t; };

  const crop: Crop | null = short ? (reframe ? cropAt(reframe, time) : centredCrop(sourceSize.width, sourceSize.height)) : null;
  const layout = layoutAt(reframe, time);
  const boxes = crop ? ((layout === 'split' || layout === 'stack') && crop.panels?.length ? crop.panels : [crop]) : [];
  const inShort = short && time >= short.startTime - 0.05 && time <= short.endTime + 0.05;
  const shortWords = useMemo(() => (short ? words.filter((w) => w.start >= short.startTime - 0.01 && w.start < short.endTime) : []), [short, words]);
  const activeIndex = shortWords.findIndex((w, i) => time >= w.start && (i === shortWords.length - 1 ? time < w.end + 0.3 : time < shortWords[i + 1]!.start));

  return (
    <div class="job-layout">
      <div>
        <div class="player">
          {data.source ? (
            <video ref={video} src={data.source.url} controls preload="auto" playsInline aria-label="Source video"
              onLoadedMetadata={(e) => {
                const v = e.target as HTMLVideoElement;
                setDuration(v.duration || duration);
                setVideoSize({ width: v.videoWidth, height: v.videoHeight });
              }} />
          ) : <p class="muted">The source video is not available.</p>}
          {inShort ? boxes.map((box, i) => (
            <div key={i} class="crop-rect" data-testid="crop-rect" data-layout={layout} title={reframe ? `Reframing path (${layout})` : 'Centre crop (no reframing data)'}
              style={{
                left: `${(box.x / sourceSize.width) * 100}%`, top: `${(box.y / sourceSize.height) * 100}%`,
                width: `${(box.width / sourceSize.width) * 100}%`, height: `${(box.height / sourceSize.height) * 100}%`,
                borderStyle: reframe ? 'solid' : 'dashed', boxShadow: boxes.length > 1 ? 'none' : undefined,
              }} />
          )) : null}
          {inShort && reframe ? <LayoutLabel layout={layout} /> : null}
        </div>
        <div class="timeline" aria-label="Shorts on the source timeline">
          {shorts.map((s) => (
            <button key={s.id} class={`mark ${s.id === short?.id ? 'selected' : ''}`} aria-label={`Short ${s.id + 1}: ${s.title}, ${seconds(s.startTime)} to ${seconds(s.endTime)}`}
              style={{ left: `${(s.startTime / Math.max(duration, 0.001)) * 100}%`, width: `${((s.endTime - s.startTime) / Math.max(duration, 0.001)) * 100}%` }}
              onClick={() => select(s)} />
          ))}
          {reframe?.shots ? <ShotEdits shots={reframe.shots} duration={duration} /> : null}
          <div class="head" style={{ left: `${(time / Math.max(duration, 0.001)) * 100}%` }} />
        </div>
        <p class="muted">Playhead {seconds(time)} / {seconds(duration)}{reframe ? ' · yellow frame: the reframing path' : ' · dashed frame: centre crop (this short has no reframing data)'}</p>
        {short ? (
          <section class="panel" aria-labelledby="transcript-title">
            <h2 id="transcript-title">Transcript of “{short.title}”</h2>
            <div class="transcript" data-testid="transcript" role="group" aria-label="Transcript; the spoken word is highlighted, a word plays from there">
              {shortWords.length ? shortWords.map((w, i) => (
                <Fragment key={i}>
                  <button type="button" class={`w ${i === activeIndex ? 'active' : i < activeIndex ? 'past' : ''}`} aria-current={i === activeIndex ? 'true' : undefined}
                    title={`Play from ${seconds(w.start)}`} onClick={() => seek(w.start)}>{w.text}</button>{' '}
                </Fragment>
              )) : <span class="muted">{short.text || 'No words in this short.'}</span>}
            </div>
          </section>
        ) : null}
        {short ? <Adjust job={job} short={short} playhead={time} /> : null}
      </div>
      <div>
        <section class="panel" aria-labelledby="shorts-title">
          <h2 id="shorts-title">Shorts ({shorts.length})</h2>
          <ul class="shorts-list">
            {shorts.map((s) => (
              <li key={s.id}>
                <button aria-pressed={s.id === short?.id} onClick={() => select(s)}>
                  <strong>{s.title}</strong><br />
                  <span class="muted">{seconds(s.startTime)} – {seconds(s.endTime)} ({(s.endTime - s.startTime).toFixed(1)} s){readReframe(s.reframe, sourceSize.width, sourceSize.height) ? ' · reframed' : ''}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
        {short ? <RenderPanel key={short.id} jobId={job.jobId} short={short} words={shortWords} source={video} time={time} crop={crop} layout={layout} reframed={!!reframe} /> : null}
      </div>
    </div>
  );
}

/** The source's edits inside the selected short: a thin mark on each hard cut, a band over each dissolve's blend. */
function ShotEdits({ shots, duration }: { shots: SourceShot[]; duration: number }) {
  const at = (t: number) => `${(t / Math.max(duration, 0.001)) * 100}%`;
  return (
    <>
      {shots.map((shot, i) => {
        if (shot.transition === 'cut') {
          return <div key={i} class="shot-cut" data-testid="shot-cut" title={`Cut at ${seconds(shot.start)}`} style={{ left: at(shot.start) }} />;
        }
        if (shot.transition === 'dissolve') {
          const end = Math.max(shot.start, shot.transitionEnd ?? shot.start);
          return <div key={i} class="shot-dissolve" data-testid="shot-dissolve" title={`Dissolve ${seconds(shot.start)} to ${seconds(end)}`}
            style={{ left: at(shot.start), width: at(end - shot.start) }} />;
        }
        return null;
      })}
    </>
  );
}

/** The framing of the moment (single, split, fit, stack), so a change of layout is seen as playback crosses it. */
function LayoutLabel({ layout, announce = true }: { layout: ReframeLayout; announce?: boolean }) {
  // The player's label is announced; the preview's repeats it, so a screen reader hears each change once.
  return announce
    ? <div class="layout-label" data-testid="layout-label" role="status" aria-label={`Layout: ${layout}`}>{layout}</div>
    : <div class="layout-label" data-testid="preview-layout-label" aria-hidden="true">{layout}</div>;
}

function Adjust({ job, short, playhead }: { job: JobView; short: Short; playhead: number }) {
  const [start, setStart] = useState(short.startTime);
  const [end, setEnd] = useState(short.endTime);
  const [title, setTitle] = useState(short.title);
  useEffect(() => { setStart(short.startTime); setEnd(short.endTime); setTitle(short.title); }, [short.id]);
  const rerun = useAction(async () => {
    const created = await api<{ id: string }>('POST', '/api/jobs', {
      body: { functionName: 'VideoShorts', name: `${job.title ?? 'Job'} – ${title}`, sourceJobId: job.jobId, options: { predefinedShorts: [{ title, start, end }] } },
    });
    go(`/jobs/${created.id}`);
  });
  const num = (set: (n: number) => void) => (e: Event) => set(Number((e.target as HTMLInputElement).value));
  return (
    <section class="panel" aria-labelledby="adjust-title">
      <h2 id="adjust-title">Adjust and run again</h2>
      <form onSubmit={(e) => { e.preventDefault(); rerun.run(); }}>
        <div class="row">
          <div class="grow"><label for="adj-title">Title</label><input id="adj-title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} /></div>
          <div><label for="adj-start">Start (s)</label><input id="adj-start" type="number" step="0.1" min="0" value={start} onInput={num(setStart)} style={{ width: '100px' }} /></div>
          <div><label for="adj-end">End (s)</label><input id="adj-end" type="number" step="0.1" min="0" value={end} onInput={num(setEnd)} style={{ width: '100px' }} /></div>
        </div>
        <div class="row" style={{ marginTop: '8px' }}>
          <button type="button" onClick={() => setStart(Math.round(playhead * 10) / 10)}>Start at playhead</button>
          <button type="button" onClick={() => setEnd(Math.round(playhead * 10) / 10)}>End at playhead</button>
          <button class="primary" type="submit" disabled={rerun.busy}>Run again as a predefined short</button>
        </div>
      </form>
      <ErrorBox error={rerun.error} />
    </section>
  );
}

interface RenderStatus { type: string; status?: string; stage?: string; queuePosition?: number; progress?: number; url?: string; size?: number; message?: string; code?: string; fileId?: string }

function RenderPanel({ jobId, short, words, source, time, crop, layout, reframed }: {
  jobId: string; short: Short; words: Word[]; source: { current: HTMLVideoElement | null }; time: number; crop: Crop | null; layout: ReframeLayout;
  /** Whether the short has a reframing path (without one the preview is a plain centre crop, no layout to name). */
  reframed: boolean;
}) {
  const presets = useLoad(() => api<Preset[]>('GET', '/api/organizations/brandings'), []);
  const active = (presets.data ?? []).filter((p) => p.isActive);
  const [choice, setChoice] = useState<string>('');
  useEffect(() => {
    if (choice || !presets.data) return;
    const def = active.find((p) => p.isDefault);
    setChoice(def ? `brand:${def.id}` : 'style:DEFAULT');
  }, [presets.data]);
  const brand = choice.startsWith('brand:') ? active.find((p) => p.id === choice.slice(6)) : undefined;
  const styleName = brand ? brand.preset : choice.slice(6);
  const style = styleFor(styleName, brand?.options?.style ?? brand?.options?.styles);
  const maxWords = brand?.options?.maxWordsInPage ?? 4;
  const page = pageAt(words, maxWords, time);

  // The preview: the cropped source frame, drawn from the player whenever it shows a new frame
  // (a seek lands after the playhead moved, so the frame events matter, not only the clock).
  const canvas = useRef<HTMLCanvasElement>(null);
  const cropRef = useRef({ crop, layout });
  cropRef.current = { crop, layout };
  const draw = () => {
    const c = canvas.current;
    const v = source.current;
    const { crop: box, layout: how } = cropRef.current;
    const ctx = c?.getContext('2d');
    if (!c || !v || !box || !ctx || v.readyState < 2) return;
    drawCrop(ctx, v, box, how, c.width, c.height);
  };
  useEffect(draw, [time, crop?.x, crop?.y, crop?.width, crop?.height, layout]);
  useEffect(() => {
    const v = source.current;
    if (!v) return;
    const events = ['seeked', 'loadeddata', 'timeupdate'];
    for (const e of events) v.addEventListener(e, draw);
    return () => { for (const e of events) v.removeEventListener(e, draw); };
  }, [source.current]);

  const [renderId, setRenderId] = useState<string | null>(null);
  const start = useAction(async () => {
    const body: Record<string, unknown> = { id: jobId, target: short.id };
    if (brand) body.brandPresetId = brand.id;
    else body.preset = styleName;
    const { renderId } = await api<{ renderId: string }>('POST', '/api/render', { body });
    setRenderId(renderId);
  });
  const status = useLoad<RenderStatus | null>(
    () => (renderId ? api<RenderStatus>('GET', `/api/render/${renderId}`) : Promise.resolve(null)),
    [renderId],
    { pollMs: 1000, poll: (s) => !!s && (s.type === 'queued' || s.type === 'progress') },
  );
  const s = status.data;
  const frameWidth = 240;

  return (
    <section class="panel" aria-labelledby="render-title">
      <h2 id="render-title">Render “{short.title}”</h2>
      <label for="render-style">Brand preset or caption style</label>
      <select id="render-style" value={choice} onChange={(e) => setChoice((e.target as HTMLSelectElement).value)}>
        {active.length ? <optgroup label="Brand presets">{active.map((p) => <option key={p.id} value={`brand:${p.id}`}>{p.name}{p.isDefault ? ' (default)' : ''}</option>)}</optgroup> : null}
        <optgroup label="Built-in caption styles">{CAPTION_PRESETS.map((n) => <option key={n} value={`style:${n}`}>{n}</option>)}</optgroup>
      </select>
      <h3>Live preview</h3>
      <div class="preview" data-testid="caption-preview" aria-label="Preview of the captions on the cropped frame">
        <canvas ref={canvas} width={270} height={480} />
        {reframed ? <LayoutLabel layout={layout} announce={false} /> : null}
        {page ? (
          <div class="caption" style={captionCss(style, frameWidth)}>
            {page.words.map((w, i) => (
              <span key={i} class={i === page.active ? 'active' : undefined}
                style={i === page.active ? { color: `rgba(${style.active.color.r},${style.active.color.g},${style.active.color.b},${style.active.color.a})`, fontSize: `${style.active.scale}em` } : undefined}>{w.text}</span>
            ))}
          </div>
        ) : null}
      </div>
      <p class="muted">Play the source (or select the short) to preview; captions follow the spoken words.</p>
      <button class="primary" onClick={() => start.run()} disabled={start.busy || (!!s && (s.type === 'queued' || s.type === 'progress'))}>Render</button>
      <ErrorBox error={start.error ?? status.error} />
      {s ? (
        <div data-testid="render-status" style={{ marginTop: '10px' }}>
          {s.type === 'queued' ? <p>Queued: position {s.queuePosition} in the render queue</p> : null}
          {s.type === 'progress' ? <><p>Rendering: {Math.round((s.progress ?? 0) * 100)}%</p><ProgressBar value={(s.progress ?? 0) * 100} label="Render progress" /></> : null}
          {s.stage && (s.type === 'queued' || s.type === 'progress') ? <p class="stage" role="status">{s.stage}</p> : null}
          {s.type === 'error' ? <div class="error" role="alert">{s.message}{s.code ? ` (${s.code})` : ''}</div> : null}
          {s.type === 'done' ? (
            <>
              <p class="notice" role="status">Rendered ({((s.size ?? 0) / 1e6).toFixed(2)} MB)</p>
              <video src={s.url} controls playsInline aria-label="Rendered short" data-testid="render-video" style={{ width: '100%', maxWidth: '270px', display: 'block', margin: '0 auto' }} />
              <p><a class="button" href={s.url} download={`${short.title.replace(/[^\w.-]+/g, '_')}.mp4`}>Download MP4</a></p>
              {s.fileId ? <PostForm fileId={s.fileId} defaultCaption={short.title} /> : null}
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
