/**
 * Single-field predicates: building them in canonical form, and deciding them for a known value
 * with the expression language's own semantics (used by the simplifier, e.g. to see that
 * `x == 1 && x != 1` cannot hold).
 */
import type { JsonValue } from '../expr/ast.js';
import { ExprRuntimeError } from '../expr/errors.js';
import { callFunction, compareValues, jsonEquals, truthy } from '../expr/index.js';
import { ALWAYS, NEVER, canonicalJson, listAtom, unaryAtom, valueAtom, type CompareType, type Literal, type Pred, type TextType } from './predicate.js';

const ORDER_OP = { lt: '<', le: '<=', gt: '>', ge: '>=' } as const;

/**
 * `field <type> value` in canonical form: `== null` is `is_null`, `!= null` is `not_null`, and
 * an ordering against anything but a number or a string is `never`.
 */
export function compareAtom(type: CompareType, field: string, value: JsonValue): Pred {
  if (type === 'eq' || type === 'ne') {
    if (value === null) return unaryAtom(type === 'eq' ? 'is_null' : 'not_null', field);
    return valueAtom(type, field, value);
  }
  // NOTE: DECISIONS.md 2: ordering between anything but two numbers or two strings is false.
  if (typeof value !== 'number' && typeof value !== 'string') return NEVER;
  return valueAtom(type, field, value);
}

/**
 * `field in values` / `field not in values` in canonical form: duplicates removed, an empty list
 * is `never` / `always`, a single value is `eq` / `ne` (so `in [null]` is `is_null`).
 */
export function setAtom(type: 'in' | 'not_in', field: string, values: readonly JsonValue[]): Pred {
  const seen = new Set<string>();
  const distinct: JsonValue[] = [];
  for (const v of values) {
    const k = canonicalJson(v);
    if (!seen.has(k)) {
      seen.add(k);
      distinct.push(v);
    }
  }
  if (distinct.length === 0) return type === 'in' ? NEVER : ALWAYS;
  if (distinct.length === 1) return compareAtom(type === 'in' ? 'eq' : 'ne', field, distinct[0]!);
  return listAtom(type, field, distinct);
}

/** `contains` / `starts_with` / `ends_with` of a field and a known value. */
export function textAtom(type: TextType, field: string, value: JsonValue): Pred {
  // NOTE: the engine's string tests are false when either side is null (functions.ts). For
  // `contains` the field could be a list holding null, but a list is not a column (typed
  // columns, docs/filter.md): a null needle never matches, in every format.
  if (value === null) return NEVER;
  return valueAtom(type, field, value);
}

/**
 * Decides a literal for a known field value with the engine's semantics. `undefined` means the
 * engine fails on that value (a type error), so no row with that value gets through.
 */
export function decide(p: Literal, v: JsonValue): boolean | undefined {
  switch (p.type) {
    case 'eq':
      return jsonEquals(v, p.value);
    case 'ne':
      return !jsonEquals(v, p.value);
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      return compareValues(ORDER_OP[p.type], v, p.value);
    case 'in':
      return p.values.some((x) => jsonEquals(v, x));
    case 'not_in':
      return !p.values.some((x) => jsonEquals(v, x));
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      try {
        return truthy(callFunction(p.type, [v, p.value]));
      } catch (err) {
        if (err instanceof ExprRuntimeError) return undefined;
        throw err;
      }
    case 'is_null':
      return v === null;
    case 'not_null':
      return v !== null;
    case 'truthy':
      return truthy(v);
    case 'falsy':
      return !truthy(v);
    case 'not': {
      const inner = decide(p.condition, v);
      return inner === undefined ? undefined : !inner;
    }
  }
}

/** The values a literal pins its field to (`eq`, `in`, `is_null`), or null when it does not pin it. */
export function pinnedValues(p: Literal): readonly JsonValue[] | null {
  switch (p.type) {
    case 'eq':
      return [p.value];
    case 'in':
      return p.values;
    case 'is_null':
      return [null];
    default:
      return null;
  }
}
