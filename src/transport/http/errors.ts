/**
 * Maps whatever reached the HTTP error handler (a ServiceError from the façade, a Fastify
 * error, anything else) to a catalog error, so every error body is `{error, code, ...}`, and
 * the rules every error answer follows on both request paths (`errorAnswer`).
 */
import { type ErrorCode, ServiceError, toServiceError, unexpectedCause } from '../../service/errors.js';
import type { RequestHead } from './call-context.js';
import { lingerOnClose } from './linger.js';

/** Logs a failure that is not a catalog error (a bug; `err` is the original, with its stack) and became the 5xx `e`. */
export type ReportUnexpected = (err: unknown, e: ServiceError, url: string) => void;

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  503: 'NOT_READY',
};

/**
 * True for the errors answered before the request body was read whole (408, 413): the answer
 * closes the connection with a lingering close (./linger.ts), on both request paths.
 */
export function closesEarly(e: ServiceError): boolean {
  return e.code === 'REQUEST_TIMEOUT' || e.code === 'PAYLOAD_TOO_LARGE';
}

const BEARER = { 'www-authenticate': 'Bearer' } as const;

/**
 * Headers an error answer carries besides the body: `WWW-Authenticate: Bearer` on a 401
 * (RFC 9110), `Retry-After` on a 429 that says when; null for the others.
 */
export function errorHeaders(e: ServiceError): Readonly<Record<string, string>> | null {
  if (e.code === 'UNAUTHENTICATED') return BEARER;
  const retry = e.details?.['retry_after_ms'];
  if (e.code === 'RATE_LIMITED' && typeof retry === 'number') return { 'retry-after': String(Math.max(1, Math.ceil(retry / 1000))) };
  return null;
}

/** The catalog error for an error thrown while handling an HTTP request. */
export function toHttpError(err: unknown): ServiceError {
  if (err instanceof ServiceError) return err;
  const e = err as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (e && typeof e.statusCode === 'number' && e.statusCode < 500) {
    if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return new ServiceError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    }
    const code = BY_STATUS[e.statusCode] ?? 'BAD_REQUEST';
    return new ServiceError(code, typeof e.message === 'string' ? e.message : 'bad request');
  }
  return toServiceError(err);
}

/**
 * The catalog error answering `err` on request `req`, after the rules of every error answer:
 * a non-catalog error that became a 5xx is reported, and an early answer (`closesEarly`) ends
 * with a lingering close. The caller sends `Connection: close` when `closesEarly` is true.
 */
export function errorAnswer(err: unknown, req: RequestHead, report: ReportUnexpected): ServiceError {
  const e = toHttpError(err);
  // NOTE (EXTENSIONS.md 6: an unexpected error is logged with its stack): also when the façade
  // already wrapped it (toServiceError keeps it as `cause`).
  if (e.httpStatus >= 500) {
    const cause = unexpectedCause(err);
    if (cause !== undefined) report(cause, e, req.url ?? '');
  }
  if (closesEarly(e)) lingerOnClose(req.socket ?? undefined);
  return e;
}
