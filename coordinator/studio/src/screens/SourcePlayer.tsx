import { useRef, useState } from 'preact/hooks';
import type { RefObject } from 'preact';
import type { ReframeLayout } from '@shorts/common/reframe/types';
import type { Crop } from '../reframe.js';
import { WindowGrip, type Framing } from './Framing.js';
import { LayoutLabel } from './LayoutLabel.js';

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

/** The source video with the selected short's crop window over it (its reframing path, or a centre crop), the layout of the moment and the window's grip. */
export function SourcePlayer({
  video,
  url,
  onMetadata,
  inShort,
  boxes,
  layout,
  reframed,
  grip,
  framing,
  sourceSize,
}: {
  video: RefObject<HTMLVideoElement | null>;
  /** The source video's signed URL; undefined when the job has no source video. */
  url: string | undefined;
  onMetadata: (v: HTMLVideoElement) => void;
  /** Whether the playhead is inside the selected short (the overlays show only then). */
  inShort: boolean;
  boxes: Crop[];
  layout: ReframeLayout;
  reframed: boolean;
  /** The window the grip moves (single layout only), or null. */
  grip: Crop | null;
  framing: Framing;
  sourceSize: { width: number; height: number };
}) {
  const sourceUrl = useSourceUrl(url);
  return (
    <div class="player">
      {url !== undefined ? (
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
            onMetadata(v);
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
              title={reframed ? `Reframing path (${layout})` : 'Centre crop (no reframing data)'}
              style={{
                left: `${(box.x / sourceSize.width) * 100}%`,
                top: `${(box.y / sourceSize.height) * 100}%`,
                width: `${(box.width / sourceSize.width) * 100}%`,
                height: `${(box.height / sourceSize.height) * 100}%`,
                borderStyle: reframed ? 'solid' : 'dashed',
                boxShadow: boxes.length > 1 ? 'none' : undefined,
              }}
            />
          ))
        : null}
      {inShort && reframed ? <LayoutLabel layout={layout} /> : null}
      {inShort && grip ? <WindowGrip framing={framing} box={grip} sourceSize={sourceSize} /> : null}
    </div>
  );
}
