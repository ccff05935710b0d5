/**
 * Concrete inputs from a leaf of the search (solve.ts): one value per field, chosen among values
 * the literals suggest and checked against every literal of the field with the engine's own
 * semantics (atoms.ts `decide`). The caller proves the input by executing it.
 */
import type { JsonValue } from '../expr/ast.js';
import { parse } from '../expr/index.js';
import { decide } from '../filter/atoms.js';
import { fieldOf, isLiteral, type Literal } from '../filter/predicate.js';
import type { Path } from '../filter/simplify.js';

/** An input object. */
export type Input = { [key: string]: JsonValue };

/** Values worth trying for any field, after the ones the literals suggest. */
const POOL: readonly JsonValue[] = Object.freeze([null, 0, 1, -1, '', 'x', true, false, 1000000, -1000000, 'zzzz', []]);

/**
 * Values the literals of one field suggest, plainest first: their operands and neighbours, null,
 * values joining two operands, the pool, and last the operands wrapped in a list (for `contains`).
 */
function suggestions(lits: readonly Literal[]): JsonValue[] {
  const operands: JsonValue[] = [];
  for (const l of lits) {
    const atom = l.type === 'not' ? l.condition : l;
    // NOTE: every predicate has every field (predicate.ts), the ones its kind lacks undefined.
    if (atom.type === 'in' || atom.type === 'not_in') operands.push(...atom.values);
    else if ('value' in atom && atom.value !== undefined) operands.push(atom.value);
  }
  const out: JsonValue[] = [];
  for (const v of operands) {
    out.push(v);
    if (typeof v === 'number') out.push(v + 1, v - 1, v + 0.5, v - 0.5);
    else if (typeof v === 'string') out.push(`${v}~`, v.slice(0, -1), `a${v}`, `~${v}~`);
  }
  out.push(null);
  // Pairs: a string joining two operands (`>= "b"` and `ends_with "a"`: "ba"), a number between two bounds.
  for (const u of operands) {
    for (const v of operands) {
      if (typeof u === 'string' && typeof v === 'string') out.push(u + v);
      else if (typeof u === 'number' && typeof v === 'number' && u < v) out.push((u + v) / 2);
    }
  }
  out.push(...POOL);
  for (const v of operands) if (v !== null) out.push([v]);
  return out;
}

/** A value satisfying every literal of one field, or undefined when none of the tried ones does. */
export function pickValue(lits: readonly Literal[]): JsonValue | undefined {
  for (const v of suggestions(lits)) if (lits.every((l) => decide(l, v) === true)) return v;
  return undefined;
}

/**
 * An input satisfying the literals of `leaf` (opaque conditions are left to execution), with
 * `fill` for every other field given (null: a strict ruleset must find each field it reads).
 * Undefined when some field has no value found or the paths do not fit in one object.
 */
export function inputFor(leaf: Path, fill: readonly string[]): Input | undefined {
  const byField = new Map<string, Literal[]>();
  for (const c of leaf) {
    if (!isLiteral(c)) continue;
    const f = fieldOf(c);
    const list = byField.get(f);
    if (list === undefined) byField.set(f, [c]);
    else list.push(c);
  }
  const root: Input = {};
  for (const [field, lits] of byField) {
    const v = pickValue(lits);
    if (v === undefined || !setPath(root, field, v)) return undefined;
  }
  for (const field of fill) if (!byField.has(field)) setPath(root, field, null, true);
  return root;
}

/** Segments of a rule field path (`user.age`, `items[0].price`), or null when it is not a plain input path. */
export function pathSegments(field: string): readonly (string | number)[] | null {
  try {
    const node = parse(field);
    return node.kind === 'path' && node.scope === 'input' ? node.segments : null;
  } catch {
    return null;
  }
}

/**
 * Sets `value` at `field` in `root`, creating objects and arrays on the way; false when the path
 * crosses a value already set (or `soft` and something is already there: a filler never overwrites).
 */
export function setPath(root: Input, field: string, value: JsonValue, soft = false): boolean {
  const segs = pathSegments(field);
  if (segs === null || segs.length === 0) return false;
  let cur: JsonValue = root;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const last = i === segs.length - 1;
    const container = cur as { [k: string]: JsonValue } & JsonValue[];
    if (typeof cur !== 'object' || cur === null || Array.isArray(cur) !== (typeof seg === 'number')) return false;
    const key = seg as never;
    if (last) {
      if (container[key] !== undefined) return soft ? true : false;
      if (Array.isArray(cur)) while (cur.length < (seg as number)) cur.push(null);
      container[key] = value as never;
      return true;
    }
    if (container[key] === undefined) {
      if (Array.isArray(cur)) while (cur.length < (seg as number)) cur.push(null);
      container[key] = (typeof segs[i + 1] === 'number' ? [] : {}) as never;
    }
    cur = container[key] as JsonValue;
  }
  return false;
}
