// Runtime shapes of the reframe data (types.ts): the API documents `reframe` with these, and the
// coordinator checks what an agent returns against them before storing it.
import { z } from 'zod';
import type { Same } from '../tasks/contract.js';
import type {
  Box,
  DetectedShot,
  DirectorSettings,
  FaceTrack,
  FramingOverride,
  Reframe,
  ReframeKeyframe,
  ReframeQuality,
  ReframeSegment,
  ShortDetections,
  SourceShot,
  SpeakerTurn,
  TrackSample,
} from './types.js';

const box = {
  x: z.number().describe('Left edge, source pixels'),
  y: z.number().describe('Top edge, source pixels'),
  width: z.number().positive(),
  height: z.number().positive(),
};

export const reframeKeyframeSchema = z.object({
  time: z.number().describe("Seconds on the source clock (the same clock as the short's startTime/endTime)"),
  ...box,
  panels: z
    .array(z.object(box))
    .optional()
    .describe(
      "Split and stack segments only: the windows stacked top to bottom, each filling the output's width (split: the speaker's first; stack: the facecam, then the screen); x/y/width/height repeat the first",
    ),
});

export const reframeSegmentSchema = z.object({
  start: z.number(),
  end: z.number(),
  layout: z
    .enum(['single', 'split', 'fit', 'stack'])
    .describe(
      'single: one moving window; split: two people in stacked panels; fit: the window (a shot with no usable face: a slide, B-roll, a screen) fitted whole over a blurred copy of itself; stack: a facecam inset on top and the screen content below',
    ),
  tracks: z.array(z.number().int()).describe('Face tracks shown, the speaker first; empty for a fallback'),
});

export const sourceShotSchema = z.object({
  start: z.number().describe('Seconds on the source clock: the first frame of the shot (for a cut, exactly its first frame)'),
  end: z.number(),
  transition: z
    .enum(['start', 'cut', 'dissolve'])
    .describe(
      "How the shot begins: start (the short's first moment), cut (a hard cut), dissolve (a dissolve or fade, from start to transitionEnd)",
    ),
  transitionEnd: z.number().optional().describe('Dissolves only: when the blend into this shot is complete'),
});

const share = z.number().min(0).max(1);

export const reframeQualitySchema = z
  .object({
    speakerOnScreenShare: share.describe(
      "Share (0-1) of the short's speech time that speaker detection pinned on a face on screen; the rest was heard with no visible face judged to speak (voice-over, a face too small or turned, the speaker off screen). 1 when the short has no speech",
    ),
    faceInWindowShare: share.describe(
      "Share (0-1) of the short's speech time with at least one detected face wholly inside the window shown (any panel of a split or stack; any face in a fit), looked at every 0.1 s. 1 when the short has no speech",
    ),
    lowestConfidenceSpan: z
      .object({
        start: z.number().describe('Seconds on the source clock'),
        end: z.number(),
        confidence: share.describe('How sure detection was of who speaks in this span, 0-1'),
      })
      .nullable()
      .describe(
        "The speaker turn within the short's speech where detection was least sure who speaks (the earliest of equals); null when the short has no speech",
      ),
  })
  .describe(
    "How far the path can be trusted, measured over the short's speech when it was planned (a low speakerOnScreenShare: the camera often had no speaker to follow); absent on paths planned before it was measured",
  );

const span = {
  start: z.number().finite().describe('Seconds on the source clock, inside the short'),
  end: z.number().finite().describe('Seconds on the source clock, after `start`, inside the short'),
};

export const framingOverrideSchema = z
  .discriminatedUnion('kind', [
    z.object({
      ...span,
      kind: z.literal('window'),
      window: z
        .object(box)
        .describe(
          "The window to hold still over the span, source pixels inside the source: its centre and height are kept, its width follows the output's shape",
        ),
    }),
    z.object({
      ...span,
      kind: z.literal('layout'),
      layout: z
        .enum(['single', 'split', 'fit', 'stack'])
        .describe(
          'The layout over the span, framed as the camera would: single follows the speaker, split stacks two faces (or the two halves of the picture), fit shows the whole picture, stack puts a face on top of the whole picture',
        ),
    }),
    z.object({
      ...span,
      kind: z.literal('face'),
      trackId: z
        .number()
        .int()
        .min(0)
        .describe('A face track of the short (`reframe.segments[].tracks`): the window follows it over the span'),
    }),
  ])
  .describe('A span framed by hand; of two overlapping, the later in the list wins');

export const reframeSchema = z
  .object({
    sourceWidth: z.number().int().positive(),
    sourceHeight: z.number().int().positive(),
    keyframes: z
      .array(reframeKeyframeSchema)
      .describe(
        'The crop window over time; between two keyframes it is their linear interpolation, and two keyframes at one time are a cut',
      ),
    segments: z.array(reframeSegmentSchema),
    shots: z
      .array(sourceShotSchema)
      .optional()
      .describe(
        "The source's shots within the short, in order: every framing change a source edit causes happens at a shot's start, and no pan spans two shots",
      ),
    quality: reframeQualitySchema.optional(),
    overrides: z
      .array(framingOverrideSchema)
      .optional()
      .describe(
        'The framing set by hand (PUT /api/jobs/{jobId}/shorts/{shortId}/framing), already applied to `keyframes` and `segments`; absent when none',
      ),
  })
  .describe("The short's crop path (speaker-aware reframing), in source pixels on the source clock");

const boxSchema = z.object(box);

const trackSampleSchema = z.object({
  time: z.number(),
  box: boxSchema,
  score: z.number(),
  mouthActivity: z.number(),
});

const faceTrackSchema = z.object({ id: z.number().int(), samples: z.array(trackSampleSchema) });
const speakerTurnSchema = z.object({
  start: z.number(),
  end: z.number(),
  trackId: z.number().int().nullable(),
  confidence: z.number().min(0).max(1).optional(),
  runnerUp: z.number().int().nullable().optional(),
});

const detectedShotSchema = sourceShotSchema.extend({
  content: z.object(box),
  motion: z.array(z.number()),
});

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
  shots: z.array(detectedShotSchema).optional(),
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
  Same<z.output<typeof reframeQualitySchema>, ReframeQuality>,
  Same<z.output<typeof sourceShotSchema>, SourceShot>,
  Same<z.output<typeof detectedShotSchema>, DetectedShot>,
  Same<z.output<typeof trackSampleSchema>, TrackSample>,
  Same<z.output<typeof faceTrackSchema>, FaceTrack>,
  Same<z.output<typeof speakerTurnSchema>, SpeakerTurn>,
  Same<z.output<typeof shortDetectionsSchema>, ShortDetections>,
  Same<z.output<typeof directorSettingsSchema>, DirectorSettings>,
  Same<z.output<typeof framingOverrideSchema>, FramingOverride>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true];
void schemasMatchTypes;
