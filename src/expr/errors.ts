/**
 * Errors of the expression language, as typed values (never a bare Error).
 *
 * `ExprSyntaxError` comes from the lexer and parser (and the static checks of `compile`: unknown
 * function, wrong argument count, limits); it always has a position.
 * `ExprRuntimeError` comes from evaluating a compiled expression (type error, division by zero,
 * missing field in strict mode); it has a message that says what failed.
 */

/** Codes of syntax errors. */
export type SyntaxErrorCode =
  | 'UNEXPECTED_CHARACTER'
  | 'UNEXPECTED_TOKEN'
  | 'UNEXPECTED_END'
  | 'UNTERMINATED_STRING'
  | 'INVALID_ESCAPE'
  | 'INVALID_NUMBER'
  | 'UNKNOWN_FUNCTION'
  | 'WRONG_ARGUMENT_COUNT'
  | 'INVALID_ARGUMENT'
  | 'TOO_LONG'
  | 'TOO_DEEP';

/** Codes of runtime errors. */
export type RuntimeErrorCode = 'TYPE_ERROR' | 'DIVISION_BY_ZERO' | 'MISSING_FIELD';

/** A parse or static-check error at a character position (0-based offset into the source). */
export class ExprSyntaxError extends Error {
  override readonly name = 'ExprSyntaxError';
  constructor(
    readonly code: SyntaxErrorCode,
    /** Human message without the position, e.g. `unexpected ')'`. */
    readonly detail: string,
    /** 0-based character offset. */
    readonly position: number,
  ) {
    super(`${detail} at ${position}`);
  }
}

/** An error raised while evaluating a compiled expression. */
export class ExprRuntimeError extends Error {
  override readonly name = 'ExprRuntimeError';
  constructor(
    readonly code: RuntimeErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Which part of the work budget (budget.ts) an evaluation exceeded. */
export type BudgetKind =
  /** `--max-eval-ops`: element-wise operations of one execution. */
  | 'ops'
  /** `--max-value-bytes`: a string built by the evaluation. */
  | 'bytes'
  /** The array element limit (100,000). */
  | 'elements'
  /** The execution's deadline passed while it was counting (a TIMEOUT, not a limit). */
  | 'deadline';

/**
 * An evaluation exceeded its work budget or its deadline (EXTENSIONS.md 6). Not an
 * `ExprRuntimeError`: callers map it to `LIMIT_EXCEEDED` (or `TIMEOUT` for `deadline`), not to
 * an evaluation error.
 */
export class BudgetError extends Error {
  override readonly name = 'BudgetError';
  constructor(
    readonly kind: BudgetKind,
    message: string,
    /** For `deadline`: the timeout that elapsed (ms). */
    readonly timeoutMs = 0,
    /** For `deadline`: the time spent until the check fired (ms). */
    readonly elapsedMs = 0,
  ) {
    super(message);
  }
}
