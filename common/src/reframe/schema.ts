// Runtime shapes of the reframe data (types.ts): the API documents `reframe` with these, and the
// coordinator checks what an agent returns against them before storing it.
import { z } from 'zod';
import type { Same } from '../tasks/contract.js';
import type { Box, DirectorSettings, FaceTrack, Reframe, ReframeKeyframe, ReframeSegment, ShortDetections, SpeakerTurn, TrackSample } from './types.js';

const box = {
  x: z.number().describe('Left edge, source pixels'),
  y: z.number().describe('Top edge, source pixels'),
  width: z.number().positive(),
  height: z.number().positive(),
};

export const reframeKeyframeSchema = z.object({
  time: z.number().describe('Seconds on the source clock (the same clock as the short\'s startTime/endTime)'),
  ...box,
  panels: z.array(z.object(box)).optional()
    .describe('Split segments only: the windows stacked top to bottom, the speaker\'s first (x/y/width/height repeat the first)'),
});

export const reframeSegmentSchema = z.object({
  start: z.number(),
  end: z.number(),
  layout: z.enum(['single', 'split', 'fit']).describe('single: one moving window; split: two stacked panels; fit: the window fitted whole over a blurred copy of itself'),
  tracks: z.array(z.number().int()).describe('Face tracks shown, the speaker first; empty for a fallback'),
});

export const reframeSchema = z.object({
  sourceWidth: z.number().int().positive(),
  sourceHeight: z.number().int().positive(),
  keyframes: z.array(reframeKeyframeSchema)
    .describe('The crop window over time; between two keyframes it is their linear interpolation, and two keyframes at one time are a cut'),
  segments: z.array(reframeSegmentSchema),
}).describe('The short\'s crop path (speaker-aware reframing), in source pixels on the source clock');

const boxSchema = z.object(box);

const trackSampleSchema = z.object({
  time: z.number(),
  box: z.object(box),
  score: z.number(),
  mouthActivity: z.number(),
});

const faceTrackSchema = z.object({ id: z.number().int(), samples: z.array(trackSampleSchema) });
const speakerTurnSchema = z.object({ start: z.number(), end: z.number(), trackId: z.number().int().nullable() });

export const shortDetectionsSchema = z.object({
  version: z.literal(1),
  sourceWidth: z.number().int().positive(),
  sourceHeight: z.number().int().positive(),
  start: z.number(),
  end: z.number(),
  sampleFps: z.number().positive(),
  speech: z.array(z.object({ start: z.number(), end: z.number() })),
  tracks: z.array(faceTrackSchema),
  turns: z.array(speakerTurnSchema),
});

export const directorSettingsSchema = z.object({
  facePaddingFactor: z.number().finite(),
  maxSpeakersToFocus: z.number().int().positive(),
});

// Compile-time pins: each schema's output is exactly its interface (both directions), or this fails to compile.
const schemasMatchTypes: [
  Same<z.output<typeof boxSchema>, Box>,
  Same<z.output<typeof reframeKeyframeSchema>, ReframeKeyframe>,
  Same<z.output<typeof reframeSegmentSchema>, ReframeSegment>,
  Same<z.output<typeof reframeSchema>, Reframe>,
  Same<z.output<typeof trackSampleSchema>, TrackSample>,
  Same<z.output<typeof faceTrackSchema>, FaceTrack>,
  Same<z.output<typeof speakerTurnSchema>, SpeakerTurn>,
  Same<z.output<typeof shortDetectionsSchema>, ShortDetections>,
  Same<z.output<typeof directorSettingsSchema>, DirectorSettings>,
] = [true, true, true, true, true, true, true, true, true];
void schemasMatchTypes;
