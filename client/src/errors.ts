/**
 * The client's errors. `SvcError`: the server answered with an error (its catalog body:
 * `{error, code, ...details}`). `SvcRequestError`: no answer to read (timeout, abort, network
 * failure).
 */
import type { HealthInfo, Problem } from './types.js';

/** The server's error codes (its catalog). */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'INPUT_INVALID'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'TENANT_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'READ_ONLY'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'TESTS_FAILED'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  | 'CALL_FAILED'
  | 'TIMEOUT'
  | 'LIMIT_EXCEEDED'
  | 'NOT_READY';

/** The code of an error answer whose body is not a catalog body (e.g. a proxy's HTML page). */
export const UNEXPECTED_ANSWER = 'UNEXPECTED_ANSWER';

/** A failed test of a ruleset (`TESTS_FAILED`). */
export interface TestFailure {
  name: string;
  expected: { code: string; message?: string; output?: Record<string, unknown>; path?: string };
  actual: { code: string; message: string; output: Record<string, unknown>; path: string } | { error: string; code: string };
}

/**
 * The detail fields of the catalog body, by the codes that carry them. Every field is
 * optional: only the codes named carry it.
 */
export interface ErrorDetails {
  /** BAD_REQUEST (ruleset validation, tests, tenant records, strict analysis), INPUT_INVALID. */
  problems?: Problem[];
  /** TESTS_FAILED. */
  failures?: TestFailure[];
  /** BAD_REQUEST from an `/eval` parse error: 0-based character offset. */
  position?: number;
  /** TIMEOUT: the timeout that elapsed. */
  timeout_ms?: number | null;
  /** CALL_FAILED: the call step. */
  step?: string;
  /** LIMIT_EXCEEDED from the answer bound. */
  max_response_bytes?: number;
  /** RATE_LIMITED: when to retry; null when waiting cannot help (a batch larger than the burst). */
  retry_after_ms?: number | null;
  /** FORBIDDEN from authorization. */
  missing_permission?: 'execute' | 'read' | 'write' | 'admin';
  /** FORBIDDEN from authorization: the tenant, or `*`. */
  missing_tenant?: string;
  /** READ_ONLY, FORBIDDEN (signature): the human message (`error` is then a short token). */
  message?: string;
  /** READ_ONLY: the writer's address, or null. */
  writer?: string | null;
  /** READ_ONLY. */
  hint?: string;
  /** BAD_REQUEST from a tenant's max_rulesets. */
  max_rulesets?: number;
  /** BAD_REQUEST from max_rulesets; CONFLICT from deleting a tenant that owns rulesets. */
  rulesets?: number;
  [extra: string]: unknown;
}

/** An error answer's body. */
export type ErrorBody = { error: string; code: string } & ErrorDetails;

/** NOT_READY's body: the health body. */
export type NotReadyBody = ErrorBody & Partial<HealthInfo>;

/** The server answered with an error. */
export class SvcError extends Error {
  override readonly name = 'SvcError';
  /** The catalog code (switch on it), or `UNEXPECTED_ANSWER` when the body was not a catalog body. */
  readonly code: ErrorCode | typeof UNEXPECTED_ANSWER | (string & {});
  /** The HTTP status. */
  readonly status: number;
  /** The whole body (for NOT_READY, the health fields too). */
  readonly body: ErrorBody;
  /** `problems` of the body; empty when it has none. */
  readonly problems: Problem[];
  /**
   * When the server says to retry, in ms: the `Retry-After` header, else the body's
   * `retry_after_ms`; null when not said.
   */
  readonly retryAfterMs: number | null;
  /** The request: method and path. */
  readonly method: string;
  readonly path: string;

  constructor(status: number, body: ErrorBody, request: { method: string; path: string }, retryAfterMs: number | null) {
    // READ_ONLY and signature failures put a token in `error` and the text in `message`.
    super(typeof body.message === 'string' ? body.message : body.error);
    this.status = status;
    this.code = body.code;
    this.body = body;
    this.problems = Array.isArray(body.problems) ? body.problems : [];
    this.retryAfterMs = retryAfterMs;
    this.method = request.method;
    this.path = request.path;
  }

  /** The detail fields (the body without `error` and `code`). */
  get details(): ErrorDetails {
    const { error: _error, code: _code, ...rest } = this.body;
    return rest;
  }
}

/** Why a request got no answer. */
export type RequestFailure = 'timeout' | 'aborted' | 'network';

/** No answer to read: the call's timeout elapsed, its signal aborted, or the network failed. */
export class SvcRequestError extends Error {
  override readonly name = 'SvcRequestError';
  constructor(
    readonly kind: RequestFailure,
    message: string,
    readonly method: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
