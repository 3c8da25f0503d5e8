import type { Api } from './http.js';
import type { Coordinator } from '../context.js';
import { registerJobCreateRoutes } from './jobs-create.js';
import { registerJobCancelRoute } from './jobs-cancel.js';
import { registerJobDeleteRoute } from './jobs-delete.js';
import { registerJobListRoute } from './jobs-list.js';
import { registerJobRetrieveRoute } from './jobs-retrieve.js';
import { registerJobTranscriptionRoute } from './jobs-transcription.js';
import { registerJobShortRoutes } from './jobs-shorts.js';

/** The jobs API, in this order; each route (or group of related routes) lives in its own jobs-*.ts file. */
export function registerJobRoutes(api: Api, app: Coordinator): void {
  registerJobCreateRoutes(api, app);
  registerJobCancelRoute(api, app);
  registerJobDeleteRoute(api, app);
  registerJobListRoute(api, app);
  registerJobRetrieveRoute(api, app);
  registerJobTranscriptionRoute(api, app);
  registerJobShortRoutes(api, app);
}
