/**
 * Reduction of the literals a path holds on one field to an equivalent shorter list, or to
 * "contradiction". Exact under the engine's semantics: every step decides literals with the
 * language's own functions (atoms.ts `decide`).
 *
 * - duplicates dropped; a literal next to its negation → contradiction;
 * - pinning literals (`==`, `in`, `is_null`) intersected, then every other literal decided for
 *   each pinned value: `x in [1, 2, 3] && x != 2 && x > 1` → `x == 3`;
 * - positive ordering bounds (`x > 5`) prove the field holds a number (or a string): the
 *   tighter bound per side is kept, crossing bounds contradict, touching inclusive bounds pin
 *   the value; negated orderings then become positive bounds (`!(x < 3)` → `x >= 3`), values
 *   outside the bounds leave `!=` / `not in`, and `!= null` goes;
 * - without positive bounds, of negated orderings on the same side only the strongest stays
 *   (`!(x < 5)` implies `!(x < 3)`, for numbers and for anything else);
 * - `!= null` goes when another literal already excludes null.
 */
import type { JsonValue } from '../expr/ast.js';
import { compareValues, jsonEquals } from '../expr/index.js';
import { decide, pinnedValues, setAtom } from './atoms.js';
import { COMPLEMENT_OF, fieldOf, keyOf, negate, valueAtom, type CompareAtom, type Literal, type OrderType } from './predicate.js';

type OrderLiteral = CompareAtom & { readonly type: OrderType };

/** The complementary positive ordering of a negated one, for a field known to be of its type. */
const COMPLEMENT: Readonly<Record<OrderType, OrderType>> = { lt: 'ge', le: 'gt', gt: 'le', ge: 'lt' };

/**
 * Per-object memo of `complementOf`, a symbol key like predicate.ts's caches: the state lives on
 * the predicate (owned by the compiled ruleset's shared conditions, or by one request), not in
 * the module.
 */
type WithComplement = OrderLiteral & { [COMPLEMENT_OF]?: OrderLiteral };

/** The opposite ordering (`x < 3` → `x >= 3`), one object per ordering (its key stays cached). */
function complementOf(c: OrderLiteral): OrderLiteral {
  let r = (c as WithComplement)[COMPLEMENT_OF];
  if (r === undefined) {
    r = valueAtom(COMPLEMENT[c.type], c.field, c.value) as OrderLiteral;
    (c as WithComplement)[COMPLEMENT_OF] = r;
  }
  return r;
}

function isOrder(l: Literal): l is OrderLiteral {
  return l.type === 'lt' || l.type === 'le' || l.type === 'gt' || l.type === 'ge';
}

function isLower(l: OrderLiteral): boolean {
  return l.type === 'gt' || l.type === 'ge';
}

/** True when `a` implies `b` for two positive orderings on the same side with values of one type. */
function implies(a: OrderLiteral, b: OrderLiteral): boolean {
  if (jsonEquals(a.value, b.value)) return a.type === b.type || a.type === 'gt' || a.type === 'lt';
  return isLower(a) ? compareValues('>', a.value, b.value) : compareValues('<', a.value, b.value);
}

/** Reduces the literals of one field; null when they contradict. */
export function reduceField(lits: readonly Literal[]): Literal[] | null {
  if (lits.length === 1) return [lits[0]!];
  const keys = new Set<string>();
  let distinct: Literal[] = [];
  for (const l of lits) {
    const k = keyOf(l);
    if (!keys.has(k)) {
      keys.add(k);
      distinct.push(l);
    }
  }
  for (const l of distinct) if (keys.has(keyOf(negate(l)))) return null;

  // Pinned values: intersect them, keep those every other literal accepts.
  let pinned: JsonValue[] | null = null;
  for (const l of distinct) {
    const vals = pinnedValues(l);
    if (vals !== null) pinned = pinned === null ? [...vals] : pinned.filter((v) => vals.some((w) => jsonEquals(v, w)));
  }
  if (pinned !== null) {
    const others = distinct.filter((l) => pinnedValues(l) === null);
    const keep = pinned.filter((v) => others.every((o) => decide(o, v) === true));
    if (keep.length === 0) return null;
    return [setAtom('in', fieldOf(distinct[0]!), keep) as Literal];
  }

  const positive = distinct.filter(isOrder);
  if (positive.length > 0) {
    const type = typeof positive[0]!.value;
    if (positive.some((b) => typeof b.value !== type)) return null; // a number bound and a string bound
    // The field holds a value of `type`: a negated ordering of that type is the opposite ordering,
    // one of another type always holds.
    const converted: Literal[] = [];
    for (const l of distinct) {
      if (l.type === 'not' && isOrder(l.condition)) {
        if (typeof l.condition.value === type) converted.push(complementOf(l.condition));
      } else {
        converted.push(l);
      }
    }
    if (converted.length !== distinct.length || converted.some((l, i) => l !== distinct[i])) return reduceField(converted);
    return reduceBounded(distinct, positive);
  }
  distinct = strongestNegated(distinct);
  return dropNotNull(distinct);
}

