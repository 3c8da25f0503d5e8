import type { ReframeLayout } from '@shorts/common/reframe/types';

/** The framing of the moment (single, split, fit, stack), so a change of layout is seen as playback crosses it. */
export function LayoutLabel({ layout, announce = true }: { layout: ReframeLayout; announce?: boolean }) {
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
