/**
 * Turns a partially evaluated branch condition into predicates: the rows for which it is true
 * and the rows for which it is false (SPEC.md filter rule 3: the taken branch gets the first,
 * later branches and the default path get the second).
 *
 * The two are kept apart instead of negating one into the other because a condition can also
 * fail (a known failure under `&&`, `||`, `if`), and a failing row takes neither way. Without
 * failures `whenFalse` is exactly the negation of `whenTrue`.
 *
 * NOTE (SPEC rule 4): a condition that reads a variable set by an action step cannot become a
 * column. It is over-approximated as "may be true, may be false" (`always` both ways), so the
 * filter is a superset there, which rule 4 allows.
 */
import type { JsonValue } from '../expr/ast.js';
import { compareAtom, setAtom, textAtom } from './atoms.js';
import { readsVariable, type Residual } from './partial-eval.js';
import { ALWAYS, NEVER, and, negate, or, type CompareType, type Pred } from './predicate.js';

/** A branch condition as predicates. */
export interface Condition {
  /** Rows for which the condition is true (a superset only for variables). */
  readonly whenTrue: Pred;
  /** Rows for which the condition is false (a superset only for variables). */
  readonly whenFalse: Pred;
  /** False when some rows make the condition fail (they take neither way). */
  readonly total: boolean;
}

const TRUE_COND: Condition = Object.freeze({ whenTrue: ALWAYS, whenFalse: NEVER, total: true });
const FALSE_COND: Condition = Object.freeze({ whenTrue: NEVER, whenFalse: ALWAYS, total: true });
const FAILING: Condition = Object.freeze({ whenTrue: NEVER, whenFalse: NEVER, total: false });
const EITHER_WAY: Condition = Object.freeze({ whenTrue: ALWAYS, whenFalse: ALWAYS, total: true });

const COMPARE: Readonly<Record<string, CompareType>> = { '==': 'eq', '!=': 'ne', '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge' };
/** `v op field` is `field FLIPPED[op] v`. */
const FLIPPED: Readonly<Record<string, CompareType>> = { '==': 'eq', '!=': 'ne', '<': 'gt', '<=': 'ge', '>': 'lt', '>=': 'le' };
const TEXT_FUNCTIONS = new Set(['contains', 'starts_with', 'ends_with']);
const BOOLEAN_OPS = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', 'not in', '&&', '||']);

function exact(p: Pred): Condition {
  return { whenTrue: p, whenFalse: negate(p), total: true };
}

function unsupported(reason: string): Condition {
  const p: Pred = { type: 'unsupported', reason };
  return { whenTrue: p, whenFalse: p, total: true };
}

function swap(c: Condition): Condition {
  return { whenTrue: c.whenFalse, whenFalse: c.whenTrue, total: c.total };
}

/** The predicates of a residual used as a condition (engine truthiness). */
export function toCondition(r: Residual): Condition {
  switch (r.kind) {
    case 'value':
      return r.value === false || r.value === null || r.value === 0 || r.value === '' ? FALSE_COND : TRUE_COND;
    case 'error':
      return FAILING;
    case 'var':
      return EITHER_WAY;
    case 'field':
      return exact({ type: 'truthy', field: r.path });
    case 'unary':
      if (r.op === '!') return swap(toCondition(r.operand));
      return readsVariable(r) ? EITHER_WAY : unsupported(`arithmetic on unknown fields in ${show(r)}`);
    case 'binary':
      if (r.op === '&&' || r.op === '||') return junction(r.op, toCondition(r.left), toCondition(r.right));
      if (readsVariable(r)) return EITHER_WAY;
      return comparison(r.op, r.left, r.right);
    case 'if': {
      const c = toCondition(r.cond);
      const a = toCondition(r.then);
      const b = toCondition(r.else);
      return {
        whenTrue: or([and([c.whenTrue, a.whenTrue]), and([c.whenFalse, b.whenTrue])]),
        whenFalse: or([and([c.whenTrue, a.whenFalse]), and([c.whenFalse, b.whenFalse])]),
        total: c.total && a.total && b.total,
      };
    }
    case 'call':
      if (readsVariable(r)) return EITHER_WAY;
      return callCondition(r.name, r.args);
    case 'array':
      return unsupported(`a list with unknown fields used as a condition: ${show(r)}`);
  }
}

/**
 * `&&` / `||` with the engine's short-circuit. NOTE: when the left side cannot fail, the plain
 * De Morgan form is exact (a failing right side only matters where the left side lets it run,
 * and its failing rows are in neither of its sets); otherwise the left side's failing rows must
 * be kept out of the other way too.
 */
