/**
 * The filter's own errors (errors as values with a stable code, like the expression errors):
 * the filter layer does not know the service's catalog; the `RuleService` maps a `FilterError`
 * into it (BAD_REQUEST stays a 400, INEXPRESSIBLE becomes a 500 INTERNAL_ERROR, SPEC.md "POST
 * /rulesets/:name/filter").
 */

/**
 * Stable codes of `FilterError`:
 * - `BAD_REQUEST`: the caller's mistake (an invalid request body, an unsafe column name);
 * - `INEXPRESSIBLE`: the ruleset holds a condition the requested format cannot express (the
 *   message starts with `filter compilation failed: `).
 */
export type FilterErrorCode = 'BAD_REQUEST' | 'INEXPRESSIBLE';

/** An error of `parseFilterRequest` or `generateFilter`. */
export class FilterError extends Error {
  override readonly name = 'FilterError';
  constructor(
    readonly code: FilterErrorCode,
    message: string,
    /** What the error is about (e.g. `{field, column}`), for callers and logs; not part of the HTTP answer. */
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/** A `BAD_REQUEST` filter error. */
export function badFilterRequest(message: string, details?: Readonly<Record<string, unknown>>): FilterError {
  return new FilterError('BAD_REQUEST', message, details);
}

/** An `INEXPRESSIBLE` filter error: `filter compilation failed: ${what}`. */
export function inexpressible(what: string, details?: Readonly<Record<string, unknown>>): FilterError {
  return new FilterError('INEXPRESSIBLE', `filter compilation failed: ${what}`, details);
}
