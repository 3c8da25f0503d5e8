import { z } from 'zod';
import { directorSettingsSchema, reframeSchema, shortDetectionsSchema } from '../reframe/schema.js';
import { predefinedShortsSchema } from '../options/predefined-shorts.js';
import { storedObjectSchema, wordSchema, type TaskContract, type TaskOutputs } from './contract.js';

// analyze-video: download a job's source, transcribe it, pick the shorts, cut a preview crop of each.

const urlSource = z.object({ kind: z.literal('url'), url: z.string().min(1) });
const youtubeSource = z.object({ kind: z.literal('youtube'), videoId: z.string().min(1) });
/** A video already in the organization's storage: a studio upload (`consume`: its staging file goes
 *  once the job has its own copy) or the source of an earlier job run again. */
const storedSource = z.object({
  kind: z.literal('object'),
  objectKey: z.string().min(1),
  fileId: z.string().nullable(),
  consume: z.boolean(),
});

/** Samples [startSample, endSample) of the analysis audio. */
export const sampleSpanSchema = z.object({ startSample: z.number().int().nonnegative(), endSample: z.number().int().positive() });
const transcriptSchema = z.object({ language: z.string(), text: z.string(), words: z.array(wordSchema), backend: z.string() });
const sourceObjectSchema = storedObjectSchema.extend({
  name: z.string().min(1),
  width: z.number().int().positive(),
  height: z.number().int().positive(),
  /** Frames per second as ffprobe reads them; absent from agents older than it, null when unknown. */
  fps: z.number().finite().positive().nullish(),
  /** The sound stream the analysis heard (`0:a:<n>`): the one with speech where there are several;
   *  null when the source has no sound; absent from agents older than it (then the first). */
  audioStream: z.number().int().nonnegative().nullish(),
});

/** A ranged analysis's final part (issue 22): the source this task stored in its first part and the
 *  transcript joined from its ranges; the agent picks and reframes the shorts from them. */
const stitchedSchema = z.object({
  source: sourceObjectSchema,
  durationSec: z.number().finite().positive(),
  downloadBytes: z.number().int().nonnegative(),
  transcript: transcriptSchema,
  /** The 16 kHz audio the first part decoded and the ranges read: the final part picks and reframes
   *  with it as a whole-file analysis does, without decoding the source's audio again. Absent in a
   *  final part planned before it was passed on. */
  audioKey: z.string().min(1).optional(),
});

/** Seconds on the source clock. */
const timeRangeSchema = z.object({ start: z.number().finite().nonnegative(), end: z.number().finite().positive() });

/**
 * How the automatic shorts are picked (issue 40): the job's options as normalised when the request
 * was accepted (coordinator/src/jobs/job-input.ts), read by the agent as they are.
 */
export const pickingSchema = z.object({
  /** Each short's length in seconds, lead-in and tail included. */
  clipLength: z.object({ min: z.number().finite().positive(), max: z.number().finite().positive() }),
  /** Null: about one per 90 s of video, up to 5. */
  maxShorts: z.number().int().min(1).max(20).nullable(),
  /** Only this part of the source is transcribed, picked from and charged. */
  range: timeRangeSchema.nullable(),
  /** Lower-cased keywords or phrases the shorts should be about; empty: any subject. */
  topics: z.array(z.string().min(1)),
  /** For a language-model picker; without one the analysis notes that it was ignored. */
  prompt: z.string().nullable(),
  /** ISO 639-1 code for the transcriber, where it can take one. */
  language: z.string().nullable(),
});
export type Picking = z.output<typeof pickingSchema>;

/** What a job that names no picking options gets (docs/transcription.md). */
export const DEFAULT_CLIP_LENGTH = { min: 15, max: 60 } as const;

/** The parts of a short's score, each 0-100; topicMatch is null when the job named no topics. */
export const shortScoresSchema = z.object({
  hook: z.number().min(0).max(100),
  completeness: z.number().min(0).max(100),
  standalone: z.number().min(0).max(100),
  energy: z.number().min(0).max(100),
  topicMatch: z.number().min(0).max(100).nullable(),
});
export type ShortScores = z.output<typeof shortScoresSchema>;