function junction(op: '&&' | '||', a: Condition, b: Condition): Condition {
  const total = a.total && b.total;
  if (op === '&&') {
    const whenFalse = a.total ? or([a.whenFalse, b.whenFalse]) : or([a.whenFalse, and([a.whenTrue, b.whenFalse])]);
    return { whenTrue: and([a.whenTrue, b.whenTrue]), whenFalse, total };
  }
  const whenTrue = a.total ? or([a.whenTrue, b.whenTrue]) : or([a.whenTrue, and([a.whenFalse, b.whenTrue])]);
  return { whenTrue, whenFalse: and([a.whenFalse, b.whenFalse]), total };
}

function comparison(op: string, left: Residual, right: Residual): Condition {
  if (op in COMPARE) {
    if (left.kind === 'field' && right.kind === 'value') return exact(compareAtom(COMPARE[op]!, left.path, right.value));
    if (left.kind === 'value' && right.kind === 'field') return exact(compareAtom(FLIPPED[op]!, right.path, left.value));
    // `(condition) == true` and friends: the condition itself, or its negation.
    const cond = left.kind === 'value' ? right : left;
    const other = left.kind === 'value' ? left : right;
    if (other.kind === 'value' && typeof other.value === 'boolean' && (op === '==' || op === '!=') && isBoolean(cond)) {
      const c = toCondition(cond);
      return (op === '==') === other.value ? c : swap(c);
    }
    return unsupported(describeComparison(op, left, right));
  }
  if (op === 'in' || op === 'not in') {
    const negated = op === 'not in';
    if (left.kind === 'field' && right.kind === 'value') return membership(negated, left.path, right.value);
    if (left.kind === 'value' && right.kind === 'field') {
      // NOTE: `v in x` is `contains(x, v)` in the engine (the same containsValue).
      const c = exact(textAtom('contains', right.path, left.value));
      return negated ? swap(c) : c;
    }
    return unsupported(describeComparison(op, left, right));
  }
  return unsupported(`arithmetic on unknown fields in ${show({ kind: 'binary', op: op as '+', left, right })}`);
}

function membership(negated: boolean, field: string, list: JsonValue): Condition {
  let c: Condition;
  if (Array.isArray(list)) c = exact(setAtom('in', field, list));
  // The engine: `x in null` is false for every x; `x in 5` fails for every x.
  else if (list === null) c = FALSE_COND;
  else if (typeof list === 'string') return unsupported(`'${field} in ${JSON.stringify(list)}' (an unknown field looked up in a string)`);
  else c = FAILING;
  return negated ? swap(c) : c;
}

function callCondition(name: string, args: readonly Residual[]): Condition {
  const [first, second] = args;
  if (TEXT_FUNCTIONS.has(name) && first?.kind === 'field' && second?.kind === 'value') {
    return exact(textAtom(name as 'contains', first.path, second.value));
  }
  if (name === 'is_null' && first?.kind === 'field') return exact({ type: 'is_null', field: first.path });
  if (name === 'exists') return unsupported(`exists(${show(first!)}) of an unknown field (a column cannot tell a missing field from null)`);
  return unsupported(`function ${show({ kind: 'call', name, args })} on unknown fields`);
}

function isBoolean(r: Residual): boolean {
  if (r.kind === 'unary') return r.op === '!';
  if (r.kind === 'binary') return BOOLEAN_OPS.has(r.op);
  if (r.kind === 'call') return TEXT_FUNCTIONS.has(r.name) || r.name === 'is_null' || r.name === 'exists';
  return false;
}

const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);

function isArithmetic(r: Residual): boolean {
  return (r.kind === 'binary' && ARITHMETIC.has(r.op)) || (r.kind === 'unary' && r.op === '-');
}

function describeComparison(op: string, left: Residual, right: Residual): string {
  const whole = show({ kind: 'binary', op: op as '==', left, right });
  if (left.kind === 'field' && right.kind === 'field') return `comparison between two unknown fields '${left.path}' and '${right.path}'`;
  if (isArithmetic(left) || isArithmetic(right)) return `arithmetic on unknown fields in ${whole}`;
  const fn = left.kind === 'call' ? left : right.kind === 'call' ? right : null;
  if (fn !== null) return `function ${show(fn)} on unknown fields in ${whole}`;
  return `'${whole}'`;
}

/** Short infix rendering of a residual, for error messages. */
export function show(r: Residual): string {
  switch (r.kind) {
    case 'value':
      return JSON.stringify(r.value);
    case 'error':
      return '<error>';
    case 'field':
    case 'var':
      return r.path;
    case 'unary':
      return `${r.op}${show(r.operand)}`;
    case 'binary':
      return `(${show(r.left)} ${r.op} ${show(r.right)})`;
    case 'array':
      return `[${r.items.map(show).join(', ')}]`;
    case 'if':
      return `(if ${show(r.cond)} then ${show(r.then)} else ${show(r.else)})`;
    case 'call':
      return `${r.name}(${r.args.map(show).join(', ')})`;
  }
}
