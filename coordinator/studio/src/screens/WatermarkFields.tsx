import type { WatermarkBox } from '@shorts/common/render/watermark-geometry';
import { NumberInput } from '../ui.js';

/** The watermark's box as numbers, in pixels of the output frame: typing one moves or resizes it as dragging does. */
export function WatermarkFields({
  box,
  frameName,
  setBox,
}: {
  box: WatermarkBox;
  frameName: string;
  setBox: (next: Pick<WatermarkBox, 'x' | 'y' | 'w'>) => void;
}) {
  const field = (id: string, label: string, value: number, set: (n: number) => void) => (
    <div>
      <label for={id}>{label}</label>
      <NumberInput id={id} step={1} value={value} style={{ width: '80px' }} onCommit={set} /> px
    </div>
  );
  return (
    <fieldset class="watermark-fields" data-testid="watermark-fields">
      <legend>Watermark, in pixels of the {frameName} output frame</legend>
      <div class="row">
        {field('wm-x', 'x', box.x, (x) => setBox({ ...box, x }))}
        {field('wm-y', 'y', box.y, (y) => setBox({ ...box, y }))}
        {field('wm-width', 'width', box.w, (w) => setBox({ ...box, w: Math.max(1, w) }))}
      </div>
      <p class="muted" data-testid="watermark-summary">
        x {box.x} px, y {box.y} px, {box.w}x{box.h} px of {frameName}
      </p>
    </fieldset>
  );
}
