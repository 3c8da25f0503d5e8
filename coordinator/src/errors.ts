import { InvalidInput } from '@shorts/common/invalid-input';

// The coordinator's one error type. Transport edges (Koa, gRPC) map it to a status; everything else
// just throws it. Common code, shared with the agent, throws its own InvalidInput instead: appErrorOf
// reads it as the 400 it answers.
export class AppError extends Error {
  readonly status: number;
  readonly error: string;
  readonly extra: Record<string, unknown>;

  /**
   * @param status HTTP status the API answers with.
   * @param error  the `error` key of the body (contract text where the contract gives one).
   * @param message the `message` key of the body, for a person.
   * @param extra  more top-level body keys (for example `storageInfo`).
   */
  constructor(status: number, error: string, message?: string, extra: Record<string, unknown> = {}) {
    super(message ?? error);
    this.status = status;
    this.error = error;
    this.extra = extra;
  }

  toBody(): Record<string, unknown> {
    return { error: this.error, message: this.message, ...this.extra };
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new AppError(400, 'Bad Request', message, extra);
export const unauthorized = () => new AppError(401, 'Unauthorized', 'Unauthorized');
export const forbidden = (message: string, error = 'Forbidden', extra?: Record<string, unknown>) =>
  new AppError(403, error, message, extra);
export const notFound = (message: string) => new AppError(404, 'Not Found', message);
export const conflict = (message: string) => new AppError(409, 'Conflict', message);

/** 429: the transport edge adds `Retry-After` from `retryAfterSec`. */
export class TooManyRequestsError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super(429, 'Too Many Requests', message);
  }
}

/** 503 for load the process sheds on purpose: the transport edge adds `Retry-After` from `retryAfterSec`. */
export class ServiceBusyError extends AppError {
  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super(503, 'Service Unavailable', message);
  }
}

/** The AppError an error stands for: itself, a common InvalidInput as a 400 Bad Request with its
 *  message, anything else none (an internal error). */
export function appErrorOf(err: unknown): AppError | undefined {
  if (err instanceof AppError) return err;
  if (err instanceof InvalidInput) return badRequest(err.message);
  return undefined;
}
