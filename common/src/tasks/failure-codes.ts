import type { FetchRefusal } from '../net/safe-fetch.js';

// Why a task, or one attempt of it, failed: the codes an agent reports with FailTask (its TaskError's
// code) and those the coordinator decides itself. One list, so both sides and the domains that read
// a code (a render's error code, a cancelled task) agree on the words.
export const TASK_FAILURE_CODES = [
  // The agent's: its task failed on its input or its work.
  'TASK_FAILED',
  'BAD_PAYLOAD',
  'UNSUPPORTED',
  'INTERNAL',
  'NO_SPACE',
  'TIME_LIMIT',
  'CANCELLED',
  'SOURCE_MISSING',
  'SOURCE_READ_FAILED',
  'SOURCE_TOO_LARGE',
  'LENGTH_MISMATCH',
  'NOT_MEDIA',
  'NOT_VIDEO',
  'NO_SPEECH',
  'NO_SHORTS',
  'SHORT_PAST_END',
  'RANGE_PAST_END',
  'DOWNLOAD_FAILED',
  'DOWNLOAD_INVALID_URL',
  'DOWNLOAD_BLOCKED_HOST',
  'DOWNLOAD_TOO_LARGE',
  'DOWNLOAD_TIMEOUT',
  'DOWNLOAD_HTTP_STATUS',
  'DOWNLOAD_TOO_MANY_REDIRECTS',
  'DOWNLOAD_NETWORK',
  'STORE_FAILED',
  'TRANSFER_FAILED',
  'WATERMARK_FORMAT',
  'RENDERING_ERROR',
  // The coordinator's: what it decided about a task (TIME_LIMIT and CANCELLED too).
  'AGENT_LOST',
  'NO_CAPABLE_AGENT',
  'PREPARE_FAILED',
  'CONTRACT_VIOLATION',
  'RESULT_REJECTED',
  /** What the agent reported (progress, facts) could not be stored for a reason a retry would meet again. */
  'REPORT_REJECTED',
  /** A finished task's result the organization's own limits refused (its storage full): the work is done and paid for. */
  'OVER_PLAN_LIMIT',
  /** A domain refused the task on what its agent reported (say, too few credits for the video). */
  'REFUSED',
] as const;
export type TaskFailureCode = (typeof TASK_FAILURE_CODES)[number];

export const isTaskFailureCode = (v: string): v is TaskFailureCode => (TASK_FAILURE_CODES as readonly string[]).includes(v);

/** A refused download's code: DOWNLOAD_ and the refusal (DOWNLOAD_TIMEOUT, DOWNLOAD_BLOCKED_HOST, ...). */
export const downloadFailureCode = (refusal: FetchRefusal): TaskFailureCode =>
  `DOWNLOAD_${refusal.toUpperCase()}` as Uppercase<`DOWNLOAD_${FetchRefusal}`>;
