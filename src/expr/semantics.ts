/**
 * The value semantics of the expression language (DECISIONS.md 2 "Semantics"), as plain
 * functions on JSON values. The compiler specialises these for speed, the test reference
 * interpreter and the filter's partial evaluator call them directly; all must agree.
 */
import type { BinaryOp, JsonValue, UnaryOp } from './ast.js';
import { charge, checkString } from './budget.js';
import { ExprRuntimeError } from './errors.js';

/** Truthiness: `false`, `null`, `0` and `""` are false; everything else (incl. `[]`, `{}`) is true. */
export function truthy(v: JsonValue): boolean {
  return !(v === false || v === null || v === 0 || v === '');
}

/** Name of a value's type as used in error messages: null, boolean, number, string, array, object. */
export function typeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/**
 * Deep JSON equality: same type and value; numbers by value; arrays in order; objects by own keys. No coercion.
 * NOTE (work budget): comparing two arrays or objects counts their length as operations
 * (budget.ts), charged before the loop so one comparison never outruns the budget by more
 * than its own size.
 */
export function jsonEquals(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    charge(a.length);
    for (let i = 0; i < a.length; i++) if (!jsonEquals(a[i]!, b[i]!)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  charge(ka.length);
  for (const k of ka) {
    if (!Object.hasOwn(b, k) || !jsonEquals(a[k]!, b[k]!)) return false;
  }
  return true;
}

/**
 * Compares two strings by Unicode code point: negative, zero or positive.
 * NOTE: JavaScript's `<` on strings compares UTF-16 code units, which orders U+E000..U+FFFF
 * after supplementary characters; the spec orders by code point, so when the first differing
 * code units are both at or above U+D800 the code points there are compared instead (a lone
 * surrogate is its own code point: `"\ude00" < "😀"`).
 */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  // NOTE (work budget): a scan of a long string counts its length (budget.ts).
  if (n > 64) charge(n);
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return ca >= 0xd800 && cb >= 0xd800 ? compareCodePointsAt(a, b, i) : ca - cb;
  }
  return a.length - b.length;
}

/** Code point order of `a` and `b`, equal before unit `i` and different at it. */
function compareCodePointsAt(a: string, b: string, i: number): number {
  // Start at the code point holding unit i: one unit back when the (shared) unit before is a
  // high surrogate, since unit i may be the second half of its pair.
  let j = i > 0 && (a.charCodeAt(i - 1) & 0xfc00) === 0xd800 ? i - 1 : i;
  for (;;) {
    const pa = a.codePointAt(j);
    const pb = b.codePointAt(j);
    if (pa === undefined || pb === undefined) return (pa === undefined ? 0 : 1) - (pb === undefined ? 0 : 1);
    if (pa !== pb) return pa - pb;
    j += pa > 0xffff ? 2 : 1;
  }
}

