/**
 * Evaluates a `json`-format filter (the predicate tree of SPEC.md) on one row, independently of
 * src/filter, with the expression language's semantics for each atom:
 *
 * - `engine`: the tree read as the engine would (`ne` is true for null, `not` is the engine's `!`).
 * - `sql`: what a SQL database does with the emitted SQL (docs/filter.md "NULL columns"): on a
 *   NULL column `is_null` and an `in` list that contains null are true, every other atom is
 *   NULL and so not selected (`ne`, `not_in`, `not (...)` included); on a non-null column the
 *   atom is exact. The tree is in negation normal form (`not` only wraps an atom) and AND / OR
 *   are monotone, so treating a NULL atom as false gives the WHERE result.
 */
import type { JsonValue } from '../../../src/expr/ast.js';
import { callFunction, compareValues, jsonEquals, truthy } from '../../../src/expr/index.js';
import type { JsonFilterNode } from '../../../src/filter/index.js';

const ORDER = { lt: '<', le: '<=', gt: '>', ge: '>=' } as const;

/** Reads a column of the row (null when the row has no value for it). */
export type ColumnReader = (column: string) => JsonValue;

/** True when the tree selects the row. */
export function evalTree(node: JsonFilterNode, get: ColumnReader, mode: 'engine' | 'sql'): boolean {
  switch (node.type) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'and':
      return node.conditions.every((c) => evalTree(c, get, mode));
    case 'or':
      return node.conditions.some((c) => evalTree(c, get, mode));
    case 'not':
      if (mode === 'sql' && isNullAtom(node.condition, get)) return false;
      return !evalTree(node.condition, get, mode);
    default: {
      const v = get(node.field);
      if (mode === 'sql' && v === null) {
        if (node.type === 'is_null') return true;
        if (node.type === 'in') return node.values.includes(null);
        return false;
      }
      return atom(node, v);
    }
  }
}

function isNullAtom(node: JsonFilterNode, get: ColumnReader): boolean {
  return 'field' in node && get(node.field) === null;
}

function atom(node: Exclude<JsonFilterNode, { type: 'always' | 'never' | 'and' | 'or' | 'not' }>, v: JsonValue): boolean {
  switch (node.type) {
    case 'eq':
      return jsonEquals(v, node.value);
    case 'ne':
      return !jsonEquals(v, node.value);
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      return compareValues(ORDER[node.type], v, node.value);
    case 'in':
      return node.values.some((x) => jsonEquals(v, x));
    case 'not_in':
      return !node.values.some((x) => jsonEquals(v, x));
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      return truthy(callFunction(node.type, [v, node.value]));
    case 'is_null':
      return v === null;
    case 'not_null':
      return v !== null;
  }
}
