/**
 * Turns a partially evaluated branch condition into predicates: the rows for which it is true
 * and the rows for which it is false (SPEC.md filter rule 3: the taken branch gets the first,
 * later branches and the default path get the second).
 *
 * The two are kept apart instead of negating one into the other because a condition can also
 * fail (a known failure, or arithmetic on an unknown field that is null or divides by 0), and a
 * failing row takes neither way (EXTENSIONS.md 6 "Filters and failures"): both carry the failure
 * guards of guard.ts, in the order the engine evaluates (`a || b` fails when `a` fails, even
 * where `b` is true). Without failures `whenFalse` is exactly the negation of `whenTrue`.
 *
 * NOTE (SPEC rule 4): a condition that reads an untracked variable (a `var` residual: the
 * fallback of variables.ts; tracked variables were substituted by partial evaluation) cannot
 * become a column. It is over-approximated as "may be true, may be false" (`always` both ways,
 * `exact` false), so the filter is a superset there, which rule 4 allows.
 */
import type { JsonValue } from '../expr/ast.js';
import { ExprRuntimeError, applyBinary } from '../expr/index.js';
import { compareAtom, setAtom, textAtom } from './atoms.js';
import { SAFE, guardOf, type Guard } from './guard.js';
import { readsVariable, type Residual } from './partial-eval.js';
import { ALWAYS, NEVER, and, findUnsupported, negate, or, unaryAtom, unsupportedPred, type CompareType, type Pred } from './predicate.js';
import { describeComparison, show } from './residual-text.js';

/** A branch condition as predicates. */
export interface Condition {
  /** Rows for which the condition is true (a superset only when not `exact`). */
  readonly whenTrue: Pred;
  /** Rows for which the condition is false (a superset only when not `exact`). */
  readonly whenFalse: Pred;
  /** Rows on which evaluating it does not fail (`whenTrue` or `whenFalse`). */
  readonly ok: Pred;
  /** False when a documented fallback (a variable, a guard no condition writes) made it a superset. */
  readonly exact: boolean;
}

/** A branch condition as the planner uses it: the ways to take it and to go past it. */
export interface Branch {
  /** Disjuncts of `whenTrue`, one path each (see `ways`). */
  readonly taken: readonly Pred[];
  /** Disjuncts of `whenFalse`, one path each. */
  readonly past: readonly Pred[];
  readonly exact: boolean;
}

const TRUE_COND: Condition = Object.freeze({ whenTrue: ALWAYS, whenFalse: NEVER, ok: ALWAYS, exact: true });
const FALSE_COND: Condition = Object.freeze({ whenTrue: NEVER, whenFalse: ALWAYS, ok: ALWAYS, exact: true });
const FAILING: Condition = Object.freeze({ whenTrue: NEVER, whenFalse: NEVER, ok: NEVER, exact: true });
const EITHER_WAY: Condition = Object.freeze({ whenTrue: ALWAYS, whenFalse: ALWAYS, ok: ALWAYS, exact: false });

const COMPARE: Readonly<Record<string, CompareType>> = { '==': 'eq', '!=': 'ne', '<': 'lt', '<=': 'le', '>': 'gt', '>=': 'ge' };
/** `v op field` is `field FLIPPED[op] v`. */
const FLIPPED: Readonly<Record<string, CompareType>> = { '==': 'eq', '!=': 'ne', '<': 'gt', '<=': 'ge', '>': 'lt', '>=': 'le' };
const TEXT_FUNCTIONS = new Set(['contains', 'starts_with', 'ends_with']);
const BOOLEAN_OPS = new Set(['==', '!=', '<', '<=', '>', '>=', 'in', 'not in', '&&', '||']);

function exact(p: Pred): Condition {
  return { whenTrue: p, whenFalse: negate(p), ok: ALWAYS, exact: true };
}

function unsupported(reason: string): Condition {
  const p: Pred = unsupportedPred(reason);
  return { whenTrue: p, whenFalse: negate(p), ok: ALWAYS, exact: true };
}

function swap(c: Condition): Condition {
  return { whenTrue: c.whenFalse, whenFalse: c.whenTrue, ok: c.ok, exact: c.exact };
}

/** `c` evaluated after operands that fail outside `g`. */
function guarded(g: Guard, c: Condition): Condition {
  if (g === SAFE) return c;
  return { whenTrue: and([g.pred, c.whenTrue]), whenFalse: and([g.pred, c.whenFalse]), ok: and([g.pred, c.ok]), exact: g.exact && c.exact };
}

/**
 * A branch condition for the planner. NOTE: a `whenTrue` / `whenFalse` that is a disjunction
 * with an inexpressible part is split into one way per disjunct, so that the path that takes a
 * branch where `U` holds and the path that goes past it where `U` does not merge (merge-paths.ts)
 * when both reach a target: `fee > 2 || 100 / lim > 1` to A with default A needs no `U`.
 */
export function toBranch(r: Residual): Branch {
  const c = toCondition(r);
  return { taken: ways(c.whenTrue), past: ways(c.whenFalse), exact: c.exact };
}