/** Ordering `< <= > >=`: numbers with numbers, strings with strings (by code point); any other pair is false. */
export function compareValues(op: '<' | '<=' | '>' | '>=', a: JsonValue, b: JsonValue): boolean {
  let c: number;
  if (typeof a === 'number' && typeof b === 'number') {
    c = a < b ? -1 : a > b ? 1 : 0;
  } else if (typeof a === 'string' && typeof b === 'string') {
    c = compareStrings(a, b);
  } else {
    return false;
  }
  switch (op) {
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

/**
 * Membership shared by `needle in haystack` and `contains(haystack, needle)`: element of an
 * array (deep equality), substring of a string; a null haystack or a null needle in a string is
 * false; a non-string needle in a string, or a haystack that is neither array, string nor null,
 * is a type error. `who` names the operation in the error message.
 */
export function containsValue(haystack: JsonValue, needle: JsonValue, who: string): boolean {
  if (Array.isArray(haystack)) {
    // NOTE (work budget): membership counts the elements it looks at (budget.ts).
    for (let i = 0; i < haystack.length; i++) {
      if (jsonEquals(haystack[i]!, needle)) {
        charge(i + 1);
        return true;
      }
    }
    charge(haystack.length);
    return false;
  }
  if (typeof haystack === 'string') {
    if (typeof needle === 'string') {
      charge(haystack.length);
      return haystack.includes(needle);
    }
    if (needle === null) return false;
    throw new ExprRuntimeError('TYPE_ERROR', `${who} cannot look for a ${typeName(needle)} in a string`);
  }
  if (haystack === null) return false;
  throw new ExprRuntimeError('TYPE_ERROR', `${who} expects an array or a string, got ${typeName(haystack)}`);
}

/** Ensures an arithmetic result is a finite number (results must stay JSON). */
export function finite(r: number, a: number, op: string, b: number): number {
  if (Number.isFinite(r)) return r;
  throw new ExprRuntimeError('TYPE_ERROR', `result of ${a} ${op} ${b} is out of range`);
}

/** Unary operators: `!` on truthiness (any value), `-` on numbers only. */
export function applyUnary(op: UnaryOp, v: JsonValue): JsonValue {
  if (op === '!') return !truthy(v);
  if (typeof v === 'number') {
    if (Number.isFinite(v)) return -v;
    throw new ExprRuntimeError('TYPE_ERROR', `result of -${v} is not a finite number`);
  }
  throw new ExprRuntimeError('TYPE_ERROR', `cannot negate ${typeName(v)}`);
}

/**
 * Every binary operator on two already evaluated values. `&&`/`||` are accepted too (on
 * truthiness, both sides known). Throws `ExprRuntimeError` for type errors, division or modulo
 * by zero and results that are not finite numbers.
 */
export function applyBinary(op: BinaryOp, a: JsonValue, b: JsonValue): JsonValue {
  switch (op) {
    case '||':
      return truthy(a) || truthy(b);
    case '&&':
      return truthy(a) && truthy(b);
    case '==':
      return jsonEquals(a, b);
    case '!=':
      return !jsonEquals(a, b);
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compareValues(op, a, b);
    case 'in':
      return containsValue(b, a, "'in'");
    case 'not in':
      return !containsValue(b, a, "'not in'");
    case '+':
      if (typeof a === 'number' && typeof b === 'number') return finite(a + b, a, '+', b);
      if (typeof a === 'string' && typeof b === 'string') return checkString(a + b);
      throw new ExprRuntimeError('TYPE_ERROR', `cannot add ${typeName(a)} and ${typeName(b)}`);
    case '-':
      if (typeof a === 'number' && typeof b === 'number') return finite(a - b, a, '-', b);
      throw new ExprRuntimeError('TYPE_ERROR', `cannot subtract ${typeName(b)} from ${typeName(a)}`);
    case '*':
      if (typeof a === 'number' && typeof b === 'number') return finite(a * b, a, '*', b);
      throw new ExprRuntimeError('TYPE_ERROR', `cannot multiply ${typeName(a)} and ${typeName(b)}`);
    case '/':
      if (typeof a === 'number' && typeof b === 'number') {
        if (b === 0) throw new ExprRuntimeError('DIVISION_BY_ZERO', 'division by zero');
        return finite(a / b, a, '/', b);
      }
      throw new ExprRuntimeError('TYPE_ERROR', `cannot divide ${typeName(a)} by ${typeName(b)}`);
    case '%':
      if (typeof a === 'number' && typeof b === 'number') {
        if (b === 0) throw new ExprRuntimeError('DIVISION_BY_ZERO', 'modulo by zero');
        return finite(a % b, a, '%', b);
      }
      throw new ExprRuntimeError('TYPE_ERROR', `cannot compute ${typeName(a)} modulo ${typeName(b)}`);
  }
}

/**
 * Reads a path from a root value, own properties only: a string segment reads an own key of a
 * (non-array) object, a number segment an index of an array. `found` is false when a step does
 * not resolve (absent key, index out of range, stepping into anything else), or reads `undefined`.
 */
export function readPath(root: unknown, segments: readonly (string | number)[]): { found: boolean; value: JsonValue } {
  let cur: unknown = root;
  for (const seg of segments) {
    if (typeof seg === 'number') {
      if (!Array.isArray(cur) || seg >= cur.length) return { found: false, value: null };
      cur = cur[seg];
    } else {
      if (typeof cur !== 'object' || cur === null || Array.isArray(cur) || !Object.hasOwn(cur, seg)) {
        return { found: false, value: null };
      }
      cur = (cur as Record<string, unknown>)[seg];
    }
    if (cur === undefined) return { found: false, value: null };
  }
  if (cur === undefined) return { found: false, value: null };
  return { found: true, value: cur as JsonValue };
}
