import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import ffmpegInstaller from '@ffmpeg-installer/ffmpeg';
import ffprobeInstaller from '@ffprobe-installer/ffprobe';
import { TASK_TYPES } from '../../common/src/tasks.js';

// One typed config for the agent: environment variables with defaults, validated and frozen at start.
const schema = z.object({
  coordinator: z.string().default('127.0.0.1:50051'),
  clusterToken: z.string().min(16),
  name: z.string().default(os.hostname()),
  maxConcurrentTasks: z.coerce.number().int().min(1).max(64).default(Math.max(1, Math.floor(os.cpus().length / 2))),
  workDir: z.string().default(path.join(os.tmpdir(), 'shorts-agent')),
  ffmpegPath: z.string().default(ffmpegInstaller.path),
  ffprobePath: z.string().default(ffprobeInstaller.path),
  taskTypes: z.string().default(TASK_TYPES.join(',')).transform((s) => s.split(',').map((t) => t.trim()).filter(Boolean)),
  tlsCaPath: z.string().optional(),
  fetchAllowlist: z.string().default(''),
  ytDlpPath: z.string().default('yt-dlp'),
  /** CPU threads each transcription may use. */
  transcribeConcurrency: z.coerce.number().int().min(1).default(os.cpus().length),
  leaseWaitMs: z.coerce.number().int().positive().default(20_000),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type AgentConfig = Readonly<z.infer<typeof schema>>;

export function loadAgentConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const pick = (name: string) => (env[name] === '' ? undefined : env[name]);
  const parsed = schema.safeParse({
    coordinator: pick('COORDINATOR_GRPC'),
    clusterToken: pick('CLUSTER_TOKEN'),
    name: pick('AGENT_NAME'),
    maxConcurrentTasks: pick('MAX_CONCURRENT_TASKS'),
    workDir: pick('AGENT_WORK_DIR'),
    ffmpegPath: pick('FFMPEG_PATH'),
    ffprobePath: pick('FFPROBE_PATH'),
    taskTypes: pick('AGENT_TASK_TYPES'),
    tlsCaPath: pick('GRPC_TLS_CA'),
    fetchAllowlist: pick('FETCH_ALLOWLIST'),
    ytDlpPath: pick('YT_DLP_PATH'),
    transcribeConcurrency: pick('TRANSCRIBE_CONCURRENCY'),
    leaseWaitMs: pick('AGENT_LEASE_WAIT_MS'),
    logLevel: pick('LOG_LEVEL'),
  });
  if (!parsed.success) {
    throw new Error('invalid agent configuration: ' + parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  }
  return Object.freeze(parsed.data);
}
