/**
 * Built-in functions of the expression language (DECISIONS.md 2 "Functions"): their arity table
 * (used by the parser's static checks) and their implementations on evaluated arguments.
 *
 * Null handling (a decision, see docs/expressions.md): string and number functions return null
 * for a null argument; the tests `contains`, `starts_with`, `ends_with` are false when either
 * side is null; `min`, `max`, `sum`, `avg` skip null elements.
 */
import type { JsonValue } from './ast.js';
import { charge, checkString } from './budget.js';
import { ExprRuntimeError } from './errors.js';
import { containsValue, typeName } from './semantics.js';
import { dateAdd, dateDiff, dateFn, dayFn, monthFn, nowFn, weekdayFn, yearFn } from './dates.js';

/** Arity of a built-in function; `maxArgs` is `Infinity` for variadic functions. */
export interface FunctionSpec {
  readonly minArgs: number;
  readonly maxArgs: number;
}

function spec(minArgs: number, maxArgs: number): FunctionSpec {
  return Object.freeze({ minArgs, maxArgs });
}

/**
 * Every built-in function name with its arity, including `exists` (which the compiler handles
 * itself, since it looks at a path rather than a value). Null-prototype object: look names up
 * with `Object.hasOwn` or `isFunctionName`.
 */
export const FUNCTIONS: Readonly<Record<string, FunctionSpec>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, FunctionSpec>, {
    contains: spec(2, 2),
    starts_with: spec(2, 2),
    ends_with: spec(2, 2),
    is_null: spec(1, 1),
    exists: spec(1, 1),
    coalesce: spec(1, Infinity),
    len: spec(1, 1),
    upper: spec(1, 1),
    lower: spec(1, 1),
    trim: spec(1, 1),
    abs: spec(1, 1),
    round: spec(1, 1),
    floor: spec(1, 1),
    ceil: spec(1, 1),
    min: spec(1, Infinity),
    max: spec(1, Infinity),
    sum: spec(1, 1),
    avg: spec(1, 1),
    // Dates (dates.ts, EXTENSIONS.md 3).
    now: spec(0, 0),
    date: spec(1, 1),
    date_add: spec(3, 3),
    date_diff: spec(3, 3),
    year: spec(1, 1),
    month: spec(1, 1),
    day: spec(1, 1),
    weekday: spec(1, 1),
  }),
);

/** True when `name` is a built-in function. */
export function isFunctionName(name: string): boolean {
  return Object.hasOwn(FUNCTIONS, name);
}

/** Implementation of a one-argument function. */
export type Impl1 = (a: JsonValue) => JsonValue;
/** Implementation of a two-argument function. */
export type Impl2 = (a: JsonValue, b: JsonValue) => JsonValue;
/** Implementation of a variadic function (the array is only read, never kept). */
export type ImplN = (args: readonly JsonValue[]) => JsonValue;

function typeError(message: string): ExprRuntimeError {
  return new ExprRuntimeError('TYPE_ERROR', message);
}

/**
 * A string-to-string function. NOTE (work budget): it counts the length of its argument as
 * operations and its result is checked against `--max-value-bytes` (`upper` can grow a string).
 */
function stringFn(name: string, f: (s: string) => string): Impl1 {
  return (a) => {
    if (typeof a === 'string') {
      charge(a.length);
      return checkString(f(a));
    }
    if (a === null) return null;
    throw typeError(`${name} expects a string, got ${typeName(a)}`);
  };
}

function numberFn(name: string, f: (x: number) => number): Impl1 {
  return (a) => {
    if (typeof a === 'number') {
      const r = f(a);
      if (!Number.isFinite(r)) throw typeError(`result of ${name} is not a finite number`);
      return r === 0 ? 0 : r; // NOTE: normalises -0 (e.g. ceil(-0.5)) so results print and compare as 0.
    }
    if (a === null) return null;
    throw typeError(`${name} expects a number, got ${typeName(a)}`);
  };
}

function affixFn(name: string, test: (s: string, p: string) => boolean): Impl2 {
  return (s, p) => {
    if (s === null || p === null) return false;
    if (typeof s === 'string' && typeof p === 'string') {
      if (p.length > 64) charge(p.length); // NOTE (work budget): a long affix counts its length.
      return test(s, p);
    }
    throw typeError(`${name} expects two strings, got ${typeName(s)} and ${typeName(p)}`);
  };
}

/** Number of Unicode code points in a string (a surrogate pair counts once). */
function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

/** The numbers of a `sum`/`avg` array, nulls skipped; null for a null argument. */
function numbersOf(name: string, a: JsonValue): number[] | null {
  if (a === null) return null;
  if (!Array.isArray(a)) throw typeError(`${name} expects an array of numbers, got ${typeName(a)}`);
  charge(a.length); // NOTE (work budget): one operation per element.
  const out: number[] = [];
  for (const x of a) {
    if (typeof x === 'number') out.push(x);
    else if (x !== null) throw typeError(`${name} expects an array of numbers, got an element of type ${typeName(x)}`);
  }
  return out;
}

