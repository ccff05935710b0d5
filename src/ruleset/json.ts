/**
 * Small JSON helpers for ruleset documents: a checked deep copy (which also proves a value is
 * JSON), deep freezing, and the plain-object test. Pure: no `node:*` imports.
 */
import type { JsonValue } from '../expr/ast.js';

/** Deepest nesting accepted in a ruleset document (a guard against stack exhaustion). */
export const MAX_DOC_DEPTH = 256;

/** True for a plain JSON-like object (prototype `Object.prototype` or null; not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Receives one problem found by `copyJson`: where it is and what is wrong. */
export type ProblemSink = (path: string, message: string) => void;

/**
 * Deep-copies `value` as JSON. Properties whose value is `undefined` are dropped (as
 * `JSON.stringify` does). Anything that is not JSON (functions, class instances, non-finite
 * numbers, sparse array slots, nesting deeper than `MAX_DOC_DEPTH`) is reported to `sink` with
 * its path and copied as `null`. Keys named `__proto__` are copied as own data properties.
 */
export function copyJson(value: unknown, path: string, sink: ProblemSink, depth = 0): JsonValue {
  return copyAt(value, path, sink, depth, 0);
}

/**
 * The keys and indexes from `copyJson`'s `path` down to the value being copied. NOTE (start
 * time, bench/NOTES.md "Many rulesets"): a problem's path text is built only when there is a
 * problem, instead of one string per copied value.
 */
const pathSegments: (string | number)[] = [];

function pathAt(base: string, length: number): string {
  let path = base;
  for (let i = 0; i < length; i++) {
    const s = pathSegments[i]!;
    path = typeof s === 'number' ? `${path}[${s}]` : joinKey(path, s);
  }
  return path;
}

/** `copyJson` of the value at `base` + the first `at` entries of `pathSegments`. */
function copyAt(value: unknown, base: string, sink: ProblemSink, depth: number, at: number): JsonValue {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value)) return value;
      sink(pathAt(base, at), 'must be a finite number');
      return null;
    case 'object':
      break;
    default:
      sink(pathAt(base, at), `must be a JSON value (found ${typeof value})`);
      return null;
  }
  if (value === null) return null;
  if (depth >= MAX_DOC_DEPTH) {
    sink(pathAt(base, at), `nested deeper than ${MAX_DOC_DEPTH} levels`);
    return null;
  }
  if (Array.isArray(value)) {
    const out: JsonValue[] = new Array<JsonValue>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      pathSegments[at] = i;
      if (item === undefined) {
        sink(pathAt(base, at + 1), 'must be a JSON value (found undefined)');
        out[i] = null;
      } else {
        out[i] = copyAt(item, base, sink, depth + 1, at + 1);
      }
    }
    return out;
  }
  if (!isPlainObject(value)) {
    sink(pathAt(base, at), 'must be a JSON value (found a non-plain object)');
    return null;
  }
  const out: Record<string, JsonValue> = {};
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const item = value[key];
    if (item === undefined) continue;
    pathSegments[at] = key;
    setOwn(out, key, copyAt(item, base, sink, depth + 1, at + 1));
  }
  return out;
}

/**
 * Sets an own enumerable data property. NOTE: plain assignment of `__proto__` would change the
 * prototype instead of creating a key, so that one key goes through `defineProperty`.
 */
export function setOwn(target: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** Freezes a JSON value and everything inside it; returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

const PLAIN_KEY_RE = /^[A-Za-z0-9_$-]+$/;

/**
 * Appends an object key to a problem location: `steps` + `check` gives `steps.check`; a key
 * with other characters (dots, spaces, brackets, empty) is written as `steps["a.b"]` so a
 * location is never ambiguous.
 */
export function joinKey(path: string, key: string): string {
  const part = PLAIN_KEY_RE.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (path === '') return part;
  return part.startsWith('[') ? `${path}${part}` : `${path}.${part}`;
}

/** Deep equality of two JSON values (object key order does not matter). */
export function jsonEqual(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]!));
  }
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k]!, b[k]!));
}
