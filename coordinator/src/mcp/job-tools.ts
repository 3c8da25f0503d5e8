import { z } from 'zod';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { createJobSchema } from '../jobs/job-input.js';
import { answer, enc, idempotencyKey, jobId, keyHeader, requestBody, type McpTools } from './tool-common.js';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The longest one wait_for_job call blocks; a client wanting longer calls it again. */
export const MAX_WAIT_SEC = 600;
const DEFAULT_WAIT_SEC = 120;

/** create_job, get_job and wait_for_job. */
export function registerJobTools(tools: McpTools): void {
  tools.server.registerTool(
    'create_job',
    {
      title: 'Create a shorts job',
      description:
        'POST /api/jobs: analyse a video (a YouTube id or URL in `youtubeVideoId`, a public video URL in `fileUrl`, or `sourceJobId`) into shorts, picked automatically or given in `options.predefinedShorts`. `functionName` is always "VideoShorts". Credits are reserved now. Answers the job id; follow it with wait_for_job.',
      inputSchema: createJobSchema.omit({ organizationId: true }).extend({ idempotencyKey }),
    },
    (args) =>
      answer(async () => {
        const created = (await tools.api.call('POST', '/api/jobs', {
          body: requestBody(args),
          headers: keyHeader(args.idempotencyKey),
        })) as { id: string };
        return { ...created, links: { job: tools.link(`/api/jobs/${enc(created.id)}`) } };
      }),
  );

  tools.server.registerTool(
    'get_job',
    {
      title: 'Get a job',
      description:
        'GET /api/jobs/{jobId}: status (PROCESSING, COMPLETED, FAILED), progress (5, 15, 30, 60, 80, 100), `stage`, and once COMPLETED its shorts, cost and `shortsRevision`.',
      inputSchema: z.object({ jobId }),
    },
    (args) => answer(async () => (await tools.api.call('GET', `/api/jobs/${enc(args.jobId)}`)) as Record<string, unknown>),
  );

  tools.server.registerTool(
    'wait_for_job',
    {
      title: 'Wait for a job to finish',
      description: `Reads the job until it is COMPLETED or FAILED, at most \`timeoutSec\` (default ${DEFAULT_WAIT_SEC}, at most ${MAX_WAIT_SEC}), sending MCP progress notifications (progress out of 100, the stage as message) when the call carries a progressToken. Answers the job as get_job does, with \`settled\`: false when the time ran out first (call it again).`,
      inputSchema: z.object({
        jobId,
        timeoutSec: z.number().int().min(1).max(MAX_WAIT_SEC).optional().describe(`Default ${DEFAULT_WAIT_SEC}`),
      }),
    },
    (args, extra) => answer(() => waitForJob(tools, args.jobId, (args.timeoutSec ?? DEFAULT_WAIT_SEC) * 1000, extra)),
  );
}

async function waitForJob(tools: McpTools, id: string, timeoutMs: number, extra: Extra): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  const token = extra._meta?.progressToken;
  // MCP wants each notification's progress above the last: a new stage message at the same value waits.
  let lastSent = -1;
  for (;;) {
    const job = (await tools.api.call('GET', `/api/jobs/${enc(id)}`)) as Record<string, unknown>;
    const progress = typeof job.progress === 'number' ? job.progress : 0;
    const message = typeof job.stage === 'string' ? job.stage : String(job.status);
    if (token !== undefined && progress > lastSent) {
      lastSent = progress;
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, total: 100, message } });
    }
    const settled = job.status === 'COMPLETED' || job.status === 'FAILED';
    const left = deadline - Date.now();
    if (settled || left <= 0 || extra.signal.aborted) return { ...job, settled };
    await new Promise((resolve) => setTimeout(resolve, Math.min(tools.pollMs, left)));
  }
}
