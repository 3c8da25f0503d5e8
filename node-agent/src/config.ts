import os from 'node:os';
import { transcriberConfigFromEnv, type TranscriberConfig } from './transcribe/transcriber.js';
import { highlightApiFromEnv, type HighlightApiConfig } from './highlights/highlight-model.js';
import path from 'node:path';
import { z } from 'zod';
import { TASK_TYPES, type TaskType } from '@shorts/common/tasks';
import { chooseMediaTools } from '@shorts/common/media/tools';
import { parseTaskTimeLimits } from '@shorts/common/tasks/contracts';
import { envFlag } from '@shorts/common/env-flag';
import { grpcTargetHost, isLoopbackHost } from '@shorts/common/net/loopback';

// One typed config for the agent: environment variables with defaults, validated and frozen at start.
const schema = z.object({
  coordinator: z.string().default('127.0.0.1:50051'),
  clusterToken: z.string().min(16),
  name: z.string().default(os.hostname()),
  maxConcurrentTasks: z.coerce
    .number()
    .int()
    .min(1)
    .max(64)
    .default(Math.max(1, Math.floor(os.cpus().length / 2))),
  workDir: z.string().default(path.join(os.tmpdir(), 'shorts-agent')),
  /** Stored objects (sources) kept on this host for the next task that reads them (tasks/object-cache.ts); 0: none. */
  objectCacheBytes: z.coerce.number().int().nonnegative().default(4_000_000_000),
  /** Chosen by chooseMediaTools: FFMPEG_PATH/FFPROBE_PATH, else a system build >= 5, else the bundled one. */
  ffmpegPath: z.string(),
  ffprobePath: z.string(),
  mediaToolsSource: z.enum(['env', 'system', 'bundled']),
  /** Wall-clock limit of one task, by type (`type=seconds,...` over the contracts' defaults): past
   *  it the task fails and its ffmpeg is killed. */
  taskTimeLimitsSec: z
    .string()
    .default('')
    .transform((text, ctx): Record<TaskType, number> => {
      try {
        return parseTaskTimeLimits(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Sources beyond these are refused before any decoding work: frame size (pixels) and frame rate. */
  maxSourcePixels: z.coerce
    .number()
    .int()
    .positive()
    .default(7680 * 4320),
  maxSourceFps: z.coerce.number().positive().default(120),
  taskTypes: z
    .string()
    .default(TASK_TYPES.join(','))
    .transform((s) =>
      s
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  tlsCaPath: z.string().optional(),
  /** Plain-text gRPC to a coordinator on another host: the cluster token would cross the network readable. */
  grpcInsecure: envFlag(false),
  fetchAllowlist: z.string().default(''),
  ytDlpPath: z.string().default('yt-dlp'),
  /** CPU threads each transcription may use. */
  transcribeConcurrency: z.coerce.number().int().min(1).default(os.cpus().length),
  leaseWaitMs: z.coerce.number().int().positive().default(20_000),
  /** Face detector for reframing: BlazeFace from npm (the default), or a stronger model in models/. */
  faceDetector: z.enum(['blazeface', 'blazeface-front', 'scrfd', 'yunet']).default('blazeface'),
  /** Model file for the face detector; defaults to the npm package's (BlazeFace) or models/<name>. */
  faceDetectorModel: z.string().optional(),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  /** Serves Prometheus /metrics on this port when set (0: any free port, logged); off when unset. */
  metricsPort: z.coerce.number().int().min(0).max(65535).optional(),
  metricsHost: z.string().default('0.0.0.0'),
});

export type AgentConfig = Readonly<
  z.infer<typeof schema> & {
    /** Speech recognition (TRANSCRIBE_*, MODELS_DIR, WHISPER_MODEL_DIR, POCKETSPHINX_*). */
    transcriber: Readonly<Omit<TranscriberConfig, 'workDir'>>;
    /** A chat model that picks the shorts (HIGHLIGHT_API_*); null: the local selector. */
    highlightApi: Readonly<HighlightApiConfig> | null;
  }
>;

/** Where each setting comes from, so a start-up error names the variable to fix. */
const ENV = {
  coordinator: 'COORDINATOR_GRPC',
  clusterToken: 'CLUSTER_TOKEN',
  name: 'AGENT_NAME',
  maxConcurrentTasks: 'MAX_CONCURRENT_TASKS',
  workDir: 'AGENT_WORK_DIR',
  objectCacheBytes: 'AGENT_OBJECT_CACHE_BYTES',
  taskTimeLimitsSec: 'TASK_TIME_LIMITS',
  maxSourcePixels: 'MAX_SOURCE_PIXELS',
  maxSourceFps: 'MAX_SOURCE_FPS',
  taskTypes: 'AGENT_TASK_TYPES',
  tlsCaPath: 'GRPC_TLS_CA',
  grpcInsecure: 'GRPC_INSECURE',
  fetchAllowlist: 'FETCH_ALLOWLIST',
  ytDlpPath: 'YT_DLP_PATH',
  transcribeConcurrency: 'TRANSCRIBE_CONCURRENCY',
  leaseWaitMs: 'AGENT_LEASE_WAIT_MS',
  faceDetector: 'FACE_DETECTOR',
  faceDetectorModel: 'FACE_DETECTOR_MODEL',
  logLevel: 'LOG_LEVEL',
  metricsPort: 'AGENT_METRICS_PORT',
  metricsHost: 'AGENT_METRICS_HOST',
} as const;

export function loadAgentConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const pick = (name: string) => (env[name] === '' ? undefined : env[name]);
  const tools = chooseMediaTools(env);
  const fromEnv = Object.fromEntries(Object.entries(ENV).map(([key, name]) => [key, pick(name)]));
  const parsed = schema.safeParse({
    ...fromEnv,
    ffmpegPath: tools.ffmpegPath,
    ffprobePath: tools.ffprobePath,
    mediaToolsSource: tools.source,
  });
  if (!parsed.success) {
    throw new Error(
      'invalid agent configuration: ' +
        parsed.error.issues.map((i) => `${ENV[i.path[0] as keyof typeof ENV] ?? i.path.join('.')}: ${i.message}`).join('; '),
    );
  }
  const { coordinator, tlsCaPath, grpcInsecure } = parsed.data;
  if (!tlsCaPath && !grpcInsecure && !isLoopbackHost(grpcTargetHost(coordinator))) {
    throw new Error(
      `invalid agent configuration: refusing plain-text gRPC to ${coordinator}, which is not on this host: ` +
        "set GRPC_TLS_CA to the coordinator's certificate (or its CA), or GRPC_INSECURE=1 if the network in between is trusted",
    );
  }
  const highlightApi = highlightApiFromEnv(env);
  return Object.freeze({
    ...parsed.data,
    transcriber: Object.freeze(transcriberConfigFromEnv(env, { concurrency: parsed.data.transcribeConcurrency })),
    highlightApi: highlightApi ? Object.freeze(highlightApi) : null,
  });
}
