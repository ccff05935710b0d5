/**
 * Frozen limits of the expression language (DECISIONS.md 2 "Limits"). Exceeding either is a
 * syntax error: `TOO_LONG` at the first character past the limit, `TOO_DEEP` at the construct
 * that opens one level too many.
 */

/** Maximum expression length in UTF-16 code units (JavaScript `string.length`). */
export const MAX_EXPRESSION_LENGTH = 4096;

/**
 * Maximum nesting depth. One level is opened by each parenthesised group or prefix form `( … )`,
 * array literal `[ … ]`, function call `f( … )`, unary operator `!`/`-` and `if … then … else`.
 * Binary operator chains (`a + b + c …`) do not nest: they are read iteratively.
 */
export const MAX_NESTING_DEPTH = 64;
