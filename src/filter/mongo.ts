/**
 * MongoDB emitter (SPEC.md filter "Document-database output"): a document usable as a `$match`
 * stage. Pure; regex text comes from escape.ts.
 *
 * Renderings beyond the spec table (decisions, see docs/filter.md):
 * - `$gte`, `$lt`, `$lte` like `$gt`;
 * - `not (x > v)` as `{x: {$not: {$gt: v}}}` and `not contains` as `{x: {$not: {$regex: ...}}}`:
 *   `$not` also matches null and missing fields, exactly like the engine's `!`;
 * - a bare field as a condition (truthiness) as `{x: {$nin: [null, false, 0, ""]}}`, its
 *   negation `{x: {$in: [null, false, 0, ""]}}`;
 * - an equality with an array or object value as `{x: {$eq: v}}`, so an object value can never be
 *   read as operators.
 */
import type { JsonValue } from '../expr/ast.js';
import { regexPattern } from './escape.js';
import type { Pred } from './predicate.js';
import type { MongoFilter } from './types.js';

const OPS = { ne: '$ne', lt: '$lt', le: '$lte', gt: '$gt', ge: '$gte' } as const;
const FALSY_VALUES: readonly JsonValue[] = Object.freeze([null, false, 0, '']);

/** Renders the tree as a Mongo filter document. */
export function toMongo(tree: Pred, columns: ReadonlyMap<string, string>): MongoFilter {
  const done = new Map<Pred, MongoFilter>();
  // NOTE (speed): paths share most of their conditions (the same objects), so each atom is
  // rendered once per answer and its document reused where it occurs again (serialization writes
  // it at each place).
  const walk = (p: Pred): MongoFilter => {
    if (p.type === 'and' || p.type === 'or') {
      const parts: MongoFilter[] = [];
      for (const c of p.conditions) parts.push(walk(c));
      return p.type === 'and' ? { $and: parts } : { $or: parts };
    }
    let d = done.get(p);
    if (d === undefined) {
      d = render(p, columns);
      done.set(p, d);
    }
    return d;
  };
  return walk(tree);
}

/**
 * `{[column]: value}`. NOTE (speed): built by assignment, about three times faster than a
 * computed-key literal; columns.ts refuses `__proto__`, the one key assignment would not store.
 */
function on(columns: ReadonlyMap<string, string>, field: string, value: JsonValue): MongoFilter {
  const c = columns.get(field);
  if (c === undefined || c === '__proto__') throw new Error(`internal: no usable column for field ${field}`);
  const o: MongoFilter = {};
  o[c] = value;
  return o;
}

function op(name: string, value: JsonValue): MongoFilter {
  const o: MongoFilter = {};
  o[name] = value;
  return o;
}

function render(p: Pred, columns: ReadonlyMap<string, string>): MongoFilter {
  switch (p.type) {
    case 'always':
      return {};
    case 'never':
      return { $expr: false };
    case 'and':
    case 'or': {
      const parts: MongoFilter[] = [];
      for (const c of p.conditions) parts.push(render(c, columns));
      return p.type === 'and' ? { $and: parts } : { $or: parts };
    }
    case 'eq':
      return on(columns, p.field, p.value !== null && typeof p.value === 'object' ? { $eq: p.value } : p.value);
    case 'ne':
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      return on(columns, p.field, op(OPS[p.type], p.value));
    case 'in':
      return on(columns, p.field, { $in: [...p.values] });
    case 'not_in':
      return on(columns, p.field, { $nin: [...p.values] });
    case 'contains':
    case 'starts_with':
    case 'ends_with':
      return on(columns, p.field, { $regex: regexPattern(p.type, p.value as string) });
    case 'not': {
      const c = p.condition;
      const inner: MongoFilter =
        c.type === 'contains' || c.type === 'starts_with' || c.type === 'ends_with'
          ? { $regex: regexPattern(c.type, c.value as string) }
          : op(OPS[c.type as 'lt'], c.value);
      return on(columns, c.field, { $not: inner });
    }
    case 'is_null':
      return on(columns, p.field, null);
    case 'not_null':
      return on(columns, p.field, { $ne: null, $exists: true });
    case 'truthy':
      return on(columns, p.field, { $nin: [...FALSY_VALUES] });
    case 'falsy':
      return on(columns, p.field, { $in: [...FALSY_VALUES] });
    case 'unsupported':
      throw new Error(`internal: unsupported condition reached the Mongo emitter: ${p.reason}`);
  }
}
