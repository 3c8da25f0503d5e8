import { CAPTION_PRESETS } from '@shorts/common/render/presets';
import type { JumpCutPlan } from '@shorts/common/render/jump-cuts';
import type { EditingOptions } from '@shorts/common/options/editing-rules';
import type { BearerJobShort } from '@shorts/common/api/jobs';
import type { BrandPreset } from '@shorts/common/api/brandings';
import type { CreatedRender, RenderStatus } from '@shorts/common/api/renders';
import type { ReframeLayout } from '@shorts/common/reframe/types';
import { api } from '../api.js';
import { sizeKey, type RenderSize } from '../sizes.js';
import { pageAt, type Word } from '../captions.js';
import type { Crop } from '../reframe.js';
import { ErrorBox, useAction } from '../ui.js';
import { LayoutLabel } from './LayoutLabel.js';
import { RenderPreview } from './RenderPreview.js';
import { RenderStatusView } from './RenderStatusView.js';
import { useCaptionPlacement, useJumpCutSwitches, usePreviewWatermark, useRenderChoice, useRenderSize } from './render-options.js';

interface RenderPanelProps {
  jobId: string;
  short: BearerJobShort;
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
}

/** The render dialog of the selected short: preset or style, size, jump cuts, the live preview, and the render it starts. */
export function RenderPanel({
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
}: RenderPanelProps) {
  const { presets, active, choice, setChoice, brand } = useRenderChoice();
  const { plan, sizes, size, setSize } = useRenderSize(choice, brand);
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
  const switches = useJumpCutSwitches(choice, brand, onEditing);
  const { presetWm, wmPlacement, setWmPlacement, previewWatermark } = usePreviewWatermark(choice, brand);
  const caption = useCaptionPlacement({ jobId, short, brand, styleName, size });
  // The size the render will have: the one chosen, sent with the request.
  const frame = { width: size.width, height: size.height };

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
    const options: Record<string, unknown> = { style: caption.requestItems };
    if (switches.sendEditing) options.editing = switches.editing;
    // Top left in output pixels: `top` wins over a preset's `bottom`, which is left out.
    if (wmPlacement && presetWm) {
      const { bottom: _, ...rest } = presetWm;
      options.waterMark = { ...rest, ...wmPlacement };
    }
    body.options = options;
    const { renderId } = await api<CreatedRender>('POST', '/api/render', { body });
    onRendered(renderId);
  });
  const s = live?.status;

  return (
    <section class="panel render-panel" aria-labelledby="render-title">
      <h2 id="render-title">Render “{short.title}”</h2>
      <RenderChoiceFields active={active} choice={choice} onChoice={setChoice} plan={plan} sizes={sizes} size={size} onSize={setSize} />
      <fieldset class="jump-cut-switches">
        <legend>Jump cuts</legend>
        <label>
          <input
            type="checkbox"
            checked={switches.silences}
            onChange={(e) => switches.setSilences((e.target as HTMLInputElement).checked)}
          />{' '}
          Remove silences
        </label>
        <label>
          <input type="checkbox" checked={switches.fillers} onChange={(e) => switches.setFillers((e.target as HTMLInputElement).checked)} />{' '}
          Remove filler words (um, uh, …)
        </label>
      </fieldset>
      <RenderPreview
        short={short}
        source={source}
        time={time}
        crop={crop}
        layout={layout}
        layoutLabel={reframed ? <LayoutLabel layout={layout} announce={false} /> : null}
        style={caption.previewStyle}
        page={page}
        frame={frame}
        watermark={previewWatermark}
        onWatermark={setWmPlacement}
        captionPosition={caption.captionPosition}
        autoLabel={caption.autoLabel}
        onCaptionPosition={caption.setCaptionPosition}
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
      {live && s ? <RenderStatusView renderId={live.renderId} status={s} title={short.title} /> : null}
    </section>
  );
}

/** The brand preset or caption style to render with, and the output size the plan allows. */
function RenderChoiceFields({
  active,
  choice,
  onChoice,
  plan,
  sizes,
  size,
  onSize,
}: {
  active: BrandPreset[];
  choice: string;
  onChoice: (choice: string) => void;
  plan: string;
  sizes: RenderSize[];
  size: RenderSize;
  onSize: (key: string) => void;
}) {
  return (
    <>
      <label for="render-style">Brand preset or caption style</label>
      <select id="render-style" value={choice} onChange={(e) => onChoice((e.target as HTMLSelectElement).value)}>
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
      <select id="render-size" value={sizeKey(size)} onChange={(e) => onSize((e.target as HTMLSelectElement).value)}>
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
    </>
  );
}
