/**
 * Predicate-tree emitter (SPEC.md filter "Predicate-tree output", format `json`): the pipeline's
 * tree with fields replaced by their columns, using only the types of the spec table.
 *
 * NOTE: a bare field used as a condition (engine truthiness) has no type of its own in the
 * table; it is written as `{type: "not_in", values: [null, false, 0, ""]}` (and its negation as
 * `in`), which is exactly the engine's truthiness for scalar values.
 */
import type { JsonValue } from '../expr/ast.js';
import type { Pred } from './predicate.js';
import type { JsonFilterNode } from './types.js';

const FALSY_VALUES: readonly JsonValue[] = Object.freeze([null, false, 0, '']);

/** Renders the tree as the JSON predicate tree. */
export function toJsonTree(tree: Pred, columns: ReadonlyMap<string, string>): JsonFilterNode {
  const col = (field: string): string => {
    const c = columns.get(field);
    if (c === undefined) throw new Error(`internal: no column for field ${field}`);
    return c;
  };
  // NOTE (speed): paths share most of their conditions (the same objects), so each atom is
  // rendered once per answer and its node reused where it occurs again (serialization writes it
  // at each place).
  const done = new Map<Pred, JsonFilterNode>();
  const render = (p: Pred): JsonFilterNode => {
    if (p.type === 'and' || p.type === 'or') return { type: p.type, conditions: p.conditions.map(render) };
    let n = done.get(p);
    if (n === undefined) {
      n = atom(p);
      done.set(p, n);
    }
    return n;
  };
  const atom = (p: Pred): JsonFilterNode => {
    switch (p.type) {
      case 'always':
      case 'never':
        return { type: p.type };
      case 'and':
      case 'or':
        return { type: p.type, conditions: p.conditions.map(render) };
      case 'not':
        return { type: 'not', condition: render(p.condition) };
      case 'eq':
      case 'ne':
      case 'lt':
      case 'le':
      case 'gt':
      case 'ge':
      case 'contains':
      case 'starts_with':
      case 'ends_with':
        return { type: p.type, field: col(p.field), value: p.value };
      case 'in':
      case 'not_in':
        return { type: p.type, field: col(p.field), values: [...p.values] };
      case 'is_null':
      case 'not_null':
        return { type: p.type, field: col(p.field) };
      case 'truthy':
        return { type: 'not_in', field: col(p.field), values: [...FALSY_VALUES] };
      case 'falsy':
        return { type: 'in', field: col(p.field), values: [...FALSY_VALUES] };
      case 'unsupported':
        throw new Error(`internal: unsupported condition reached the JSON emitter: ${p.reason}`);
    }
  };
  return render(tree);
}
