import http from 'node:http';
import path from 'node:path';
import Koa from 'koa';
import type * as grpc from '@grpc/grpc-js';
import PgBoss from 'pg-boss';
import { createLogger, type Logger } from '@shorts/common/logger';
import type { CoordinatorConfig } from './config.js';
import { Db } from './db/db.js';
import type { Coordinator } from './context.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { migrate } from './db/migrate.js';
import { normaliseStoredEmails } from './tenancy/email.js';
import { loadSecrets } from './secrets.js';
import { createMetrics } from './metrics/metrics.js';
import { readFarmState } from './metrics/farm-state.js';
import { TaskQueue } from './tasks/task-queue.js';
import { applyTrustProxy } from './api/client-address.js';
import { SignInGuard } from './tenancy/sign-in-guard.js';
import { AgentRegistry, startGrpcServer } from './cluster/agent-service.js';
import { createTokenSigner } from './tenancy/auth.js';
import { Api, jsonBody } from './api/http.js';
import { errorMiddleware } from './api/errors.js';
import { requestIdMiddleware } from './api/request-id.js';
import { corsMiddleware } from './api/cors.js';
import { IdempotencyKeys } from './api/idempotency.js';
import { authenticateAndCharge } from './api/auth-context.js';
import { registerSystemRoutes } from './api/system.js';
import { registerDomains } from './domains.js';
import { createObjectStore, type ObjectStoreConfig } from './storage/index.js';
import { createObjectUrls } from './storage/urls.js';
import { createObjectRoutes } from './storage/object-routes.js';
import { createUploadGate } from './files/task-uploads.js';
import { tusRoutes } from './api/tus.js';
import { studioRoutes } from './api/studio.js';
import { captionFontRoutes } from './api/caption-fonts.js';
import { TASK_TYPES } from '@shorts/common/tasks';
import { RateLimiter, parsePlanLimits } from './tenancy/rate-limits.js';
import { mcpRoutes } from './mcp/http-transport.js';

export async function startCoordinator(
  config: CoordinatorConfig,
  log: Logger = createLogger({ service: 'coordinator' }, config.logLevel),
): Promise<Coordinator> {
  // Each part registers its closer as soon as it has started, so a start that fails half-way (a port
  // taken, a bad certificate) stops what it started, pg-boss's pool and the embedded Postgres
  // included, and does not leave them running on their own.
  const closers = new Closers(log);
  try {
    return await startServices(config, log, closers);
  } catch (err) {
    await closers.closeAll();
    throw err;
  }
}

type Closer = () => Promise<void> | void;

/**
 * What stops the coordinator, in two lists run one after the other: first what takes work in (the
 * HTTP and gRPC servers), then everything else, last-started first: timers and domain loops, the task
 * queue, pg-boss, the pool and, last, the embedded Postgres.
 */
class Closers {
  private readonly intake: Closer[] = [];
  private readonly rest: Closer[] = [];
  constructor(private readonly log: Logger) {}

  /** A server that takes work in: stopped before anything else. */
  intakeStarted(fn: Closer): void {
    this.intake.push(fn);
  }

  started(fn: Closer): void {
    this.rest.push(fn);
  }

  async closeAll(): Promise<void> {
    const steps = [...this.intake, ...this.rest.reverse()];
    this.intake.length = 0;
    this.rest.length = 0;
    for (const fn of steps) await Promise.resolve(fn()).catch((err: unknown) => this.log.error('close step failed', { err }));
  }
}

