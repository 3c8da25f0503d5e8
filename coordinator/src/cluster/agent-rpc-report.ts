import type { AgentServiceHandlers } from '@shorts/common/generated/shorts/v1/AgentService';
import { isTaskFailureCode } from '@shorts/common/tasks/failure-codes';
import type { AgentRpcContext } from './agent-rpc.js';

// What an agent reports about a task it holds. Facts and results are read with the task type's
// contract (common/src/tasks/<type>.ts) by the domain; what is not even JSON is refused here the
// same way.
type ReportRpcs = Pick<AgentServiceHandlers, 'ReportProgress' | 'CompleteTask' | 'FailTask' | 'ReleaseTask'>;

export function reportRpcs({ unary, deps, reportJson }: AgentRpcContext): ReportRpcs {
  const { queue } = deps;
  return {
    ReportProgress: unary('ReportProgress', async (req) => {
      const facts = req.facts_json ? await reportJson(req.task_id, req.lease_token, 'facts_json', req.facts_json) : undefined;
      const res = await queue.progress(req.task_id, req.lease_token, req.progress, req.stage || null, req.message, facts);
      return { cancel_requested: res.cancelRequested };
    }),

    CompleteTask: unary('CompleteTask', async (req) => {
      await queue.complete(
        req.task_id,
        req.lease_token,
        await reportJson(req.task_id, req.lease_token, 'result_json', req.result_json || '{}'),
      );
      return {};
    }),

    FailTask: unary('FailTask', async (req) => {
      // A code this coordinator does not know (none of its own agents sends one) is a plain failure.
      const code = req.code ?? '';
      const res = await queue.fail(
        req.task_id,
        req.lease_token,
        req.message || 'task failed',
        req.retryable,
        isTaskFailureCode(code) ? code : 'TASK_FAILED',
      );
      return { will_retry: res.willRetry };
    }),

    ReleaseTask: unary('ReleaseTask', async (req) => {
      await queue.release(req.task_id, req.lease_token, req.reason || 'released by agent');
      return {};
    }),
  };
}
