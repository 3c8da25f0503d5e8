import type PgBoss from 'pg-boss';
import type { Logger } from '@shorts/common/logger';
import type { CoordinatorConfig } from './config.js';
import type { Db } from './db/db.js';
import type { Secrets } from './secrets.js';
import type { Metrics } from './metrics/metrics.js';
import type { TaskQueue } from './tasks/task-queue.js';
import type { SignInGuard } from './tenancy/sign-in-guard.js';
import type { AgentRegistry } from './cluster/agent-service.js';
import type { TokenSigner } from './tenancy/auth.js';
import type { ObjectStore } from './storage/object-store.js';
import type { ObjectUrls } from './storage/urls.js';
import type { RateLimiter } from './tenancy/rate-limits.js';

/** Everything a route or domain module may use; built once at start. */
export interface Coordinator {
  config: CoordinatorConfig;
  log: Logger;
  db: Db;
  boss: PgBoss;
  metrics: Metrics;
  queue: TaskQueue;
  registry: AgentRegistry;
  signer: TokenSigner;
  secrets: Secrets;
  store: ObjectStore;
  urls: ObjectUrls;
  rateLimiter: RateLimiter;
  signInGuard: SignInGuard;
  httpUrl: string;
  grpcAddress: string;
  /** Background work other modules add (timers, pg-boss workers). */
  onClose(fn: () => Promise<void> | void): void;
  close(): Promise<void>;
}
