import type { RenderStatus } from '@shorts/common/api/renders';

const WORDS = { top: 'top', center: 'middle', bottom: 'lower third' } as const;

/** Where the render put its captions, and why: the render's own answer (its status's captionPosition). */
export function CaptionPositionNote({ status }: { status: RenderStatus }) {
  const placed = 'captionPosition' in status ? status.captionPosition : undefined;
  if (!placed) return null;
  let why: string;
  if (placed.chosenBy === 'style') why = 'as the style places them';
  else if (placed.faceOverlap === undefined) why = 'automatic: the style’s own place, no framed faces known';
  else if (placed.faceOverlap)
    why = `automatic; no band is clear of the faces (they cross it ${Math.round(placed.faceOverlap * 100)} % of the time)`;
  else if (placed.movedFromFace) why = 'automatic, moved off the framed face';
  else why = 'automatic, clear of the framed faces';
  return (
    <p class="muted" data-testid="render-caption-position" data-position={placed.position}>
      Captions: {WORDS[placed.position]} ({why})
    </p>
  );
}
