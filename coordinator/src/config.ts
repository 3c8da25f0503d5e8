import { z } from 'zod';
import { AppError } from './errors.js';
import { loadSocialConfig, type SocialConfig } from './social/config.js';
import type { TaskType } from '@shorts/common/tasks';
import { parseTaskTimeLimits } from '@shorts/common/tasks/contracts';
import { envFlag } from '@shorts/common/env-flag';
import { isLoopbackHost } from '@shorts/common/net/loopback';
import { parseTrustProxy, type TrustProxy } from './api/client-address.js';
import { parseCorsOrigins } from './api/cors.js';

// One typed config for the coordinator: defaults, then environment, validated and frozen at start.
const schema = z.object({
  port: z.coerce.number().int().min(0).max(65535).default(3000),
  host: z.string().default('0.0.0.0'),
  grpcPort: z.coerce.number().int().min(0).max(65535).default(50051),
  /** Default: all interfaces when TLS is configured, else loopback only (see grpcExposure). */
  grpcHost: z.string().optional(),
  /** Plain-text gRPC on a non-loopback address: the cluster token would cross the network readable. */
  grpcInsecure: envFlag(false),
  /** Without one, an embedded Postgres is started with its data under dataDir. */
  databaseUrl: z.string().url().optional(),
  embeddedPostgresPort: z.coerce.number().int().default(54329),
  dataDir: z.string().default('./data'),
  /** Where clients and agents reach the HTTP API; signed object URLs are built from it. */
  publicUrl: z.string().url().optional(),
  clusterToken: z.string().min(16).optional(),
  jwtSecret: z.string().min(32).optional(),
  urlSigningSecret: z.string().min(32).optional(),
  tlsCertPath: z.string().optional(),
  tlsKeyPath: z.string().optional(),
  storage: z.enum(['local', 's3']).default('local'),
  s3Endpoint: z.string().optional(),
  s3Region: z.string().default('us-east-1'),
  s3Bucket: z.string().optional(),
  s3AccessKeyId: z.string().optional(),
  s3SecretAccessKey: z.string().optional(),
  s3ForcePathStyle: envFlag(true),
  fetchAllowlist: z.string().default(''),
  bodyLimitBytes: z.coerce.number().int().positive().default(1_000_000),
  leaseTtlMs: z.coerce.number().int().positive().default(30_000),
  leaseWaitMs: z.coerce.number().int().positive().default(25_000),
  taskMaxAttempts: z.coerce.number().int().positive().default(3),
  watchdogIntervalMs: z.coerce.number().int().positive().default(5_000),
  /** A task preferring a capability (NVENC, CUDA) waits this long for a connected agent that has it and a free slot. */
  placementGraceMs: z.coerce.number().int().min(0).default(5_000),
  /** The first queued task of a job that reads its source waits at most this long for a free agent
   *  that holds the source (tasks/locality.ts): a free agent is in a long-poll and takes it within
   *  milliseconds; this covers one between its calls. 0: no hold. */
  localityHoldMs: z.coerce.number().int().min(0).default(2_000),
  /** Work queued this long with no connected agent able to run it says so in the API and the log. */
  waitingNoticeMs: z.coerce.number().int().min(0).default(30_000),
  /** Work whose required capabilities no connected agent of its type has fails after this long. */
  unmetNeedsFailMs: z.coerce.number().int().min(0).default(120_000),
  /** The agents' wall-clock limits (TASK_TIME_LIMITS, same format): a task leased longer than its
   *  limit plus a grace is taken back from its agent, which should have stopped it. */
  taskTimeLimits: z
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
  /** A source at least this long is analysed in time ranges, each by its own child task (issue 22);
   *  0 never splits. */
  analysisRangeMinSec: z.coerce.number().min(0).default(600),
  /** The most a range spans: runs of the transcriber's whole speech spans up to this long. */
  analysisRangeSec: z.coerce.number().positive().default(300),
  /** Credits per US dollar of the price table. */
  creditsPerDollar: z.coerce.number().positive().default(1),
  signedUrlTtlSec: z.coerce.number().int().positive().default(3600),
  /** The most bytes an agent may store as one video it made (a render, a short's crop clip); a source
   *  is held to the job's download limit and a thumbnail to 20 MB. */
  agentUploadMaxBytes: z.coerce.number().int().positive().max(20_000_000_000).default(4_000_000_000),
  /** First webhook retry delay; later ones back off exponentially (6 retries span about an hour). */
  webhookRetryDelaySec: z.coerce.number().int().positive().default(60),
  /** One webhook attempt's limit; a receiver slower than this is retried like one that is down. */
  webhookTimeoutMs: z.coerce.number().int().positive().default(10_000),
  /** Webhook attempts in flight at once per coordinator. */
  webhookConcurrency: z.coerce.number().int().positive().max(1000).default(16),
  /** Of those, the most one organization's events hold: a receiver that stalls every request
   *  delays only its own organization's events beyond this. */
  webhookConcurrencyPerOrganization: z.coerce.number().int().positive().default(4),
  /** Background timers off (tests drive ticks themselves). */
  timers: envFlag(true),
  /** Requests a minute on the file routes for free,starter,pro,business; 0 = unlimited. */
  rateLimitFilesPerMinute: z
    .string()
    .default('600,600,1200,3000')
    .refine((v) => /^\s*\d+\s*(,\s*\d+\s*){3}$/.test(v), 'four non-negative integers: free,starter,pro,business'),
  /** Jobs created or retried a minute per organization for free,starter,pro,business; 0 = unlimited. */
  rateLimitJobsPerMinute: z
    .string()
    .default('30,60,120,300')
    .refine((v) => /^\s*\d+\s*(,\s*\d+\s*){3}$/.test(v), 'four non-negative integers: free,starter,pro,business'),
  /** Requests a minute on the social routes for API-key callers; 0 = unlimited. */
  rateLimitSocialPerMinute: z.coerce.number().int().min(0).default(300),
  /** A studio session unused this long ends. Default: 30 min when PUBLIC_URL is https (a deployment),
   *  else 4 h (a laptop over http: a working session, not overnight). */
  sessionIdleTimeoutSec: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .optional(),
  /** A studio session ends this long after sign-in however much it is used. */
  sessionAbsoluteTimeoutSec: z.coerce
    .number()
    .int()
    .min(60)
    .max(30 * 86_400)
    .default(12 * 3600),
  /** Wall-clock limit for drawing an imported SVG watermark (in a child process). */
  svgRasterTimeoutMs: z.coerce.number().int().positive().default(10_000),
  /** How long an upload's writer holds its lock without renewing it: after a coordinator dies
   *  mid-PATCH, the upload can be resumed through another one after at most this long. */
  uploadWriterLeaseMs: z.coerce.number().int().min(1000).default(15_000),
  /** Renders one organization may have queued or running at once; 429 beyond. */
  renderActiveLimit: z.coerce.number().int().positive().default(20),
  /** A render at least this long (seconds; 0: never) is cut into chunks rendered by several agents
   *  at once (issue 22), when the farm has at least two free render slots. Two of the shortest
   *  chunks: from there a split pays its fixed cost (docs/leasing.md, "Renders in chunks"). */
  renderChunkMinSec: z.coerce.number().min(0).default(16),
  /** The shortest chunk (seconds): a render makes at most its length / this many chunks. A chunk's
   *  fixed cost (its lease, source, graph set-up, share of the join) is under a fifth of its work
   *  from here at 1080x1920 (bench/chunk-cost.ts). */
  renderChunkSec: z.coerce.number().positive().default(8),
  /** Cut a split render's chunks by each agent's measured speed (renders/render-speeds.ts); off,
   *  chunks are cut evenly (the first less its sound). */
  renderChunkBySpeed: envFlag(true),
  /** Which proxies' X-Forwarded-* headers count: a number of hops, or their addresses (api/client-address.ts). */
  trustProxy: z
    .string()
    .optional()
    .transform((text, ctx): TrustProxy => {
      try {
        return parseTrustProxy(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Browser origins (scheme://host[:port]) whose pages may call the API cross-origin (api/cors.ts); none by default. */
  corsOrigins: z
    .string()
    .default('')
    .transform((text, ctx): string[] => {
      try {
        return parseCorsOrigins(text);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  /** Password hashes (scrypt, on libuv's thread pool) one process runs at once for sign-ins. */
  signInHashConcurrency: z.coerce.number().int().min(1).max(64).default(2),
  /** Sign-ins that may wait for one of those; further ones are answered 503 at once. */
  signInHashQueue: z.coerce.number().int().min(0).max(10_000).default(64),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type CoordinatorConfig = Readonly<
  Omit<z.infer<typeof schema>, 'grpcHost' | 'sessionIdleTimeoutSec'> & {
    grpcHost: string;
    sessionIdleTimeoutSec: number;
    social: Readonly<SocialConfig>;
  }
>;

/** Session idle timeouts when SESSION_IDLE_TIMEOUT_SEC is unset: production-like (https) and local. */
export const DEFAULT_SESSION_IDLE_SEC = { https: 30 * 60, http: 4 * 3600 } as const;

/**
 * Where gRPC listens, and whether that is allowed: TLS anywhere; plain text only on loopback (the
 * one-machine `npm start`) unless GRPC_INSECURE=1 says the network in between is trusted.
 */
function grpcExposure(c: z.infer<typeof schema>): { host: string } | { problem: string } {
  const tls = Boolean(c.tlsCertPath && c.tlsKeyPath);
  const host = c.grpcHost ?? (tls ? '0.0.0.0' : '127.0.0.1');
  if (tls || c.grpcInsecure || isLoopbackHost(host)) return { host };
  return {
    problem:
      `refusing to serve the agent protocol in plain text on ${host}: set GRPC_TLS_CERT and GRPC_TLS_KEY, ` +
      'bind GRPC_HOST to loopback, or set GRPC_INSECURE=1 if the network between coordinator and agents is trusted',
  };
}

/**
 * The examples' placeholders (`change-me…` in deploy/farm.env.example, `CHANGE_ME…` in
 * deploy/k8s/secrets.yaml). A copy of an example started without filling it in would sign sessions
 * and file URLs with a secret anyone can read in the repository, so it is refused, not warned about.
 */
const PLACEHOLDER = /change[\s_-]*me/i;
const SECRET_KEYS = ['clusterToken', 'jwtSecret', 'urlSigningSecret', 's3AccessKeyId', 's3SecretAccessKey'] as const;

function placeholderSecrets(c: z.infer<typeof schema>): string[] {
  const found: string[] = SECRET_KEYS.filter((key) => PLACEHOLDER.test(c[key] ?? '')).map((key) => ENV[key]);
  if (c.databaseUrl && PLACEHOLDER.test(decodeURIComponent(new URL(c.databaseUrl).password))) found.push('DATABASE_URL (its password)');
  return found;
}

const ENV: Record<keyof z.infer<typeof schema>, string> = {
  port: 'PORT',
  host: 'HOST',
  grpcPort: 'GRPC_PORT',
  grpcHost: 'GRPC_HOST',
  databaseUrl: 'DATABASE_URL',
  embeddedPostgresPort: 'EMBEDDED_PG_PORT',
  dataDir: 'DATA_DIR',
  publicUrl: 'PUBLIC_URL',
  clusterToken: 'CLUSTER_TOKEN',
  jwtSecret: 'JWT_SECRET',
  urlSigningSecret: 'URL_SIGNING_SECRET',
  grpcInsecure: 'GRPC_INSECURE',
  tlsCertPath: 'GRPC_TLS_CERT',
  tlsKeyPath: 'GRPC_TLS_KEY',
  storage: 'STORAGE',
  s3Endpoint: 'S3_ENDPOINT',
  s3Region: 'S3_REGION',
  s3Bucket: 'S3_BUCKET',
  s3AccessKeyId: 'S3_ACCESS_KEY_ID',
  s3SecretAccessKey: 'S3_SECRET_ACCESS_KEY',
  s3ForcePathStyle: 'S3_FORCE_PATH_STYLE',
  fetchAllowlist: 'FETCH_ALLOWLIST',
  bodyLimitBytes: 'BODY_LIMIT_BYTES',
  leaseTtlMs: 'LEASE_TTL_MS',
  leaseWaitMs: 'LEASE_WAIT_MS',
  taskMaxAttempts: 'TASK_MAX_ATTEMPTS',
  watchdogIntervalMs: 'WATCHDOG_INTERVAL_MS',
  placementGraceMs: 'PLACEMENT_GRACE_MS',
  localityHoldMs: 'LOCALITY_HOLD_MS',
  waitingNoticeMs: 'WAITING_NOTICE_MS',
  unmetNeedsFailMs: 'UNMET_NEEDS_FAIL_MS',
  taskTimeLimits: 'TASK_TIME_LIMITS',
  analysisRangeMinSec: 'ANALYSIS_RANGE_MIN_SEC',
  analysisRangeSec: 'ANALYSIS_RANGE_SEC',
  creditsPerDollar: 'CREDITS_PER_DOLLAR',
  signedUrlTtlSec: 'SIGNED_URL_TTL_SEC',
  agentUploadMaxBytes: 'AGENT_UPLOAD_MAX_BYTES',
  webhookRetryDelaySec: 'WEBHOOK_RETRY_DELAY_SEC',
  webhookTimeoutMs: 'WEBHOOK_TIMEOUT_MS',
  webhookConcurrency: 'WEBHOOK_CONCURRENCY',
  webhookConcurrencyPerOrganization: 'WEBHOOK_CONCURRENCY_PER_ORGANIZATION',
  timers: 'TIMERS',
  rateLimitFilesPerMinute: 'RATE_LIMIT_FILES_PER_MINUTE',
  rateLimitJobsPerMinute: 'RATE_LIMIT_JOBS_PER_MINUTE',
  rateLimitSocialPerMinute: 'RATE_LIMIT_SOCIAL_PER_MINUTE',
  renderActiveLimit: 'RENDER_ACTIVE_LIMIT',
  renderChunkMinSec: 'RENDER_CHUNK_MIN_SEC',
  renderChunkSec: 'RENDER_CHUNK_SEC',
  renderChunkBySpeed: 'RENDER_CHUNK_BY_SPEED',
  svgRasterTimeoutMs: 'SVG_RASTER_TIMEOUT_MS',
  uploadWriterLeaseMs: 'UPLOAD_WRITER_LEASE_MS',
  logLevel: 'LOG_LEVEL',
  sessionIdleTimeoutSec: 'SESSION_IDLE_TIMEOUT_SEC',
  sessionAbsoluteTimeoutSec: 'SESSION_ABSOLUTE_TIMEOUT_SEC',
  trustProxy: 'TRUST_PROXY',
  signInHashConcurrency: 'SIGN_IN_HASH_CONCURRENCY',
  signInHashQueue: 'SIGN_IN_HASH_QUEUE',
  corsOrigins: 'CORS_ORIGINS',
};

/** Builds the config from environment variables, with explicit overrides (tests) winning. Read
 *  once at start; the frozen object is passed down. */
export function loadConfig(
  { social, ...overrides }: Partial<z.input<typeof schema>> & { social?: SocialConfig } = {},
  env: NodeJS.ProcessEnv = process.env,
): CoordinatorConfig {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = schema.safeParse({ ...raw, ...overrides });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${ENV[i.path[0] as keyof typeof ENV] ?? i.path.join('.')}: ${i.message}`);
    throw new AppError(500, 'Invalid configuration', issues.join('; '));
  }
  const placeholders = placeholderSecrets(parsed.data);
  if (placeholders.length) {
    throw new AppError(
      500,
      'Invalid configuration',
      `${placeholders.join(', ')}: still the placeholder from the example configuration; ` + 'set a random value (openssl rand -hex 32)',
    );
  }
  const grpc = grpcExposure(parsed.data);
  if ('problem' in grpc) throw new AppError(500, 'Invalid configuration', `GRPC_HOST: ${grpc.problem}`);
  const https = parsed.data.publicUrl?.startsWith('https:') ?? false;
  const sessionIdleTimeoutSec =
    parsed.data.sessionIdleTimeoutSec ??
    Math.min(DEFAULT_SESSION_IDLE_SEC[https ? 'https' : 'http'], parsed.data.sessionAbsoluteTimeoutSec);
  if (sessionIdleTimeoutSec > parsed.data.sessionAbsoluteTimeoutSec) {
    throw new AppError(500, 'Invalid configuration', 'SESSION_IDLE_TIMEOUT_SEC: must not be longer than SESSION_ABSOLUTE_TIMEOUT_SEC');
  }
  return Object.freeze({
    ...parsed.data,
    grpcHost: grpc.host,
    sessionIdleTimeoutSec,
    social: Object.freeze(social ?? loadSocialConfig(env)),
  });
}
