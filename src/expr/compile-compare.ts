/**
 * Specialised closures for `path op literal` tests, the most common condition shape
 * (`user.age >= 18`, `status == "active"`, `country in ["US", "CA"]`). In lenient mode a path of
 * 1 to 3 plain keys is read inline in the test closure (one closure per expression); other
 * paths and strict mode compose a compiled reader with the same tests.
 *
 * Every test reads a path value `x` that is `undefined` when the path does not resolve, which
 * the tests treat exactly as `null` (lenient semantics); strict readers never yield `undefined`.
 */
import type { JsonValue, PathNode } from './ast.js';
import type { CompiledExpr } from './compiled-expr.js';
import { compileRawReader, compileValueReader, directKeys, internalize, type Bag } from './compile-path.js';

/** A primitive literal value. */
export type Primitive = null | boolean | number | string;

/** The test applied to the path value. */
export type PathTest =
  | { readonly kind: '==' | '!='; readonly value: Primitive }
  | { readonly kind: '<' | '<=' | '>' | '>='; readonly value: number | string }
  | { readonly kind: 'in' | 'not in'; readonly values: readonly Primitive[] };

/** Lists up to this size are scanned; longer ones use a Set (both compare primitives by value). */
const SET_THRESHOLD = 8;

/**
 * True when native `<` on strings agrees with code point order against this literal: all code
 * units below U+D800 (see compareStrings in semantics.ts).
 */
export function isLowString(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0xd800) return false;
  return true;
}

/** Internalizes a string literal (see internalize), so `===` against input strings is a pointer check when they match. */
function intern<T extends Primitive>(v: T): T {
  return (typeof v === 'string' ? internalize(v) : v) as T;
}

function isNullish(x: unknown): boolean {
  return x === null || x === undefined;
}

function member(list: readonly Primitive[], set: ReadonlySet<Primitive> | null, x: unknown): boolean {
  const v = x === undefined ? null : x;
  if (set !== null) return set.has(v as Primitive);
  for (let k = 0; k < list.length; k++) if (list[k] === v) return true;
  return false;
}

// NOTE: `typeof x === t` with t the literal's type ('number' or 'string') implements the spec
// rule "ordering only between numbers or between strings, else false" in one comparison.
function lt(x: unknown, c: number | string, t: string): boolean {
  return typeof x === t && (x as number) < (c as number);
}
function le(x: unknown, c: number | string, t: string): boolean {
  return typeof x === t && (x as number) <= (c as number);
}
function gt(x: unknown, c: number | string, t: string): boolean {
  return typeof x === t && (x as number) > (c as number);
}
function ge(x: unknown, c: number | string, t: string): boolean {
  return typeof x === t && (x as number) >= (c as number);
}

/**
 * Compiles `path <test>`. The caller guarantees the literal fits the test: ordering only with a
 * number or a "low" string (isLowString), membership only in primitives.
 */
export function compilePathTest(path: PathNode, test: PathTest, strict: boolean): CompiledExpr {
  const keys = strict ? null : directKeys(path);
  const n = keys === null ? 0 : keys.length;
  const [a, b, d] = (keys ?? []) as [string, string, string];
  const r: Reader = n > 0 ? unused : strict ? compileValueReader(path, true) : compileRawReader(path);
  switch (test.kind) {
    case '==': {
      const c = intern(test.value);
      if (c === null) {
        if (n === 1) return (i) => isNullish((i as Bag)?.[a]);
        if (n === 2) return (i) => isNullish((i as Bag)?.[a]?.[b]);
        if (n === 3) return (i) => isNullish((i as Bag)?.[a]?.[b]?.[d]);
        return (i, v) => isNullish(r(i, v));
      }
      if (n === 1) return (i) => (i as Bag)?.[a] === c;
      if (n === 2) return (i) => (i as Bag)?.[a]?.[b] === c;
      if (n === 3) return (i) => (i as Bag)?.[a]?.[b]?.[d] === c;
      return (i, v) => r(i, v) === c;
    }
    case '!=': {
      const c = intern(test.value);
      if (c === null) {
        if (n === 1) return (i) => !isNullish((i as Bag)?.[a]);
        if (n === 2) return (i) => !isNullish((i as Bag)?.[a]?.[b]);
        if (n === 3) return (i) => !isNullish((i as Bag)?.[a]?.[b]?.[d]);
        return (i, v) => !isNullish(r(i, v));
      }
      if (n === 1) return (i) => (i as Bag)?.[a] !== c;
      if (n === 2) return (i) => (i as Bag)?.[a]?.[b] !== c;
      if (n === 3) return (i) => (i as Bag)?.[a]?.[b]?.[d] !== c;
      return (i, v) => r(i, v) !== c;
    }
    case '<':
    case '<=':
    case '>':
    case '>=':
      return ordering(test.kind, intern(test.value), n, a, b, d, r);
    case 'in':
    case 'not in': {
      const list = test.values.map(intern);
      const set = list.length > SET_THRESHOLD ? new Set(list) : null;
      if (test.kind === 'in') {
        if (n === 1) return (i) => member(list, set, (i as Bag)?.[a]);
        if (n === 2) return (i) => member(list, set, (i as Bag)?.[a]?.[b]);
        if (n === 3) return (i) => member(list, set, (i as Bag)?.[a]?.[b]?.[d]);
        return (i, v) => member(list, set, r(i, v));
      }
      if (n === 1) return (i) => !member(list, set, (i as Bag)?.[a]);
      if (n === 2) return (i) => !member(list, set, (i as Bag)?.[a]?.[b]);
      if (n === 3) return (i) => !member(list, set, (i as Bag)?.[a]?.[b]?.[d]);
      return (i, v) => !member(list, set, r(i, v));
    }
  }
}

type Reader = (input: unknown, vars: Parameters<CompiledExpr>[1]) => JsonValue | undefined;

/** Placeholder reader for the inline shapes, which read the path themselves. */
const unused: Reader = () => undefined;

function ordering(op: '<' | '<=' | '>' | '>=', c: number | string, n: number, a: string, b: string, d: string, r: Reader): CompiledExpr {
  const t = typeof c;
  switch (op) {
    case '<':
      if (n === 1) return (i) => lt((i as Bag)?.[a], c, t);
      if (n === 2) return (i) => lt((i as Bag)?.[a]?.[b], c, t);
      if (n === 3) return (i) => lt((i as Bag)?.[a]?.[b]?.[d], c, t);
      return (i, v) => lt(r(i, v), c, t);
    case '<=':
      if (n === 1) return (i) => le((i as Bag)?.[a], c, t);
      if (n === 2) return (i) => le((i as Bag)?.[a]?.[b], c, t);
      if (n === 3) return (i) => le((i as Bag)?.[a]?.[b]?.[d], c, t);
      return (i, v) => le(r(i, v), c, t);
    case '>':
      if (n === 1) return (i) => gt((i as Bag)?.[a], c, t);
      if (n === 2) return (i) => gt((i as Bag)?.[a]?.[b], c, t);
      if (n === 3) return (i) => gt((i as Bag)?.[a]?.[b]?.[d], c, t);
      return (i, v) => gt(r(i, v), c, t);
    case '>=':
      if (n === 1) return (i) => ge((i as Bag)?.[a], c, t);
      if (n === 2) return (i) => ge((i as Bag)?.[a]?.[b], c, t);
      if (n === 3) return (i) => ge((i as Bag)?.[a]?.[b]?.[d], c, t);
      return (i, v) => ge(r(i, v), c, t);
  }
}
