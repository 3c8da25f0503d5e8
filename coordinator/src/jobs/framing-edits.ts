// PUT /api/jobs/:jobId/shorts/:shortId/framing: the short's framing by hand replaced as a whole (the
// studio sends its whole list, so undo is sending the previous one). An edit of the shorts like a trim:
// versioned by data.shortsRevision, no job, no charge.
import { z } from 'zod';
import { framingOverrideSchema } from '@shorts/common/reframe/schema';
import { MAX_FRAMING_OVERRIDES } from '@shorts/common/reframe/overrides';
import type { Db } from '../db/db.js';
import { editShorts, liveShort, organizationId, revision, type EditedShort } from './short-edits.js';
import { withFraming } from './framing.js';

export const framingBodySchema = z.object({
  organizationId,
  revision,
  overrides: z
    .array(framingOverrideSchema)
    .max(MAX_FRAMING_OVERRIDES)
    .describe('Every span framed by hand, replacing those set before (an empty list gives the camera its path back)'),
});

export type FramingBody = z.infer<typeof framingBodySchema>;

export async function setFraming(db: Db, organizationId: string, jobId: string, shortId: string, body: FramingBody): Promise<EditedShort> {
  return editShorts(db, organizationId, jobId, body.revision, ({ data, detections }) => {
    const short = liveShort(data.shorts, shortId);
    const next = withFraming(short, data, detections[short.id] ?? null, body.overrides);
    return { shorts: data.shorts.map((s) => (s.id === short.id ? next : s)), short: next };
  });
}
