/**
 * Failure guards (EXTENSIONS.md 6 "Filters and failures"): the rows on which evaluating a
 * residual expression does not fail, as a predicate. A row on which execution fails yields no
 * result code, so a path to a target carries the guards of every expression the engine evaluates
 * on it (conditions, action values, terminal outputs).
 *
 * What can fail on an unknown field, under the typed-column assumption (docs/filter.md: an unknown
 * field holds a value of the type the rule uses it with, or null):
 * - arithmetic (`+ - * / %`, unary `-`) on a null operand: guard `field IS NOT NULL`;
 * - division and modulo by a field that is 0: guard `field != 0`;
 * - an operand known to be of the wrong type (`x + true`, `x in 5`): never;
 * - a date function (`year(x)`, `date_add(x, n, u)`, ...) of an unknown field: on a text that is
 *   not a date (docs/expressions.md "Dates"), which no condition on a text column can say: the
 *   guard is left out (`exact: false`).
 *
 * NOTE (exactness): a guard that cannot be written as a predicate on columns (a divisor or an
 * operand computed by a function, `coalesce` with a failing later argument, a variable operand)
 * is left out and the guard says `exact: false`: the filter is then a superset, which the answer
 * reports. A result that overflows to a non-finite number is not guarded (documented).
 *
 * `&&`, `||` and `if` inside an expression are evaluated lazily: their guards come from the
 * caller's condition builder (`BranchesOf`, condition.ts), passed in to keep this module below
 * it in the layout.
 */
import type { BinaryOp } from '../expr/ast.js';
import { compareAtom } from './atoms.js';
import { DATE_FUNCTIONS, type Residual } from './partial-eval.js';
import { ALWAYS, NEVER, and, or, unaryAtom, type Pred } from './predicate.js';

/** The rows on which an expression evaluates without failing. */
export interface Guard {
  readonly pred: Pred;
  /** False when `pred` is a superset (some failure could not be written as a condition). */
  readonly exact: boolean;
}

/** The condition view of a residual that guards need for `&&`, `||` and `if`. */
export interface GuardBranches {
  readonly whenTrue: Pred;
  readonly whenFalse: Pred;
  readonly ok: Pred;
  readonly exact: boolean;
}

/** Builds the condition view of a residual (condition.ts `toCondition`). */
export type BranchesOf = (r: Residual) => GuardBranches;

/** Never fails. */
export const SAFE: Guard = Object.freeze({ pred: ALWAYS, exact: true });
const FAILS: Guard = Object.freeze({ pred: NEVER, exact: true });
/** May fail in a way no condition describes: a superset. */
const UNKNOWN: Guard = Object.freeze({ pred: ALWAYS, exact: false });

const ARITHMETIC: ReadonlySet<string> = new Set(['+', '-', '*', '/', '%']);
const COMPARISON: ReadonlySet<string> = new Set(['==', '!=', '<', '<=', '>', '>=']);
/** Functions of one argument that return null exactly for null (docs/expressions.md "Null arguments"). */
const NUMERIC_OF_NULL: ReadonlySet<string> = new Set(['abs', 'round', 'floor', 'ceil', 'len']);

/** Conjunction of guards (both are evaluated). */
export function both(a: Guard, b: Guard): Guard {
  if (a === SAFE) return b;
  if (b === SAFE) return a;
  return { pred: and([a.pred, b.pred]), exact: a.exact && b.exact };
}

/** True for an arithmetic residual (its value is a number whenever it does not fail). */
export function isArithmetic(r: Residual): boolean {
  return (r.kind === 'binary' && ARITHMETIC.has(r.op)) || (r.kind === 'unary' && r.op === '-');
}

