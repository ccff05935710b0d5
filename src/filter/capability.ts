/**
 * What each format can express, checked on the final tree before an emitter runs (SPEC.md: what
 * a format cannot express is a 500 "filter compilation failed": here an `INEXPRESSIBLE`
 * `FilterError`, which the service maps). The emitters can then assume a well-formed tree.
 *
 * - every format: no `unsupported` condition (arithmetic or a function on an unknown field, two
 *   unknown fields compared, `exists` of an unknown field, ...);
 * - sql: comparison and list values are strings, numbers or booleans (SQL has no array or object
 *   literal); string tests take a string (LIKE);
 * - mongo: string tests take a string (`$regex`);
 * - json: anything else.
 */
import type { JsonValue } from '../expr/ast.js';
import { inexpressible, type FilterError } from './errors.js';
import type { Pred } from './predicate.js';
import type { FilterFormat } from './types.js';

function failed(what: string): FilterError {
  return inexpressible(what);
}

function isScalar(v: JsonValue): boolean {
  return v === null || typeof v !== 'object';
}

function kind(v: JsonValue): string {
  return Array.isArray(v) ? 'an array' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Throws an `INEXPRESSIBLE` `FilterError` naming the first condition `format` cannot express. */
export function checkCapability(tree: Pred, format: FilterFormat): void {
  if (tree.type === 'and' || tree.type === 'or') {
    for (const c of tree.conditions) checkCapability(c, format);
    return;
  }
  const problem = atomProblem(tree, format);
  if (problem !== null) throw failed(problem);
}

/**
 * What `format` cannot express in an atom (a node that is not a junction), or null. NOTE (speed):
 * no throw, so that the pipeline can check each distinct atom once (generate.ts).
 */
export function atomProblem(tree: Pred, format: FilterFormat): string | null {
  switch (tree.type) {
    case 'unsupported':
      return `${tree.reason} cannot be expressed as a filter`;
    case 'and':
    case 'or':
      for (const c of tree.conditions) {
        const p = atomProblem(c, format);
        if (p !== null) return p;
      }
      return null;
    case 'not':
      return atomProblem(tree.condition, format);
    case 'eq':
    case 'ne':
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      if (format === 'sql' && !isScalar(tree.value)) {
        return `comparing field '${tree.field}' with ${kind(tree.value)} is not supported in sql format`;
      }
      return null;
    case 'in':
    case 'not_in':
      if (format === 'sql' && !tree.values.every(isScalar)) {
        return `a list with arrays or objects for field '${tree.field}' is not supported in sql format`;
      }
      return null;
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      if (format !== 'json' && typeof tree.value !== 'string') {
        return `${tree.type}(${tree.field}, ${JSON.stringify(tree.value)}) needs a string value in ${format} format`;
      }
      return null;
    default:
      return null;
  }
}
