// A short's framing by hand (common/src/reframe/overrides.ts) as jobs.data keeps it: `reframe` is the
// camera's path with the overrides applied (and lists them), so every view and render reads it as it
// is; `plannedReframe` keeps the camera's own path while overrides are set, for shorts whose path
// cannot be planned again (no stored detections).
import { planReframe } from '@shorts/common/reframe/camera';
import { DEFAULT_DIRECTOR } from '@shorts/common/reframe/director';
import { applyOverrides, centreCropPath, checkOverrides, type OverrideContext } from '@shorts/common/reframe/overrides';
import { detectionsWithin } from '@shorts/common/reframe/restrict';
import type { FramingOverride, Reframe, ShortDetections } from '@shorts/common/reframe/types';
import type { JobData, StoredShort } from './jobs.js';
import { bandOf } from './job-views.js';

/** The shape paths are planned for when the job recorded none (the contract's default render). */
const DEFAULT_OUTPUT = { width: 1080, height: 1920 };

/** What applying overrides to this short needs: its range, the source, its detections over the range. */
export function overrideContext(
  short: Pick<StoredShort, 'startTime' | 'endTime'>,
  data: JobData,
  detections: ShortDetections | null,
): OverrideContext {
  return {
    start: short.startTime,
    end: short.endTime,
    sourceWidth: data.source.width,
    sourceHeight: data.source.height,
    detections: detections ? detectionsWithin(detections, short.startTime, short.endTime) : null,
    director: data.reframePlan?.director ?? DEFAULT_DIRECTOR,
    output: data.reframePlan?.output ?? DEFAULT_OUTPUT,
  };
}

/** The camera's path for the short, without overrides: planned again from the detections where they
 *  cover it, else the one kept, else the centre crop. */
function plannedPath(short: StoredShort, ctx: OverrideContext, hasPlan: boolean): Reframe {
  if (ctx.detections && hasPlan) return planReframe(ctx.detections, ctx.director, ctx.output);
  const kept = short.plannedReframe !== undefined ? short.plannedReframe : short.reframe;
  if (kept) {
    const { overrides: _applied, ...path } = kept;
    return path;
  }
  return centreCropPath(ctx);
}

/** The short framed with `overrides` (all of them checked: a bad one throws InvalidInput, a 400). An
 *  empty list gives the camera's path back. */
export function withFraming(
  short: StoredShort,
  data: JobData,
  detections: ShortDetections | null,
  overrides: FramingOverride[],
): StoredShort {
  const ctx = overrideContext(short, data, detections);
  checkOverrides(overrides, ctx);
  const { plannedReframe: _kept, ...rest } = short;
  if (!overrides.length) {
    if (!short.reframe?.overrides) return short;
    const planned = short.plannedReframe !== undefined ? short.plannedReframe : plannedPath(short, ctx, !!data.reframePlan);
    const { captionBand: _band, ...unbanded } = rest;
    return { ...unbanded, reframe: planned, ...bandOf(planned, ctx.detections, data.reframePlan?.output) };
  }
  const planned = plannedPath(short, ctx, !!data.reframePlan);
  const hadPath = short.plannedReframe !== undefined ? short.plannedReframe : (short.reframe ?? null);
  const { reframeStale: _stale, captionBand: _band, ...unbanded } = rest;
  const reframe = applyOverrides(planned, overrides, ctx);
  return {
    // A path set by hand is the user's: not stale, whatever detection covered.
    ...unbanded,
    reframe,
    plannedReframe: hadPath ? stripOverrides(hadPath) : null,
    ...bandOf(reframe, ctx.detections, data.reframePlan?.output),
  };
}

/**
 * After a trim: the overrides clipped to the new range, those that no longer apply (outside it, or a
 * face not seen there) dropped, and the rest applied to the path the trim planned (`placed.reframe`).
 */
export function keepFraming(before: StoredShort, placed: StoredShort, data: JobData, detections: ShortDetections | null): StoredShort {
  const overrides = before.reframe?.overrides ?? [];
  const { plannedReframe: _old, ...rest } = placed;
  if (!overrides.length) return rest;
  const ctx = overrideContext(placed, data, detections);
  const kept = overrides
    .map((o) => ({ ...o, start: Math.max(o.start, placed.startTime), end: Math.min(o.end, placed.endTime) }))
    .filter((o) => {
      try {
        checkOverrides([o], ctx);
        return true;
      } catch {
        return false;
      }
    });
  if (!kept.length) return rest;
  const planned = placed.reframe ?? centreCropPath(ctx);
  const reframe = applyOverrides(planned, kept, ctx);
  const { reframeStale: _stale, captionBand: _band, ...unbanded } = rest;
  return { ...unbanded, reframe, plannedReframe: placed.reframe ?? null, ...bandOf(reframe, ctx.detections, data.reframePlan?.output) };
}

function stripOverrides(r: Reframe): Reframe {
  const { overrides: _applied, ...path } = r;
  return path;
}