async function startServices(config: CoordinatorConfig, log: Logger, closers: Closers): Promise<Coordinator> {
  const { db, databaseUrl, embedded } = await openDatabase(config, log, closers);
  const boss = new PgBoss({ connectionString: databaseUrl, schema: 'pgboss', supervise: config.timers, schedule: config.timers });
  boss.on('error', (err) => log.error('pg-boss error', { err }));
  closers.started(() => boss.stop({ graceful: false, wait: true, close: true }));
  await boss.start();

  const secrets = await loadSecrets(config.dataDir, {
    clusterToken: config.clusterToken,
    jwtSecret: config.jwtSecret,
    urlSigningSecret: config.urlSigningSecret,
  });
  const metrics = createMetrics(
    () =>
      readFarmState(db, {
        agentSilenceMs: config.leaseTtlMs,
        localStoreRoot: config.storage === 'local' ? config.dataDir : undefined,
      }),
    (err) => log.warn('metrics: could not read the farm state; farm gauges left out of this scrape', { err }),
  );
  const queue = new TaskQueue(
    db,
    {
      leaseTtlMs: config.leaseTtlMs,
      maxAttempts: config.taskMaxAttempts,
      preferGraceMs: config.placementGraceMs,
      localityHoldMs: config.localityHoldMs,
      waitingNoticeMs: config.waitingNoticeMs,
      unmetNeedsFailMs: config.unmetNeedsFailMs,
      timeLimitsSec: config.taskTimeLimits,
    },
    log,
    metrics,
  );
  closers.started(() => queue.stop());
  await queue.start();
  const registry = new AgentRegistry(config.leaseTtlMs);
  const signer = createTokenSigner(secrets.jwtSecret);
  const store = createObjectStore(objectStoreConfig(config));

  const listening = await listenHttp(config);
  const { server, httpUrl } = listening;
  closers.intakeStarted(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const urls = createObjectUrls(store, { publicUrl: httpUrl, secret: secrets.urlSigningSecret, ttlSec: config.signedUrlTtlSec });

  const grpcBound = await startGrpcServer(
    {
      db,
      queue,
      log,
      metrics,
      urls,
      store,
      clusterToken: secrets.clusterToken,
      leaseTtlMs: config.leaseTtlMs,
      leaseWaitMs: config.leaseWaitMs,
      agentUploadMaxBytes: config.agentUploadMaxBytes,
    },
    registry,
    { host: config.grpcHost, port: config.grpcPort, tlsCertPath: config.tlsCertPath, tlsKeyPath: config.tlsKeyPath },
  );
  closers.intakeStarted(() => grpcBound.server.forceShutdown());

  const app: Coordinator = {
    config,
    log,
    db,
    boss,
    metrics,
    queue,
    registry,
    signer,
    secrets,
    store,
    urls,
    httpUrl,
    rateLimiter: createRateLimiter(config, db),
    signInGuard: new SignInGuard(db, config.signInHashConcurrency, config.signInHashQueue),
    grpcAddress: `127.0.0.1:${grpcBound.port}`,
    onClose: (fn) => closers.started(fn),
    close: () => closers.closeAll(),
  };

  listening.serve(await createHttpHandler(app, listening.loopbackUrl));

  if (config.timers) {
    const timer = setInterval(() => {
      queue.tick().catch((err) => log.error('lease watchdog failed', { err }));
    }, config.watchdogIntervalMs);
    closers.started(() => clearInterval(timer));
  }

  log.info('coordinator started', { httpUrl, grpc: app.grpcAddress, storage: config.storage, embeddedPostgres: !!embedded });
  return app;
}

/** The database (an embedded Postgres when DATABASE_URL is not set), migrated, its stored e-mails normalised. */
async function openDatabase(
  config: CoordinatorConfig,
  log: Logger,
  closers: Closers,
): Promise<{ db: Db; databaseUrl: string; embedded: EmbeddedDatabase | undefined }> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.databaseUrl;
  if (!databaseUrl) {
    const started = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort, log);
    closers.started(() => started.stop());
    embedded = started;
    databaseUrl = embedded.url;
  }
  const db = new Db(databaseUrl);
  closers.started(() => db.close());
  const applied = await migrate(db);
  if (applied.length) log.info('migrations applied', { applied });
  const emailsNormalised = await normaliseStoredEmails(db);
  if (emailsNormalised) log.info('stored e-mail addresses normalised', { count: emailsNormalised });
  return { db, databaseUrl, embedded };
}

