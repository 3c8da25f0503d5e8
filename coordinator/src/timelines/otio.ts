// A timeline (timeline.ts) as OpenTimelineIO JSON (.otio), which OTIO's own tools, DaVinci Resolve (18.5
// and later), Avid Media Composer and Kdenlive (with the OTIO adapters) read. Tracks, bottom to top:
// "Video" (the source's clips back to back), "Watermark" (one still clip) and "Captions" (a gap as long
// as the short with one marker a cue, the cue's text as its name and comment).
//
// OTIO has no standard transform effect: each clip's crop is an Effect.1 named "Transform" whose
// metadata.shorts.keyframes hold, per keyframe, its time (RationalTime, on the clip's source clock), the
// source window in pixels, the scale (sx, sy) and the move of the source's centre in output pixels
// (dx, dy, y down); timeline.ts has the maths. Tools that do not know it keep it and ignore it.
import { fpsOf, type Timeline } from './timeline.js';

type Json = Record<string, unknown>;

/** The document's top level, as GET …/timeline.otio documents it (api/timelines.ts); its tracks stay open JSON. */
export type OtioTimeline = {
  OTIO_SCHEMA: 'Timeline.1';
  metadata: { shorts: { width: number; height: number; notes: string[] } };
  name: string;
  global_start_time: RationalTime;
  tracks: { OTIO_SCHEMA: 'Stack.1'; name: string; children: Json[] } & Json;
};
type RationalTime = {
  OTIO_SCHEMA: 'RationalTime.1';
  rate: number;
  value: number;
};

export function toOtio(tl: Timeline): OtioTimeline {
  const rate = fpsOf(tl.rate);
  const rt = (value: number): RationalTime => ({ OTIO_SCHEMA: 'RationalTime.1', rate, value });
  const range = (start: number, duration: number): Json => ({ OTIO_SCHEMA: 'TimeRange.1', start_time: rt(start), duration: rt(duration) });
  const item = (schema: string, name: string, extra: Json): Json => ({
    OTIO_SCHEMA: schema,
    metadata: {},
    name,
    source_range: null,
    effects: [],
    markers: [],
    enabled: true,
    ...extra,
  });
  const clip = (name: string, reference: Json, sourceRange: Json, extra: Json = {}): Json =>
    item('Clip.2', name, {
      source_range: sourceRange,
      media_references: { DEFAULT_MEDIA: reference },
      active_media_reference_key: 'DEFAULT_MEDIA',
      ...extra,
    });
  const external = (name: string, url: string, available: Json | null): Json => ({
    OTIO_SCHEMA: 'ExternalReference.1',
    metadata: {},
    name,
    available_range: available,
    available_image_bounds: null,
    target_url: url,
  });

  const video = item('Track.1', 'Video', {
    kind: 'Video',
    children: tl.clips.map((c, i) =>
      clip(
        `${tl.source.name} ${i + 1}`,
        external(tl.source.name, tl.source.url, range(0, tl.source.durationFrames)),
        range(c.sourceIn, c.sourceOut - c.sourceIn),
        {
          metadata: { shorts: { layout: c.layout } },
          effects: [
            {
              OTIO_SCHEMA: 'Effect.1',
              name: 'Transform',
              effect_name: 'Transform',
              metadata: {
                shorts: {
                  units: 'scale: output pixels per source pixel; dx, dy: output pixels, y down, of the source centre from the frame centre',
                  keyframes: c.transforms.map((k) => ({
                    time: rt(c.sourceIn + k.frame),
                    window: k.window,
                    scale: { x: k.scaleX, y: k.scaleY },
                    position: { x: k.dx, y: k.dy },
                  })),
                },
              },
            },
          ],
        },
      ),
    ),
  });
  const tracks: Json[] = [video];
  if (tl.watermark) {
    tracks.push(
      item('Track.1', 'Watermark', {
        kind: 'Video',
        children: [clip(tl.watermark.name, external(tl.watermark.name, tl.watermark.url, null), range(0, tl.durationFrames))],
      }),
    );
  }
  tracks.push(
    item('Track.1', 'Captions', {
      kind: 'Video',
      children: [item('Gap.1', '', { source_range: range(0, tl.durationFrames) })],
      markers: tl.titles.map((c) => ({
        OTIO_SCHEMA: 'Marker.2',
        metadata: { shorts: { kind: 'caption' } },
        name: c.text,
        color: 'YELLOW',
        marked_range: range(c.recordIn, c.recordOut - c.recordIn),
        comment: c.text,
      })),
    }),
  );
  return {
    OTIO_SCHEMA: 'Timeline.1',
    metadata: { shorts: { width: tl.width, height: tl.height, notes: tl.notes } },
    name: tl.name,
    global_start_time: rt(0),
    tracks: {
      OTIO_SCHEMA: 'Stack.1',
      metadata: {},
      name: 'tracks',
      source_range: null,
      effects: [],
      markers: [],
      enabled: true,
      children: tracks,
    },
  };
}