export const analyzeVideoPayloadSchema = z.object({
  jobId: z.string(),
  source: z.discriminatedUnion('kind', [urlSource, youtubeSource, storedSource]),
  /** The client's own start/end times; null lets the agent pick the shorts. */
  predefinedShorts: predefinedShortsSchema.nullable(),
  maxDownloadBytes: z.number().int().positive(),
  maxAutoShortSec: z.number().positive(),
  /** Absent in payloads queued before picking options existed: the defaults. */
  picking: pickingSchema.optional(),
  stitched: stitchedSchema.optional(),
});

/** What the agent receives: a stored source comes with a URL signed at lease time. */
export const analyzeVideoLeaseSchema = analyzeVideoPayloadSchema.extend({
  source: z.discriminatedUnion('kind', [urlSource, youtubeSource, storedSource.extend({ url: z.string().min(1) })]),
  /** A source at least this long is analysed in ranges: the agent stores and probes it, and returns
   *  (`ranged`) without transcribing. Absent: the whole file here, as always. */
  rangesFromSec: z.number().positive().optional(),
  /** Free slots in the farm for reframe-short children: with two or more (and two shorts or more),
   *  the analysis (a whole file's, or a ranged one's final part) picks the shorts and leaves each
   *  one's reframing to a child of its own (`reframing`). Absent or under two: it reframes them itself. */
  reframeSlots: z.number().int().nonnegative().optional(),
  stitched: stitchedSchema.extend({ sourceUrl: z.string().min(1), audioUrl: z.string().min(1).optional() }).optional(),
});

/** Known as soon as the source is probed; the coordinator prices the job on them before transcribing. */
export const analyzeVideoFactsSchema = z.object({
  durationSec: z.number().finite().positive(),
  downloadBytes: z.number().int().nonnegative(),
});

export const analyzedShortSchema = z.object({
  title: z.string(),
  /** 'model': written by the language model (kept through word corrections unless they touch it). */
  titledBy: z.literal('model').optional(),
  reason: z.string().nullable(),
  startTime: z.number().finite(),
  endTime: z.number().finite(),
  startId: z.number().int().nullable(),
  endId: z.number().int().nullable(),
  text: z.string(),
  /** Automatic shorts: how good a post the picker thinks this is (0-100), its parts, and `reason`
   *  written from them. Absent for the client's own times and shorts chosen from the picture. */
  score: z.number().min(0).max(100).optional(),
  scores: shortScoresSchema.optional(),
  crop: storedObjectSchema.nullable(),
  /** The camera path the crop clip follows and renders reuse (common/src/reframe/types.ts `Reframe`);
   *  null for a centred crop. */
  reframe: reframeSchema.nullable(),
  /** What the path was planned from; stored, not served, for renders with other director settings. */
  detections: shortDetectionsSchema.nullable(),
});

/** The settings and output size the shorts' paths were planned for. */
export const reframePlanSchema = z.object({
  director: directorSettingsSchema,
  output: z.object({ width: z.number().int().positive(), height: z.number().int().positive() }),
});

export const analyzeVideoResultSchema = z.object({
  durationSec: z.number().finite().positive(),
  downloadBytes: z.number().int().nonnegative(),
  source: sourceObjectSchema,
  transcript: transcriptSchema,
  shorts: z.array(analyzedShortSchema),
  /** What the analysis did that the user should know (a source without sound, the sound track it
   *  heard); served with the job. */
  notes: z.array(z.string()).optional(),
  /** Absent when no short has a path. */
  reframePlan: reframePlanSchema.optional(),
  /** The first part of a ranged analysis: the source stored and measured, no transcript or shorts
   *  yet; its ranges follow as child tasks, then a final part on an agent. */
  ranged: z.literal(true).optional(),
  /** With `ranged`: the analysis audio (16 kHz mono s16 WAV) the first part stored, and the speech
   *  spans the transcriber's plan over it decodes one at a time (cut in pauses the VAD found), in
   *  samples. Ranges are made of whole spans read from that audio, so that each span is decoded from
   *  the same samples as in a whole-file run and the words come out the same. */
  rangePlan: z
    .object({
      audio: z.object({
        objectKey: z.string().min(1),
        dataOffset: z.number().int().nonnegative(),
        sampleRate: z.number().int().positive(),
      }),
      spans: z.array(sampleSpanSchema).min(1),
    })
    .optional(),
  /** A ranged analysis's final part that picked the shorts (no crop, path or detections yet) and
   *  leaves each short's reframing to a reframe-short child: the analysis audio they read. The
   *  coordinator joins the children's crops into the shorts, and completes the task with them. */
  reframing: z
    .object({
      audio: z.object({
        objectKey: z.string().min(1),
        dataOffset: z.number().int().nonnegative(),
        sampleRate: z.number().int().positive(),
      }),
    })
    .optional(),
});

