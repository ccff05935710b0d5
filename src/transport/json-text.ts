/**
 * The JSON text rules shared by every transport (HTTP bodies, gRPC `*_json` fields): rejects
 * empty text, malformed JSON, nesting deeper than `MAX_JSON_DEPTH`, numbers outside the double
 * range (`1e309`, which JSON.parse turns into Infinity) and `__proto__` / `constructor.prototype`
 * keys with a 400 ServiceError.
 */
import { ServiceError } from '../service/errors.js';

/** Deepest nesting of arrays and objects accepted in a request body. */
export const MAX_JSON_DEPTH = 512;

/**
 * A number literal that may lie outside the double range: an exponent of three digits or more,
 * or a run of 309 digits. NOTE (speed): only a text that matches is walked for non-finite values.
 */
const MAYBE_OUT_OF_RANGE = /\d[eE][+-]?\d{3}|\d{309}/;

/** Parses JSON text under the body rules (empty, malformed, depth, number range, prototype keys). */
export function parseJsonText(text: string): unknown {
  if (text.length === 0 || text.trim().length === 0) throw new ServiceError('BAD_REQUEST', 'request body is empty; send a JSON object');
  // NOTE: depth needs at least one character per level, so short bodies skip the scan.
  if (text.length > MAX_JSON_DEPTH && jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new ServiceError('BAD_REQUEST', `request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ServiceError('BAD_REQUEST', `malformed JSON: ${(err as Error).message}`);
  }
  // EXTENSIONS.md 6 "Numbers": a number outside the double range anywhere in a body is a 400.
  if (MAYBE_OUT_OF_RANGE.test(text) && hasNonFinite(value)) {
    throw new ServiceError('BAD_REQUEST', 'request body holds a number outside the double range (about ±1.8e308)');
  }
  // NOTE (speed): the walk over the parsed value runs only when the text could hold such a key:
  // literally, or written with \u escapes (`"\u0063onstructor"` is the key `constructor`).
  if ((text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) && hasPrototypeKey(value)) {
    throw new ServiceError('BAD_REQUEST', 'request body contains a forbidden key (__proto__ or constructor.prototype)');
  }
  return value;
}

/** True when the JSON text nests arrays/objects deeper than `max` (strings are skipped). */
function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Iterative scan for `__proto__` keys or `constructor` objects holding `prototype`. */
function hasPrototypeKey(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    if (Object.hasOwn(v, '__proto__')) return true;
    const ctor = (v as Record<string, unknown>)['constructor'];
    if (Object.hasOwn(v, 'constructor') && typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) return true;
    for (const key of Object.keys(v)) stack.push((v as Record<string, unknown>)[key]);
  }
  return false;
}

/** Iterative scan for a number that is not finite (JSON.parse yields ±Infinity for `1e309`). */
function hasNonFinite(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return true;
    } else if (typeof v === 'object' && v !== null) {
      for (const item of Array.isArray(v) ? v : Object.values(v)) stack.push(item);
    }
  }
  return false;
}