function objectStoreConfig(config: CoordinatorConfig): ObjectStoreConfig {
  return config.storage === 's3'
    ? {
        kind: 's3',
        endpoint: config.s3Endpoint,
        region: config.s3Region,
        bucket: config.s3Bucket!,
        accessKeyId: config.s3AccessKeyId,
        secretAccessKey: config.s3SecretAccessKey,
        forcePathStyle: config.s3ForcePathStyle,
      }
    : { kind: 'local', root: path.resolve(config.dataDir, 'objects') };
}

function createRateLimiter(config: CoordinatorConfig, db: Db): RateLimiter {
  return new RateLimiter(
    {
      files: parsePlanLimits(config.rateLimitFilesPerMinute),
      jobs: parsePlanLimits(config.rateLimitJobsPerMinute),
      socialApiKey: config.rateLimitSocialPerMinute,
    },
    db,
  );
}

/**
 * The HTTP server, listening before the routes exist: signed URLs embed its port. Until `serve`
 * installs the handler every request is answered 503.
 */
async function listenHttp(
  config: CoordinatorConfig,
): Promise<{ server: http.Server; httpUrl: string; loopbackUrl: string; serve(handler: http.RequestListener): void }> {
  let handle: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as { port: number }).port;
  const httpUrl = config.publicUrl ?? `http://127.0.0.1:${port}`;
  // Where this coordinator reaches its own API (the MCP tools' REST calls): PUBLIC_URL may be a balancer.
  const bound = (server.address() as { address: string }).address;
  const loopbackHost = bound === '0.0.0.0' || bound === '::' ? '127.0.0.1' : bound.includes(':') ? `[${bound}]` : bound;
  const loopbackUrl = `http://${loopbackHost}:${port}`;
  return { server, httpUrl, loopbackUrl, serve: (handler) => (handle = handler) };
}

/** Koa with every middleware and route, and every domain's task handlers registered. */
async function createHttpHandler(app: Coordinator, loopbackUrl: string): Promise<http.RequestListener> {
  const { config, log, db, metrics, queue, store, secrets } = app;
  const koa = new Koa();
  const trustedProxies = applyTrustProxy(koa, config.trustProxy);
  // Errors Koa meets after the answer started (a browser that stops reading a video it seeks in
  // closes the stream early) go to the log, not to stderr; a premature close is the client's choice.
  koa.on('error', (err: NodeJS.ErrnoException) => {
    if (err?.code === 'ERR_STREAM_PREMATURE_CLOSE' || err?.code === 'ECONNRESET' || err?.code === 'EPIPE') return;
    log.warn('http response error', { err });
  });
  const idempotency = new IdempotencyKeys(db, log);
  const api = new Api((ctx) => authenticateAndCharge(app, ctx), idempotency);
  koa.use(requestIdMiddleware());
  koa.use(corsMiddleware(config.corsOrigins));
  if (trustedProxies) koa.use(trustedProxies);
  koa.use(errorMiddleware(log, metrics));
  koa.use(createObjectRoutes({ store, secret: secrets.urlSigningSecret, uploads: createUploadGate(db) }));
  koa.use(captionFontRoutes());
  koa.use(studioRoutes(log));
  koa.use(tusRoutes(app, idempotency));
  koa.use(jsonBody(config.bodyLimitBytes));
  koa.use(mcpRoutes(app, loopbackUrl));
  registerSystemRoutes(api, app);
  await registerDomains(api, app);
  queue.assertHandlers(TASK_TYPES);
  koa.use(api.router.routes());
  koa.use(api.router.allowedMethods());
  // Koa composes its middleware when callback() is called, so it is called once the routes exist.
  // Koa's handler settles every request itself (its errors go to ctx.onerror): its promise never rejects.
  const koaHandle = koa.callback();
  return (req, res) => void koaHandle(req, res);
}

export type GrpcServer = grpc.Server;