/** Stages in order: the span of the task's own progress each covers, and the progress the contract
 *  (section 2.3) shows on the job while the agent is in it. */
export const ANALYZE_STAGES = {
  initiating: { start: 0.01, end: 0.02, jobProgress: 5 },
  downloading: { start: 0.02, end: 0.2, jobProgress: 15 },
  transcribing: { start: 0.2, end: 0.7, jobProgress: 30 },
  generating_shorts: { start: 0.7, end: 0.75, jobProgress: 60 },
  detecting_speakers: { start: 0.75, end: 1, jobProgress: 80 },
};
export type AnalyzeStage = keyof typeof ANALYZE_STAGES;

export const isAnalyzeStage = (s: string): s is AnalyzeStage => Object.hasOwn(ANALYZE_STAGES, s);

/** The extensions a stored source keeps: its container's (containerType in node-agent/src/media/ffmpeg.ts). */
export const SOURCE_EXTENSIONS = ['mp4', 'webm', 'mkv', 'avi', 'flv', 'ts', 'mpg', 'ogv', 'asf', 'mxf', 'nut', 'bin'] as const;
export type SourceExtension = (typeof SOURCE_EXTENSIONS)[number];

/** What an analysis stores (TaskOutputs in contract.ts). */
export const analyzeVideoOutputs = {
  /** The source, with its container's extension. */
  source: (extension: SourceExtension) => `source.${extension}`,
  sourceThumbnail: 'source-thumb.jpg',
  /** A long source's 16 kHz audio, which its ranges read (issue 22). */
  audio: 'analysis-audio.wav',
  /** The i-th short's reframed crop and its thumbnail. */
  short: (i: number) => `short-${i}.mp4`,
  shortThumbnail: (i: number) => `short-${i}.jpg`,
  pattern: new RegExp(
    `^(source\\.(${SOURCE_EXTENSIONS.join('|')})|source-thumb\\.(jpg|png)|analysis-audio\\.wav|short-\\d+\\.mp4|short-\\d+\\.(jpg|png))$`,
  ),
} as const satisfies TaskOutputs;

export const analyzeVideoContract = {
  payload: analyzeVideoPayloadSchema,
  leasePayload: analyzeVideoLeaseSchema,
  facts: analyzeVideoFactsSchema,
  result: analyzeVideoResultSchema,
  stages: ANALYZE_STAGES,
  needs: ['ffmpeg', 'speech-recognition', 'face-detector'],
  // Every transcriber chunks speech with Silero VAD, and reframing needs a face detector: an agent
  // without one of them cannot run this. Face detection is the one ONNX session that runs on CUDA
  // when it can (VAD and the transcribers here run on the CPU), so the host where the detector's own
  // session runs on CUDA is preferred, not any host where some CUDA provider loaded.
  placement: { requires: ['face-detector', 'model:silero-vad', 'transcriber'], prefers: ['face-detector:cuda'] },
  // A long source's analysis splits into time ranges, each transcribed by its own child, and then its
  // shorts, each reframed by its own child (issue 22).
  children: {
    types: ['analyze-range', 'reframe-short'],
    stages: { 'analyze-range': 'transcribing', 'reframe-short': 'detecting_speakers' },
  },
  timeLimitSec: 4 * 3600,
  readsJobSource: true,
  outputs: analyzeVideoOutputs,
} as const satisfies TaskContract<z.ZodType, z.ZodType, z.ZodType, z.ZodType, AnalyzeStage>;

export type AnalyzeVideoPayload = z.output<typeof analyzeVideoPayloadSchema>;
export type AnalyzeVideoLease = z.output<typeof analyzeVideoLeaseSchema>;
export type StoredSource = z.output<typeof storedSource>;
export type StitchedAnalysis = z.output<typeof stitchedSchema>;
export type AnalyzeVideoFacts = z.output<typeof analyzeVideoFactsSchema>;
export type AnalyzedShort = z.output<typeof analyzedShortSchema>;
export type AnalyzeVideoResult = z.output<typeof analyzeVideoResultSchema>;
export type ReframePlan = z.output<typeof reframePlanSchema>;