function ways(p: Pred): readonly Pred[] {
  return p.type === 'or' && findUnsupported(p) !== null ? p.conditions : [p];
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
      return exact(unaryAtom('truthy', r.path));
    case 'unary':
      if (r.op === '!') return swap(toCondition(r.operand));
      return readsVariable(r) ? EITHER_WAY : guarded(guardOf(r, toCondition), unsupported(`arithmetic on unknown fields in ${show(r)}`));
    case 'binary':
      if (r.op === '&&' || r.op === '||') return junction(r.op, toCondition(r.left), toCondition(r.right));
      if (readsVariable(r)) return EITHER_WAY;
      return guarded(guardOf(r, toCondition), comparison(r.op, r.left, r.right));
    case 'if': {
      const c = toCondition(r.cond);
      const a = toCondition(r.then);
      const b = toCondition(r.else);
      return {
        whenTrue: or([and([c.whenTrue, a.whenTrue]), and([c.whenFalse, b.whenTrue])]),
        whenFalse: or([and([c.whenTrue, a.whenFalse]), and([c.whenFalse, b.whenFalse])]),
        ok: c.ok === ALWAYS && a.ok === ALWAYS && b.ok === ALWAYS ? ALWAYS : or([and([c.whenTrue, a.ok]), and([c.whenFalse, b.ok])]),
        exact: c.exact && a.exact && b.exact,
      };
    }
    case 'call':
      if (readsVariable(r)) return EITHER_WAY;
      return guarded(guardOf(r, toCondition), callCondition(r.name, r.args));
    case 'array':
      return guarded(guardOf(r, toCondition), unsupported(`a list with unknown fields used as a condition: ${show(r)}`));
  }
}

/**
 * `&&` / `||` with the engine's short-circuit: `a && b` fails where `a` fails, and where `a` is
 * true and `b` fails. NOTE: when neither side can fail, the plain De Morgan form is exact; when
 * `b` always stops (`R || true`) the result is simply "`a` does not fail"; otherwise the rows
 * that go on to `b` are `a`'s other way (which also keeps an inexpressible `b` splittable).
 */
function junction(op: '&&' | '||', a: Condition, b: Condition): Condition {
  const exactness = a.exact && b.exact;
  const ok = a.ok === ALWAYS && b.ok === ALWAYS ? ALWAYS : and([a.ok, or([op === '&&' ? a.whenFalse : a.whenTrue, b.ok])]);
  const plain = a.ok === ALWAYS && findUnsupported(op === '&&' ? b.whenFalse : b.whenTrue) === null;
  if (op === '&&') {
    const whenFalse = b.whenFalse === ALWAYS ? a.ok : plain ? or([a.whenFalse, b.whenFalse]) : or([a.whenFalse, and([a.whenTrue, b.whenFalse])]);
    return { whenTrue: and([a.whenTrue, b.whenTrue]), whenFalse, ok, exact: exactness };
  }
  const whenTrue = b.whenTrue === ALWAYS ? a.ok : plain ? or([a.whenTrue, b.whenTrue]) : or([a.whenTrue, and([a.whenFalse, b.whenTrue])]);
  return { whenTrue, whenFalse: and([a.whenFalse, b.whenFalse]), ok, exact: exactness };
}

function comparison(op: string, left: Residual, right: Residual): Condition {
  if (left.kind === 'value' && right.kind === 'value') {
    // Both sides known (after distributing an `if`): the engine's own answer.
    try {
      return toCondition({ kind: 'value', value: applyBinary(op as '==', left.value, right.value) });
    } catch (err) {
      if (err instanceof ExprRuntimeError) return FAILING;
      throw err;
    }
  }
  // `(if c then a else b) op v` is `if c then (a op v) else (b op v)`: the comparison never fails.
  if (left.kind === 'if')
    return toCondition({
      kind: 'if',
      cond: left.cond,
      then: { kind: 'binary', op: op as '==', left: left.then, right },
      else: { kind: 'binary', op: op as '==', left: left.else, right },
    });
  if (right.kind === 'if')
    return toCondition({
      kind: 'if',
      cond: right.cond,
      then: { kind: 'binary', op: op as '==', left, right: right.then },
      else: { kind: 'binary', op: op as '==', left, right: right.else },
    });
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
    if (right.kind === 'array') {
      // `v in [a, f]` is `v == a || v == f` (deep equality; every item is evaluated first).
      let c = FALSE_COND;
      for (const item of right.items) c = junction('||', c, comparison('==', left, item));
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
  if (name === 'is_null' && first?.kind === 'field') return exact(unaryAtom('is_null', first.path));
  if (name === 'exists') return unsupported(`exists(${show(first!)}) of an unknown field (a column cannot tell a missing field from null)`);
  return unsupported(`function ${show({ kind: 'call', name, args })} on unknown fields`);
}

function isBoolean(r: Residual): boolean {
  if (r.kind === 'unary') return r.op === '!';
  if (r.kind === 'binary') return BOOLEAN_OPS.has(r.op);
  if (r.kind === 'call') return TEXT_FUNCTIONS.has(r.name) || r.name === 'is_null' || r.name === 'exists';
  return false;
}
