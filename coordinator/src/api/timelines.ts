import { z } from 'zod';
import type { Api, ApiContext } from './http.js';
import type { Coordinator } from '../context.js';
import { registerExportRoutes } from './export-routes.js';
import { renderTimeline, shortTimeline, type TimelineExport } from '../timelines/timelines.js';
import { toFcpxml } from '../timelines/fcpxml.js';
import { toOtio } from '../timelines/otio.js';
import { toEdl } from '../timelines/edl.js';

// Editor timelines (docs/exports.md, "Editor timelines"): the edit of a short or of a render as
// FCPXML, OpenTimelineIO JSON and a CMX3600 EDL, served like the caption files.

const EXAMPLE_EDL =
  'TITLE: Talk: Intro\nFCM: NON-DROP FRAME\n\n* NOT CARRIED: THE CROP (KEYFRAMED SCALE AND POSITION; USE THE FCPXML OR OTIO FILE)\n\n001  AX       AA/V  C        00:01:01:12 00:01:02:11 00:00:00:00 00:00:00:24\n* FROM CLIP NAME: talk.mp4\n';

const rationalTimeSchema = z.object({ OTIO_SCHEMA: z.literal('RationalTime.1'), rate: z.number(), value: z.number() });
/** The OTIO document's top level (timelines/otio.ts); the tracks' items are OTIO's own schemas. */
const otioSchema = z.looseObject({
  OTIO_SCHEMA: z.literal('Timeline.1'),
  metadata: z.object({
    shorts: z.object({
      width: z.number(),
      height: z.number(),
      notes: z.array(z.string()).describe('What the timeline shows differently from the render (a stacked or fit layout)'),
    }),
  }),
  name: z.string(),
  global_start_time: rationalTimeSchema,
  tracks: z.looseObject({
    OTIO_SCHEMA: z.literal('Stack.1'),
    name: z.string(),
    children: z
      .array(z.record(z.string(), z.unknown()))
      .describe('Track.1 items, bottom to top: "Video", "Watermark" (when the render has one), "Captions"'),
  }),
});

const FORMATS = {
  fcpxml: {
    type: 'application/xml',
    schema: z.string(),
    example: '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE fcpxml>\n<fcpxml version="1.10">…</fcpxml>\n',
    name: 'FCPXML 1.10 (Final Cut Pro, DaVinci Resolve)',
  },
  otio: {
    type: 'application/json',
    schema: otioSchema,
    example: {
      OTIO_SCHEMA: 'Timeline.1' as const,
      metadata: { shorts: { width: 1080, height: 1920, notes: [] } },
      name: 'Talk: Intro',
      global_start_time: { OTIO_SCHEMA: 'RationalTime.1' as const, rate: 25, value: 0 },
      tracks: { OTIO_SCHEMA: 'Stack.1' as const, name: 'tracks', children: [] },
    },
    name: 'OpenTimelineIO JSON (.otio)',
  },
  edl: { type: 'text/plain', schema: z.string(), example: EXAMPLE_EDL, name: 'CMX3600 EDL (cuts only)' },
} as const;
type Format = keyof typeof FORMATS;
/** What the routes of every format answer, each its format's schema. */
type TimelineFile = z.output<(typeof FORMATS)[Format]['schema']>;

const COMMON =
  "A 9:16 sequence at the source's frame rate: the source's in/out points as clips (each range a jump cut keeps as its own clip, back to back), the crop the render makes as a keyframed transform (scale and position) of each clip, the caption cues as titles (FCPXML) or markers (OTIO), the watermark as a still on its own track. The EDL carries the cuts only and says in comments what it drops. Sent as a download (`Content-Disposition: attachment`).";

function send(ctx: ApiContext, format: Format, out: TimelineExport): TimelineFile {
  ctx.type = `${FORMATS[format].type}; charset=utf-8`;
  ctx.set('Content-Disposition', `attachment; filename="${out.fileBase}.${format}"`);
  if (format === 'fcpxml') return toFcpxml(out.timeline);
  if (format === 'edl') return toEdl(out.timeline);
  return toOtio(out.timeline);
}

export function registerTimelineRoutes(api: Api, app: Coordinator): void {
  for (const format of Object.keys(FORMATS) as Format[]) {
    const f = FORMATS[format];
    registerExportRoutes<(typeof FORMATS)[Format]['schema'], TimelineExport>(api, app, {
      file: `timeline.${format}`,
      format: f,
      short: {
        summary: `Editor timeline of a short: ${f.name}`,
        description:
          `${COMMON} As a render asked now with these options would cut it (the same query as the caption files), framed 1080x1920 on the short's stored crop path. ` +
          "A job that has not COMPLETED is 409; another organization's job, a removed or unknown short is 404.",
        example: f.example,
        make: (orgId, ctx, query) => shortTimeline(app, orgId, ctx.params.jobId!, ctx.params.shortId!, query),
      },
      render: {
        summary: `Editor timeline of a render: ${f.name}`,
        description: `${COMMON} 1920 pixels high in the render's shape (a 720x1280 render's is 1080x1920), from the range, options and crop path it was asked with (at any status) and, once it is done, the jump cuts it made. Another organization's render is 404.`,
        example: f.example,
        make: (orgId, renderId) => renderTimeline(app, orgId, renderId),
      },
      send: (ctx, out) => send(ctx, format, out),
    });
  }
}
