import { z } from 'zod';
import { AppError } from '../../common/src/errors.js';

// One typed config for the coordinator: defaults, then environment, validated and frozen at start.
const schema = z.object({
  port: z.coerce.number().int().min(0).max(65535).default(3000),
  host: z.string().default('0.0.0.0'),
  grpcPort: z.coerce.number().int().min(0).max(65535).default(50051),
  grpcHost: z.string().default('0.0.0.0'),
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
  s3ForcePathStyle: z.coerce.boolean().default(true),
  fetchAllowlist: z.string().default(''),
  bodyLimitBytes: z.coerce.number().int().positive().default(1_000_000),
  leaseTtlMs: z.coerce.number().int().positive().default(30_000),
  leaseWaitMs: z.coerce.number().int().positive().default(25_000),
  taskMaxAttempts: z.coerce.number().int().positive().default(3),
  watchdogIntervalMs: z.coerce.number().int().positive().default(5_000),
  /** Credits per US dollar of the price table. */
  creditsPerDollar: z.coerce.number().positive().default(1),
  signedUrlTtlSec: z.coerce.number().int().positive().default(3600),
  /** First webhook retry delay; later ones back off exponentially (6 retries span about an hour). */
  webhookRetryDelaySec: z.coerce.number().int().positive().default(60),
  /** Background timers off (tests drive ticks themselves). */
  timers: z.coerce.boolean().default(true),
  /** Requests a minute on the file routes for free,starter,pro,business; 0 = unlimited. */
  rateLimitFilesPerMinute: z.string().default('600,600,1200,3000').refine((v) => /^\s*\d+\s*(,\s*\d+\s*){3}$/.test(v), 'four non-negative integers: free,starter,pro,business'),
  /** Requests a minute on the social routes for API-key callers; 0 = unlimited. */
  rateLimitSocialPerMinute: z.coerce.number().int().min(0).default(300),
  logLevel: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
});

export type CoordinatorConfig = Readonly<z.infer<typeof schema>>;

const ENV: Record<keyof z.infer<typeof schema>, string> = {
  port: 'PORT', host: 'HOST', grpcPort: 'GRPC_PORT', grpcHost: 'GRPC_HOST', databaseUrl: 'DATABASE_URL',
  embeddedPostgresPort: 'EMBEDDED_PG_PORT', dataDir: 'DATA_DIR', publicUrl: 'PUBLIC_URL',
  clusterToken: 'CLUSTER_TOKEN', jwtSecret: 'JWT_SECRET', urlSigningSecret: 'URL_SIGNING_SECRET',
  tlsCertPath: 'GRPC_TLS_CERT', tlsKeyPath: 'GRPC_TLS_KEY', storage: 'STORAGE', s3Endpoint: 'S3_ENDPOINT',
  s3Region: 'S3_REGION', s3Bucket: 'S3_BUCKET', s3AccessKeyId: 'S3_ACCESS_KEY_ID',
  s3SecretAccessKey: 'S3_SECRET_ACCESS_KEY', s3ForcePathStyle: 'S3_FORCE_PATH_STYLE',
  fetchAllowlist: 'FETCH_ALLOWLIST', bodyLimitBytes: 'BODY_LIMIT_BYTES', leaseTtlMs: 'LEASE_TTL_MS',
  leaseWaitMs: 'LEASE_WAIT_MS', taskMaxAttempts: 'TASK_MAX_ATTEMPTS', watchdogIntervalMs: 'WATCHDOG_INTERVAL_MS',
  creditsPerDollar: 'CREDITS_PER_DOLLAR', signedUrlTtlSec: 'SIGNED_URL_TTL_SEC', webhookRetryDelaySec: 'WEBHOOK_RETRY_DELAY_SEC', timers: 'TIMERS',
  rateLimitFilesPerMinute: 'RATE_LIMIT_FILES_PER_MINUTE', rateLimitSocialPerMinute: 'RATE_LIMIT_SOCIAL_PER_MINUTE',
  logLevel: 'LOG_LEVEL',
};

/** Builds the config from environment variables, with explicit overrides (tests) winning. */
export function loadConfig(overrides: Partial<z.input<typeof schema>> = {}, env: NodeJS.ProcessEnv = process.env): CoordinatorConfig {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(ENV)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[key] = key === 'timers' || key === 's3ForcePathStyle' ? value !== 'false' && value !== '0' : value;
  }
  const parsed = schema.safeParse({ ...raw, ...overrides });
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${ENV[i.path[0] as keyof typeof ENV] ?? i.path.join('.')}: ${i.message}`);
    throw new AppError(500, 'Invalid configuration', issues.join('; '));
  }
  return Object.freeze(parsed.data);
}
