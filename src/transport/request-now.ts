/**
 * The optional `"now"` of an execute, batch or eval request (EXTENSIONS.md 3 "Dates and time"):
 * the time now() returns while the request is answered. Both transports run the façade call
 * through `withRequestNow` (HTTP: the body's `"now"`; gRPC: the request's `now` field), so the
 * value is checked, and refused, alike on both.
 */
import { canonicalDateText, setRequestNow } from '../expr/index.js';
import { ServiceError } from '../service/errors.js';

/** The message of a `"now"` that is not an ISO 8601 date (BAD_REQUEST on both transports). */
export const INVALID_NOW_MESSAGE = 'now must be an ISO 8601 date or date-time text, e.g. "2026-11-24T10:00:00Z"';

/**
 * Runs `answer` with `v` as the time now() reads (expr/dates.ts); undefined or null: the clock.
 * Anything else that is not ISO 8601 date text is BAD_REQUEST, and `answer` does not run.
 */
export function withRequestNow<T>(v: unknown, answer: () => T): T {
  let now: string | null = null;
  if (v !== undefined && v !== null) {
    now = typeof v === 'string' ? canonicalDateText(v) : null;
    if (now === null) throw new ServiceError('BAD_REQUEST', INVALID_NOW_MESSAGE);
  }
  setRequestNow(now);
  try {
    return answer();
  } finally {
    setRequestNow(null);
  }
}
