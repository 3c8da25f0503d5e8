import { useEffect, useMemo, useState } from 'preact/hooks';
import { CAPTION_PRESETS, type StyleItem } from '@shorts/common/render/presets';
import type { WatermarkPlacement } from '@shorts/common/render/watermark-geometry';
import { cutsAnything, editingFromSwitches, jumpCutFlags, type EditingOptions } from '@shorts/common/options/editing-rules';
import type { BearerJobShort } from '@shorts/common/api/jobs';
import type { BrandPreset } from '@shorts/common/api/brandings';
import type { FileView } from '@shorts/common/api/files';
import type { RenderCaptionPlacement } from '@shorts/common/api/renders';
import { withCaptionBand } from '@shorts/common/reframe/caption-band';
import { api, currentPlan } from '../api.js';
import { PLAN_LIMITS, type Plan } from '../../../src/tenancy/plans.js';
import { BASE_SIZE, initialSize, planSizes, rememberChoice, rememberedChoice, rememberSize, sizeKey, type RenderSize } from '../sizes.js';
import { styleFor } from '../captions.js';
import { useLoad } from '../ui.js';
import type { CaptionPosition } from './RenderPreview.js';
import type { PreviewWatermark } from './preview-watermark.js';

// The render dialog's choices, each a hook of its own: the preset or style, the size, the jump-cut
// switches, the watermark's box and the caption band. What the preview shows is what the request asks for.

/** The brand preset or caption style chosen (`brand:<id>` or `style:<name>`), and the active brand presets. */
export function useRenderChoice() {
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
  return { presets, active, choice, setChoice, brand };
}

/**
 * The output size: the plan's sizes (and the preset's own where the plan allows it), remembered per
 * preset; sent with every render, so the API's 720x1280 default never applies by accident.
 */
export function useRenderSize(choice: string, brand: BrandPreset | undefined) {
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
  return { plan, sizes, size, setSize };
}

/** The jump-cut switches: they start as the chosen brand preset has them; a preset's own settings are kept when on. */
export function useJumpCutSwitches(choice: string, brand: BrandPreset | undefined, onEditing: (editing: EditingOptions) => void) {
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
  // Sent whenever either switch is on or the preset had one on: an explicit off must win over the preset.
  const sendEditing = silences || fillers || cutsAnything(presetEditing);
  return { silences, setSilences, fillers, setFillers, editing, sendEditing };
}

/** The brand preset's watermark where the preview shows it: the preset's box, or the one dragged there (until the choice changes). */
export function usePreviewWatermark(choice: string, brand: BrandPreset | undefined) {
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
  return { presetWm, wmPlacement, setWmPlacement, previewWatermark };
}

const POSITION_WORDS = { top: 'top', center: 'middle', bottom: 'lower third' } as const;

/**
 * The caption band. Automatic: the render places the captions as the coordinator will (the short's
 * band, away from a face framed in the lower third, unless the style places them), and the preview
 * does the same: the coordinator answers what the render asked with this preset and size would do
 * (its band depends on both); until it has, the short's stored band for the default style.
 */
export function useCaptionPlacement(opts: {
  jobId: string;
  short: BearerJobShort;
  brand: BrandPreset | undefined;
  styleName: string | null;
  size: RenderSize;
}) {
  const { jobId, short, brand, styleName, size } = opts;
  const [captionPosition, setCaptionPosition] = useState<CaptionPosition | 'auto'>('auto');
  const presetItems: StyleItem[] = brand?.options?.style ?? [];
  const requestItems: StyleItem[] =
    captionPosition === 'auto' ? presetItems : [...presetItems, { property: 'position', value: captionPosition }];
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
  return { captionPosition, setCaptionPosition, requestItems, previewStyle, autoLabel };
}
