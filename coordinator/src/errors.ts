import { InvalidInput } from '@shorts/common/invalid-input';

/**
 * Every error body's `code`: stable, machine-readable, documented in docs/api.md ("Error codes").
 * `error` and `message` stay as the contract words them; `code` is what a client branches on.
 */
export const ERROR_CODES = {
  invalid_input: 'The request (body, query, path or a header) is malformed or fails validation',
  unauthorized: 'Missing, wrong or expired credentials',
  forbidden: 'The caller may not do this (role, organization, session or CSRF check)',
  not_found: 'No such route or resource (or one of another organization)',
  method_not_allowed: 'The route exists, but not with this method',
  conflict: 'The resource is in a state that refuses this now (still processing, edited meanwhile)',
  gone: 'The resource existed and has expired',
  payload_too_large: 'The body or the declared upload is larger than allowed',
  unsupported_media_type: 'The body has the wrong content type',
  precondition_failed: 'A required protocol header is missing or wrong',
  rate_limited: 'Too many requests; retry after Retry-After seconds',
  over_plan_limit: "The organization's plan does not include this (size, feature, file size)",
  insufficient_credits: 'Not enough credits for this job',
  storage_full: "The organization's storage quota has no room for this",
  phone_verification_required: 'The user must verify a phone number first',
  idempotency_key_invalid: 'The Idempotency-Key header is empty, too long or not printable ASCII',
  idempotency_key_reused: 'The Idempotency-Key was used with another request body or route in the last 24 h',
  idempotency_key_in_flight: 'A request with this Idempotency-Key is still being processed',
  upstream_failed: 'A provider this request depends on failed',
  service_unavailable: 'Shedding load or briefly unable to serve; retry after Retry-After seconds',
  internal_error: 'An unexpected server fault',
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'invalid_input',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  410: 'gone',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'invalid_input',
  429: 'rate_limited',
  502: 'upstream_failed',
  503: 'service_unavailable',
};

// `error` values that already name one condition precisely.
const CODE_BY_ERROR: Record<string, ErrorCode> = {
  fullStorage: 'storage_full',
  noEnoughCredit: 'insufficient_credits',
  'Phone verification required': 'phone_verification_required',
};

/** The `code` an answer of this status and `error` carries when its thrower named none. */
export function errorCodeOf(status: number, error?: string): ErrorCode {
  return (
    (error !== undefined ? CODE_BY_ERROR[error] : undefined) ??
    CODE_BY_STATUS[status] ??
    (status >= 500 ? 'internal_error' : 'invalid_input')
  );
}

// The coordinator's one error type. Transport edges (Koa, gRPC) map it to a status; everything else
// just throws it. Common code, shared with the agent, throws its own InvalidInput instead: appErrorOf
// reads it as the 400 it answers.
export class AppError extends Error {
  readonly status: number;
  readonly error: string;
  readonly extra: Record<string, unknown>;
  code: ErrorCode;

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
    this.code = errorCodeOf(status, error);
  }

  /** Names a `code` more precise than the status's own (over_plan_limit for a 403, say). */
  withCode(code: ErrorCode): this {
    this.code = code;
    return this;
  }

  toBody(): Record<string, unknown> {
    return { error: this.error, message: this.message, code: this.code, ...this.extra };
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
