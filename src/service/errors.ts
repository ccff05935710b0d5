/**
 * The one error catalog (DECISIONS.md 3 and 5). Every error the service returns is a
 * `ServiceError` with a stable code; the catalog gives its HTTP status and gRPC status.
 * Transports never invent codes: they map `ServiceError` through this table.
 * `docs/errors.md` documents every entry, and a test keeps the two in agreement.
 */
import { BudgetError } from '../expr/errors.js';
import { ExecutionError } from '../ruleset/result.js';

/** gRPC status numbers (kept here so the service does not import the gRPC library). */
export const GrpcStatus = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

/** One catalog entry. */
export interface CatalogEntry {
  readonly http: number;
  readonly grpc: number;
  /**
   * HTTP status when the error answers `/eval` (DECISIONS.md 2: an evaluation failure there is
   * the caller's expression), when it differs from `http`.
   */
  readonly evalHttp?: number;
  /** What the code means, for docs/errors.md. */
  readonly meaning: string;
}

/** Every error code the service can return. */
export const ERROR_CATALOG = {
  BAD_REQUEST: {
    http: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    meaning: 'The request body or a parameter is invalid (malformed JSON, wrong shape, invalid ruleset or expression).',
  },
  UNAUTHENTICATED: {
    http: 401,
    grpc: GrpcStatus.UNAUTHENTICATED,
    meaning: 'Authentication is on and the credential is missing, malformed, unknown or expired (the answer carries `WWW-Authenticate: Bearer`).',
  },
  INPUT_INVALID: {
    http: 400,
    grpc: GrpcStatus.INVALID_ARGUMENT,
    meaning: "The input does not match the ruleset's `config.input_schema`; `problems` lists every mismatch as `{path, message}`.",
  },
  FORBIDDEN: {
    http: 403,
    grpc: GrpcStatus.PERMISSION_DENIED,
    meaning:
      'The credential lacks the permission or the tenant the request needs (the message says which), or signature verification failed for an uploaded rule.',
  },
  NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, meaning: 'The ruleset, version or route does not exist.' },
  TENANT_NOT_FOUND: { http: 404, grpc: GrpcStatus.NOT_FOUND, meaning: 'Multi-tenancy is on and the tenant is unknown or disabled.' },
  METHOD_NOT_ALLOWED: { http: 405, grpc: GrpcStatus.UNIMPLEMENTED, meaning: 'The route exists but not for this HTTP method.' },
  REQUEST_TIMEOUT: { http: 408, grpc: GrpcStatus.DEADLINE_EXCEEDED, meaning: 'The request was not received completely within the request timeout.' },
  READ_ONLY: { http: 409, grpc: GrpcStatus.FAILED_PRECONDITION, meaning: 'This instance is a reader; send writes to the writer.' },
  CONFLICT: {
    http: 409,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    meaning: 'The operation conflicts with the current state (e.g. deleting a tenant that still owns rulesets).',
  },
  PAYLOAD_TOO_LARGE: {
    http: 413,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    meaning: 'The request body is larger than --max-request-body-bytes, or a reference dataset larger than --max-data-bytes.',
  },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT, meaning: 'The request body is not JSON.' },
  TESTS_FAILED: {
    http: 422,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    meaning: "A ruleset's own tests failed on create or update; nothing was stored. `failures` lists `{name, expected, actual}`.",
  },
  RATE_LIMITED: {
    http: 429,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    meaning:
      "The tenant's request rate limit was exceeded, or the caller's address made more than 20 failed authentication attempts this minute (`Retry-After` says when to retry).",
  },
  INTERNAL_ERROR: {
    http: 500,
    grpc: GrpcStatus.INTERNAL,
    meaning: 'An execution error (type error, no matching branch, missing field in strict mode, step limit) or an unexpected server error.',
  },
  CALL_FAILED: {
    http: 500,
    grpc: GrpcStatus.FAILED_PRECONDITION,
    meaning: 'A call step names a ruleset that does not exist, or calls nest deeper than 8 (the message names the callee; `step` is the call step).',
  },
  TIMEOUT: { http: 500, grpc: GrpcStatus.DEADLINE_EXCEEDED, meaning: 'A ruleset execution ran longer than its execution timeout.' },
  LIMIT_EXCEEDED: {
    http: 500,
    grpc: GrpcStatus.RESOURCE_EXHAUSTED,
    evalHttp: 400,
    meaning:
      'A bound on one request was exceeded: the work budget of an evaluation (--max-eval-ops, --max-value-bytes, 100,000 array elements; 400 on /eval) or the answer size (--max-response-bytes; 500 on every route).',
  },
  NOT_READY: { http: 503, grpc: GrpcStatus.UNAVAILABLE, meaning: 'A readiness check failed.' },
} as const satisfies Record<string, CatalogEntry>;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CATALOG;