/** Literals of a field with positive bounds (all of one value type) and no negated orderings of that type. */
function reduceBounded(distinct: readonly Literal[], positive: readonly OrderLiteral[]): Literal[] | null {
  let lower: OrderLiteral | null = null;
  let upper: OrderLiteral | null = null;
  for (const b of positive) {
    if (isLower(b)) lower = lower === null || implies(b, lower) ? b : lower;
    else upper = upper === null || implies(b, upper) ? b : upper;
  }
  if (lower !== null && upper !== null) {
    if (compareValues('>', lower.value, upper.value)) return null;
    if (jsonEquals(lower.value, upper.value)) {
      if (lower.type === 'gt' || upper.type === 'lt') return null;
      const rest = distinct.filter((l) => !isOrder(l));
      return reduceField([valueAtom('eq', lower.field, lower.value) as Literal, ...rest]);
    }
  }
  const bounds = [lower, upper].filter((b): b is OrderLiteral => b !== null);
  const out: Literal[] = [];
  for (const l of distinct) {
    if (isOrder(l)) {
      if (l === lower || l === upper) out.push(l);
      continue;
    }
    if (l.type === 'not_null') continue; // a bound excludes null
    if (l.type === 'ne' || l.type === 'not_in') {
      const vals: readonly JsonValue[] = l.type === 'not_in' ? l.values : [(l as CompareAtom).value];
      const inRange = vals.filter((v) => bounds.every((b) => decide(b, v) === true));
      if (inRange.length === vals.length) {
        out.push(l); // NOTE (speed): unchanged: keep the object (and its cached key)
        continue;
      }
      const p = setAtom('not_in', l.field, inRange);
      if (p.type !== 'always') out.push(p as Literal);
      continue;
    }
    out.push(l);
  }
  return out;
}

/** Of negated orderings on the same side with values of one type, keeps the strongest. */
function strongestNegated(distinct: readonly Literal[]): Literal[] {
  const best = new Map<string, OrderLiteral>(); // side + value type → strongest inner ordering
  for (const l of distinct) {
    if (l.type !== 'not' || !isOrder(l.condition)) continue;
    const c = l.condition;
    // NOTE: `!(x < 5)` implies `!(x < 3)`: x < 3 implies x < 5 (same type), and for a value of
    // another type (or null) both orderings are false. So the negation of the weaker ordering stays.
    const slot = `${isLower(c) ? 'gt' : 'lt'}:${typeof c.value}`;
    const cur = best.get(slot);
    if (cur === undefined || implies(cur, c)) best.set(slot, c);
  }
  if (best.size === 0) return [...distinct];
  const keep = new Set(best.values());
  return distinct.filter((l) => l.type !== 'not' || !isOrder(l.condition) || keep.has(l.condition));
}

/** Drops `!= null` when another literal is false for null anyway. */
function dropNotNull(lits: readonly Literal[]): Literal[] {
  if (!lits.some((l) => l.type === 'not_null')) return [...lits];
  const excludesNull = lits.some((l) => l.type !== 'not_null' && decide(l, null) === false);
  return excludesNull ? lits.filter((l) => l.type !== 'not_null') : [...lits];
}