function sumOf(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** `min` / `max`: several numbers or one array of numbers; nulls skipped; none left gives null. */
function extremum(name: string, pickFirst: (a: number, b: number) => boolean): ImplN {
  return (args) => {
    let items: readonly JsonValue[] = args;
    if (args.length === 1) {
      const only = args[0]!;
      if (Array.isArray(only)) {
        charge(only.length); // NOTE (work budget): one operation per element.
        items = only;
      }
    }
    let best: number | null = null;
    for (const x of items) {
      if (typeof x === 'number') {
        if (best === null || pickFirst(x, best)) best = x;
      } else if (x !== null) {
        throw typeError(`${name} expects numbers or one array of numbers, got ${typeName(x)}`);
      }
    }
    return best;
  };
}

/** One-argument functions. */
export const IMPLS_1: Readonly<Record<string, Impl1>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, Impl1>, {
    is_null: (a: JsonValue) => a === null,
    len: (a: JsonValue): JsonValue => {
      if (typeof a === 'string') {
        if (a.length > 64) charge(a.length); // NOTE (work budget): counting code points scans the string.
        return codePointLength(a);
      }
      if (Array.isArray(a)) return a.length;
      if (a === null) return null;
      if (typeof a === 'object') return Object.keys(a).length;
      throw typeError(`len expects a string, an array or an object, got ${typeName(a)}`);
    },
    upper: stringFn('upper', (s) => s.toUpperCase()),
    lower: stringFn('lower', (s) => s.toLowerCase()),
    trim: stringFn('trim', (s) => s.trim()),
    abs: numberFn('abs', Math.abs),
    // Half away from zero: Math.round rounds halves up, so round the magnitude.
    round: numberFn('round', (x) => (x < 0 ? -Math.round(-x) : Math.round(x))),
    floor: numberFn('floor', Math.floor),
    ceil: numberFn('ceil', Math.ceil),
    sum: (a: JsonValue): JsonValue => {
      const xs = numbersOf('sum', a);
      if (xs === null) return null;
      const s = sumOf(xs);
      if (!Number.isFinite(s)) throw typeError('result of sum is out of range');
      return s;
    },
    avg: (a: JsonValue): JsonValue => {
      const xs = numbersOf('avg', a);
      if (xs === null || xs.length === 0) return null;
      const s = sumOf(xs);
      if (Number.isFinite(s)) return s / xs.length;
      // The plain sum overflowed; the mean of finite numbers is finite, so sum the scaled values.
      let m = 0;
      for (const x of xs) m += x / xs.length;
      return m;
    },
    date: dateFn,
    year: yearFn,
    month: monthFn,
    day: dayFn,
    weekday: weekdayFn,
  }),
);

/** Two-argument functions. */
export const IMPLS_2: Readonly<Record<string, Impl2>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, Impl2>, {
    contains: (h: JsonValue, n: JsonValue) => containsValue(h, n, 'contains'),
    starts_with: affixFn('starts_with', (s, p) => s.startsWith(p)),
    ends_with: affixFn('ends_with', (s, p) => s.endsWith(p)),
  }),
);

/** Variadic functions. */
export const IMPLS_N: Readonly<Record<string, ImplN>> = Object.freeze(
  Object.assign(Object.create(null) as Record<string, ImplN>, {
    coalesce: (args: readonly JsonValue[]) => {
      for (const a of args) if (a !== null) return a;
      return null;
    },
    min: extremum('min', (a, b) => a < b),
    max: extremum('max', (a, b) => a > b),
    // NOTE: now() reads the execution's time (dates.ts): never folded at compile time (fold.ts).
    now: () => nowFn(),
    date_add: (args: readonly JsonValue[]) => dateAdd(args[0]!, args[1]!, args[2]!),
    date_diff: (args: readonly JsonValue[]) => dateDiff(args[0]!, args[1]!, args[2]!),
  }),
);

/**
 * Calls a built-in function (any but `exists`, which needs a path) on evaluated arguments.
 * The parser has already checked the name and the argument count; calling with an unknown name
 * or a wrong count is a programming error (TypeError). Runtime failures throw `ExprRuntimeError`.
 */
export function callFunction(name: string, args: JsonValue[]): JsonValue {
  const arity = Object.hasOwn(FUNCTIONS, name) ? FUNCTIONS[name]! : undefined;
  if (arity === undefined || name === 'exists') throw new TypeError(`not a value function: ${name}`);
  if (args.length < arity.minArgs || args.length > arity.maxArgs) {
    throw new TypeError(`${name}: wrong argument count ${args.length}`);
  }
  if (Object.hasOwn(IMPLS_1, name)) return IMPLS_1[name]!(args[0]!);
  if (Object.hasOwn(IMPLS_2, name)) return IMPLS_2[name]!(args[0]!, args[1]!);
  return IMPLS_N[name]!(args);
}