/** The rows on which evaluating `r` does not fail. */
export function guardOf(r: Residual, branches: BranchesOf): Guard {
  switch (r.kind) {
    case 'value':
    case 'field':
      return SAFE;
    case 'var':
      return UNKNOWN; // an untracked variable (variables.ts): what it holds is not known
    case 'error':
      return FAILS;
    case 'unary':
      if (r.op === '!') return guardOf(r.operand, branches);
      return both(guardOf(r.operand, branches), numberOperand(r.operand, '-', branches));
    case 'binary': {
      if (r.op === '&&' || r.op === '||') {
        const c = branches(r);
        return c.ok === ALWAYS && c.exact ? SAFE : { pred: c.ok, exact: c.exact };
      }
      const operands = both(guardOf(r.left, branches), guardOf(r.right, branches));
      if (COMPARISON.has(r.op)) return operands;
      if (r.op === 'in' || r.op === 'not in') return both(operands, container(r.right));
      let g = both(operands, both(numberOperand(r.left, r.op, branches), numberOperand(r.right, r.op, branches)));
      if (r.op === '/' || r.op === '%') g = both(g, divisor(r.right));
      return g;
    }
    case 'array': {
      let g = SAFE;
      for (const item of r.items) g = both(g, guardOf(item, branches));
      return g;
    }
    case 'if': {
      const c = branches(r.cond);
      const a = guardOf(r.then, branches);
      const b = guardOf(r.else, branches);
      if (c.ok === ALWAYS && a === SAFE && b === SAFE && c.exact) return SAFE;
      return { pred: or([and([c.whenTrue, a.pred]), and([c.whenFalse, b.pred])]), exact: c.exact && a.exact && b.exact };
    }
    case 'call': {
      // NOTE: `coalesce` is lazy: a later argument runs only when the earlier ones are null.
      if (r.name === 'coalesce') {
        const first = guardOf(r.args[0]!, branches);
        return r.args.slice(1).every((a) => guardOf(a, branches) === SAFE) ? first : { pred: first.pred, exact: false };
      }
      let g = SAFE;
      for (const a of r.args) g = both(g, guardOf(a, branches));
      // NOTE: a residual date call reads an unknown value: a text that is not a date fails it.
      return DATE_FUNCTIONS.has(r.name) ? both(g, UNKNOWN) : g;
    }
  }
}

/** The operand of an arithmetic operator must be a number (or, for `+`, a string). */
function numberOperand(x: Residual, op: BinaryOp | '-', branches: BranchesOf): Guard {
  switch (x.kind) {
    case 'value':
      return typeof x.value === 'number' || (op === '+' && typeof x.value === 'string') ? SAFE : FAILS;
    case 'field':
      return { pred: unaryAtom('not_null', x.path), exact: true };
    case 'error':
    case 'array':
      return FAILS;
    case 'var':
      return UNKNOWN;
    case 'unary':
      return x.op === '-' ? SAFE : FAILS; // `!x` is a boolean
    case 'binary':
      return ARITHMETIC.has(x.op) ? SAFE : FAILS; // comparisons, `in`, `&&`, `||` give booleans
    case 'if': {
      const c = branches(x.cond);
      const a = numberOperand(x.then, op, branches);
      const b = numberOperand(x.else, op, branches);
      return { pred: or([and([c.whenTrue, a.pred]), and([c.whenFalse, b.pred])]), exact: c.exact && a.exact && b.exact };
    }
    case 'call': {
      const arg = x.args[0];
      if (NUMERIC_OF_NULL.has(x.name) && x.args.length === 1 && arg?.kind === 'field') return { pred: unaryAtom('not_null', arg.path), exact: true };
      return UNKNOWN;
    }
  }
}

/** The divisor of `/` and `%` must not be 0. */
function divisor(x: Residual): Guard {
  if (x.kind === 'value') return x.value === 0 ? FAILS : SAFE;
  if (x.kind === 'field') return { pred: compareAtom('ne', x.path, 0), exact: true };
  return UNKNOWN;
}

/** The right side of `in` must be an array, a string or null. */
function container(x: Residual): Guard {
  switch (x.kind) {
    case 'value':
      return x.value === null || typeof x.value === 'string' || Array.isArray(x.value) ? SAFE : FAILS;
    case 'field':
    case 'array':
      return SAFE; // a list or text column (typed columns)
    case 'unary':
      return FAILS; // a number or a boolean
    case 'binary':
      return x.op === '+' ? UNKNOWN : FAILS; // `+` may join strings; anything else is a number or a boolean
    default:
      return UNKNOWN;
  }
}