/** The error every service operation throws. `details` are extra fields of the HTTP error body. */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
    options?: ServiceErrorOptions,
  ) {
    // NOTE: `cause` keeps a non-catalog error (with its stack) for the server log only; it is
    // never part of the answer (`toBody`).
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    if (options?.eval === true) this.onEval = true;
  }

  /** True when the error answers `/eval`: the catalog's `evalHttp` status applies. */
  readonly onEval: boolean = false;

  /** HTTP status of this error (the catalog's; its `evalHttp` on `/eval` when it has one). */
  get httpStatus(): number {
    const entry: CatalogEntry = ERROR_CATALOG[this.code];
    return this.onEval && entry.evalHttp !== undefined ? entry.evalHttp : entry.http;
  }

  /**
   * The thrown value this error stands for when it was not a catalog error (an unexpected
   * failure): transports log its stack (EXTENSIONS.md 6 "Every error answer is in the catalog").
   */
  get unexpected(): Error | undefined {
    return this.code === 'INTERNAL_ERROR' && this.cause instanceof Error ? this.cause : undefined;
  }

  /** gRPC status of this error. */
  get grpcStatus(): number {
    return ERROR_CATALOG[this.code].grpc;
  }

  /** The HTTP error body: `{error, code, ...details}`. */
  toBody(): Record<string, unknown> {
    return { error: this.message, code: this.code, ...this.details };
  }
}

/** Options of a ServiceError. */
export interface ServiceErrorOptions {
  /** The original error (kept as `cause`; for an unexpected error, so its stack can be logged). */
  readonly cause?: unknown;
  /** The error answers `/eval` (the catalog's `evalHttp`). */
  readonly eval?: boolean;
}

/**
 * Maps any thrown value to a ServiceError (execution errors keep their meaning). An unexpected
 * error becomes INTERNAL_ERROR with the original error as `cause` (see `unexpected`).
 */
export function toServiceError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  if (err instanceof ExecutionError) {
    switch (err.code) {
      case 'TIMEOUT':
        return new ServiceError('TIMEOUT', err.message, { timeout_ms: err.timeoutMs ?? null });
      case 'LIMIT_EXCEEDED':
        return new ServiceError('LIMIT_EXCEEDED', err.message);
      case 'CALL_FAILED':
        return new ServiceError('CALL_FAILED', err.message, err.stepId === undefined ? undefined : { step: err.stepId });
      case 'EVALUATION_ERROR':
      case 'NO_MATCHING_BRANCH':
      case 'STEP_LIMIT':
        return new ServiceError('INTERNAL_ERROR', err.message);
    }
  }
  if (err instanceof BudgetError) {
    if (err.kind === 'deadline') return new ServiceError('TIMEOUT', err.message, { timeout_ms: err.timeoutMs });
    return new ServiceError('LIMIT_EXCEEDED', err.message);
  }
  return new ServiceError('INTERNAL_ERROR', `internal error: ${err instanceof Error ? err.message : String(err)}`, undefined, { cause: err });
}

/**
 * The unexpected (non-catalog) error behind a thrown value, for the server log: the value
 * itself when it is not a ServiceError, the `cause` `toServiceError` kept when it wrapped one,
 * else undefined (a catalog error, or an execution error, is not a bug).
 */
export function unexpectedCause(err: unknown): unknown {
  if (!(err instanceof ServiceError)) return err;
  return err.code === 'INTERNAL_ERROR' ? err.cause : undefined;
}

/** The log fields of an unexpected error: its message and stack (never sent to the caller). */
export function unexpectedFields(cause: unknown): { err: string; stack?: string } {
  if (cause instanceof Error) return cause.stack === undefined ? { err: cause.message } : { err: cause.message, stack: cause.stack };
  return { err: String(cause) };
}
