import type { BearerJobShort } from '@shorts/common/api/jobs';
import { jumpCutFlags, type EditingOptions } from '@shorts/common/options/editing-rules';
import type { ReframeQuality } from '@shorts/common/reframe/types';
import { seconds } from '../api.js';
import { qualityLine, readReframe } from '../reframe.js';
import { CaptionFiles } from './CaptionFiles.js';

type Short = BearerJobShort;

/** The job's shorts to choose from, each with its caption and timeline files (as the render dialog's jump-cut switches cut them). */
export function ShortsList({
  jobId,
  shorts,
  selected,
  sourceSize,
  editing,
  onSelect,
}: {
  jobId: string;
  shorts: Short[];
  selected: Short | undefined;
  sourceSize: { width: number; height: number };
  editing: EditingOptions;
  onSelect: (s: Short) => void;
}) {
  return (
    <section class="panel shorts-panel" aria-labelledby="shorts-title">
      <h2 id="shorts-title">Shorts ({shorts.length})</h2>
      <ul class="shorts-list">
        {shorts.map((s) => (
          <li key={s.id}>
            <button aria-pressed={s.id === selected?.id} onClick={() => onSelect(s)}>
              <strong>{s.title}</strong>
              <br />
              <span class="muted">
                {seconds(s.startTime)} – {seconds(s.endTime)} ({(s.endTime - s.startTime).toFixed(1)} s)
                {readReframe(s.reframe, sourceSize.width, sourceSize.height) ? ' · reframed' : ''}
              </span>
              {s.reframe?.quality ? <ReframeQualityLine quality={s.reframe.quality} /> : null}
            </button>
            <CaptionFiles base={`/api/jobs/${jobId}/shorts/${s.id}`} label={`“${s.title}”`} query={jumpCutFlags(editing)} />
          </li>
        ))}
      </ul>
    </section>
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
