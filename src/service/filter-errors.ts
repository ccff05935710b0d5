/**
 * The filter's errors in the service catalog (SPEC.md "POST /rulesets/:name/filter"): a caller
 * mistake stays a 400 `BAD_REQUEST`; a condition the format cannot express is a 500
 * `INTERNAL_ERROR` ("filter compilation failed: ..."). The message is kept as is; the filter's
 * `details` are not part of the answer (its body is `{error, code}` as before).
 */
import { FilterError } from '../filter/index.js';
import { ServiceError } from './errors.js';

/** The catalog error of a filter error. */
export function filterServiceError(err: FilterError): ServiceError {
  switch (err.code) {
    case 'BAD_REQUEST':
      return new ServiceError('BAD_REQUEST', err.message);
    case 'INEXPRESSIBLE':
      return new ServiceError('INTERNAL_ERROR', err.message);
    default:
      return unexpected(err.code);
  }
}

/** Maps a `FilterError` (and passes anything else through unchanged). */
export function fromFilterError(err: unknown): unknown {
  return err instanceof FilterError ? filterServiceError(err) : err;
}

function unexpected(code: never): never {
  throw new Error(`internal: unexpected filter error code ${String(code)}`);
}
