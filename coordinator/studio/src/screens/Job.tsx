import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { planJumpCuts } from '@shorts/common/render/jump-cuts';
import { cutsAnything, type EditingOptions } from '@shorts/common/options/editing-rules';
import type { BearerJob, BearerJobShort } from '@shorts/common/api/jobs';
import type { RenderStatus } from '@shorts/common/api/renders';
import { api, stageOf } from '../api.js';
import type { Word } from '../captions.js';
import { centredCrop, cropAt, layoutAt, readReframe, type Crop, type Reframe } from '../reframe.js';
import { ErrorBox, ProgressBar, useLoad } from '../ui.js';
import { AdjustShort } from './AdjustShort.js';
import { FramingPanel, useFraming } from './Framing.js';
import { RenderPanel } from './RenderPanel.js';
import { ShortRenders } from './ShortRenders.js';
import { ShortsList } from './ShortsList.js';
import { ShortsTimeline, TimelineNotes } from './ShortsTimeline.js';
import { SourcePlayer } from './SourcePlayer.js';
import { TranscriptEditor } from './TranscriptEditor.js';
import { round1, useShortEdits } from './short-edits.js';

/** A short as the job's bearer-token form gives it (GET /api/jobs/:jobId). */
type Short = BearerJobShort;
type JobView = BearerJob;

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
  const { short, setSelectedId, select, seek } = useSelectedShort(shorts, shortParam, video);
  const [videoSize, setVideoSize] = useState<{ width: number; height: number } | null>(null);
  const sourceSize = { width: data.source?.width ?? videoSize?.width ?? 16, height: data.source?.height ?? videoSize?.height ?? 9 };
  const reframe = short ? readReframe(short.reframe, sourceSize.width, sourceSize.height) : null;
  const { edit, saveFraming } = useShortEdits(job.jobId, data.shortsRevision, onChanged);
  const saveRange = (s: Short, startTime: number, endTime: number) =>
    edit.run('PATCH', `/${s.id}`, { startTime: round1(startTime), endTime: round1(endTime) });

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
  const { pathCrop, crop, layout, boxes } = cropOfMoment(short, reframe, framing.dragBox, time, sourceSize);
  const inShort = !!short && time >= short.startTime - 0.05 && time <= short.endTime + 0.05;
  const shortWords = useMemo(
    () => (short ? words.filter((w) => w.start >= short.startTime - 0.01 && w.start < short.endTime) : []),
    [short, words],
  );
  const { lastRender, setLastRender, renderStatus, liveRender } = useLastRender(short);
  // The render dialog's jump-cut switches: the timeline shows what they remove and playback skips it.
  const [editing, setEditing] = useState<EditingOptions>({});
  const cutPlan = useJumpCutPlayback(video, short, shortWords, editing, data.source?.fps ?? null);

  return (
    <div class="job-layout">
      <div>
        <SourcePlayer
          video={video}
          url={data.source?.url}
          onMetadata={(v) => {
            setDuration(v.duration || duration);
            setVideoSize({ width: v.videoWidth, height: v.videoHeight });
          }}
          inShort={inShort}
          boxes={boxes}
          layout={layout}
          reframed={!!reframe}
          grip={pathCrop && layout === 'single' ? pathCrop : null}
          framing={framing}
          sourceSize={sourceSize}
        />
        <ShortsTimeline
          shorts={shorts}
          selected={short}
          duration={duration}
          time={time}
          shots={reframe?.shots}
          cutPlan={cutPlan}
          onSelect={select}
          saveRange={saveRange}
        />
        <TimelineNotes time={time} duration={duration} reframed={!!reframe} cutPlan={cutPlan} selected={short} />
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
        {short ? <AdjustShort job={job} short={short} playhead={time} duration={duration} edit={edit} onSelect={setSelectedId} /> : null}
      </div>
      <div>
        <ShortsList jobId={job.jobId} shorts={shorts} selected={short} sourceSize={sourceSize} editing={editing} onSelect={select} />
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

/** The short selected (from the address at first, else the first); selecting one moves the player to its start. */
function useSelectedShort(shorts: Short[], shortParam: string | null, video: { current: HTMLVideoElement | null }) {
  const [selectedId, setSelectedId] = useState<number>(shortParam !== null ? Number(shortParam) : (shorts[0]?.id ?? 0));
  const short = shorts.find((s) => s.id === selectedId) ?? shorts[0];
  const select = (s: Short) => {
    setSelectedId(s.id);
    if (video.current) video.current.currentTime = s.startTime;
  };
  const seek = (t: number) => {
    if (video.current) video.current.currentTime = t;
  };
  return { short, setSelectedId, select, seek };
}

/** The selected short's window at the playhead: its reframing path's (or a centre crop), or while the window is dragged, where it is being put. */
function cropOfMoment(
  short: Short | undefined,
  reframe: Reframe | null,
  dragBox: Crop | null,
  time: number,
  sourceSize: { width: number; height: number },
) {
  const pathCrop: Crop | null = short ? (reframe ? cropAt(reframe, time) : centredCrop(sourceSize.width, sourceSize.height)) : null;
  const crop: Crop | null = dragBox ?? pathCrop;
  const layout = dragBox ? 'single' : layoutAt(reframe, time);
  const boxes = crop ? ((layout === 'split' || layout === 'stack') && crop.panels?.length ? crop.panels : [crop]) : [];
  return { pathCrop, crop, layout, boxes };
}

/**
 * The render last started from the panel, and its status polled once here: the panel and the list
 * below both render from this one value, so they never show different numbers at the same moment.
 */
function useLastRender(short: Short | undefined) {
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
  return { lastRender, setLastRender, renderStatus, liveRender };
}

/**
 * What the render dialog's jump-cut switches remove from the short, and the player skipping it while
 * it plays: on the source's frames, as the render cuts (an older job has no frame rate: the plan assumes 30).
 */
function useJumpCutPlayback(
  video: { current: HTMLVideoElement | null },
  short: Short | undefined,
  shortWords: Word[],
  editing: EditingOptions,
  sourceFps: number | null,
) {
  const cutPlan = useMemo(
    () =>
      short && cutsAnything(editing)
        ? planJumpCuts({ start: short.startTime, end: short.endTime, words: shortWords, editing, fps: sourceFps })
        : null,
    [short, shortWords, editing, sourceFps],
  );
  // Checked on every animation frame against the video's own clock, not on the page's next render:
  // a busy page re-renders late, and the removed sound would be heard until it did.
  useEffect(() => {
    if (!cutPlan) return;
    let raf = 0;
    const skip = () => {
      const v = video.current;
      if (v && !v.paused) {
        const now = v.currentTime;
        const cut = cutPlan.cuts.find((c) => now >= c.start && now < c.end - 0.02);
        if (cut) v.currentTime = cut.end;
      }
      raf = requestAnimationFrame(skip);
    };
    raf = requestAnimationFrame(skip);
    return () => cancelAnimationFrame(raf);
  }, [cutPlan]);
  return cutPlan;
}
