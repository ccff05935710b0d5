/**
 * Compiled path reads (the hot path). A path of 1, 2 or 3 plain keys gets its own closure with
 * no loop and no helper call; other paths walk precomputed steps. Own properties only (SECURITY,
 * see docs/expressions.md): a key that exists on a prototype a JSON value can have
 * (`Object.prototype`, `Array.prototype`, `String.prototype`, `Number.prototype`,
 * `Boolean.prototype`: `constructor`, `__proto__`, `toString`, `length`, `map`, `charAt`…) or
 * looks like an array index is read with an `Object.hasOwn` check on a non-array object; every
 * other key can use direct property access, because on any JSON value it can only be an own
 * property of a plain object.
 */
import type { JsonValue, PathNode } from './ast.js';
import type { CompiledExpr, Vars } from './compiled-expr.js';
import { dataState } from './data-ref.js';
import { ExprRuntimeError } from './errors.js';
import { renderPath } from './render.js';

/** A compiled path read: the value, or `undefined` when the path does not resolve. */
export type RawReader = (input: unknown, vars: Vars | null) => JsonValue | undefined;

const STEP_DIRECT = 0;
const STEP_OWN = 1;
const STEP_INDEX = 2;

/**
 * True when `o[key]` on any JSON value can only find an own property of a plain object.
 * NOTE: decided once at compile time (SECURITY rule), so the common case pays no `hasOwn`.
 */
export function isDirectKey(key: string): boolean {
  for (const proto of PROTOTYPES) if (key in proto) return false;
  return !/^[0-9]+$/.test(key);
}

/**
 * Returns `s` as an internalized string. NOTE: keys and literals from the parser are slices of
 * the source; V8 keyed loads and `===` are much faster with internalized strings (a pointer
 * check), and property keys read back from an object are always internalized.
 */
export function internalize(s: string): string {
  return Object.keys({ [s]: 0 })[0] ?? s;
}

const PROTOTYPES: readonly object[] = [Object.prototype, Array.prototype, String.prototype, Number.prototype, Boolean.prototype];

/**
 * A JSON value seen as a bag of properties. NOTE: `any` on purpose: the specialised readers use
 * `x?.[key]` with keys proven safe by isDirectKey, which on a null/undefined gives undefined and
 * on any other JSON value can only find an own property of a plain object. Keeping the keyed
 * loads inside each closure (not in a shared helper) gives every read site its own inline cache.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- NOTE (speed): see above; a typed bag would need a cast at every read site.
export type Bag = any;

/** Direct read of a plain key (see isDirectKey); `undefined` when `o` has no such own property. */
function get(o: unknown, k: string): unknown {
  return (o as Bag)?.[k];
}

/** Guarded read of a key that could otherwise reach a prototype member or an array property. */
function getOwn(o: unknown, k: string): unknown {
  return typeof o === 'object' && o !== null && !Array.isArray(o) && Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined;
}

/** Array index read; `undefined` when `o` is not an array or the index is out of range. */
function at(o: unknown, n: number): unknown {
  return Array.isArray(o) ? (o[n] as unknown) : undefined;
}

function readSteps(cur: unknown, kinds: Uint8Array, keys: readonly (string | number)[], from: number): unknown {
  for (let s = from; s < keys.length; s++) {
    const kind = kinds[s];
    if (kind === STEP_DIRECT) cur = get(cur, keys[s] as string);
    else if (kind === STEP_OWN) cur = getOwn(cur, keys[s] as string);
    else cur = at(cur, keys[s] as number);
    if (cur === undefined) return undefined;
  }
  return cur;
}

function stepKinds(segments: readonly (string | number)[]): Uint8Array {
  return Uint8Array.from(segments, (s) => (typeof s === 'number' ? STEP_INDEX : isDirectKey(s) ? STEP_DIRECT : STEP_OWN));
}

/** The keys of an input path of 1 to 3 plain keys (the specialised shapes), else null. */
export function directKeys(path: PathNode): readonly string[] | null {
  if (path.scope !== 'input' || path.segments.length > 3) return null;
  for (const s of path.segments) if (typeof s !== 'string' || !isDirectKey(s)) return null;
  return path.segments.map((s) => internalize(s as string));
}

/**
 * The keys of a variable path of 2 or 3 plain keys (`$r.code`, `$r.output.score`: a call's
 * result), else null. NOTE (speed): read like an input path, without the generic step loop.
 */
function directVarKeys(path: PathNode): readonly string[] | null {
  if (path.scope !== 'var' || path.segments.length < 2 || path.segments.length > 3) return null;
  for (const s of path.segments) if (typeof s !== 'string' || !isDirectKey(s)) return null;
  return path.segments.map((s) => internalize(s as string));
}

/** The MISSING_FIELD error for a path that does not resolve (strict mode). */
export function missingFieldError(path: Pick<PathNode, 'scope' | 'segments'>): ExprRuntimeError {
  if (path.scope === 'var' && path.segments.length === 1) {
    return new ExprRuntimeError('MISSING_FIELD', `variable '$${String(path.segments[0])}' is not set`);
  }
  if (path.scope === 'data' && path.segments.length === 1) {
    return new ExprRuntimeError('MISSING_FIELD', `dataset '@${String(path.segments[0])}' does not exist`);
  }
  return new ExprRuntimeError('MISSING_FIELD', `field '${renderPath(path)}' is missing`);
}

/** Compiles a path to a reader that yields `undefined` when the path does not resolve. */
export function compileRawReader(path: PathNode): RawReader {
  const keys = directKeys(path);
  if (keys !== null) {
    const [a, b, c] = keys as [string, string, string];
    if (keys.length === 1) return (i) => (i as Bag)?.[a];
    if (keys.length === 2) return (i) => (i as Bag)?.[a]?.[b];
    return (i) => (i as Bag)?.[a]?.[b]?.[c];
  }
  const segs = path.segments.map((s) => (typeof s === 'string' ? internalize(s) : s));
  const kinds = stepKinds(segs);
  if (path.scope === 'data') {
    // Reference data (expr/data-ref.ts): the dataset from the execution's snapshot, then the path in it.
    const name = segs[0] as string;
    return () => readSteps(dataState.current?.get(name), kinds, segs, 1) as JsonValue | undefined;
  }
  if (path.scope === 'var') {
    if (segs.length === 1 && kinds[0] === STEP_DIRECT) {
      const name = segs[0] as string;
      return (_i, v) => (v as Bag)?.[name];
    }
    const vk = directVarKeys(path);
    if (vk !== null) {
      const [a, b, c] = vk as [string, string, string];
      if (vk.length === 2) return (_i, v) => (v as Bag)?.[a]?.[b];
      return (_i, v) => (v as Bag)?.[a]?.[b]?.[c];
    }
    return (_i, v) => readSteps(v, kinds, segs, 0) as JsonValue | undefined;
  }
  return (i) => readSteps(i, kinds, segs, 0) as JsonValue | undefined;
}

/**
 * Compiles a path to its value: a path that does not resolve is `null` (lenient) or throws
 * MISSING_FIELD naming the path, or the unset variable (strict). The strict check is compiled
 * in only in strict mode.
 */
export function compileValueReader(path: PathNode, strict: boolean): CompiledExpr {
  const keys = directKeys(path);
  if (keys !== null) {
    const [a, b, c] = keys as [string, string, string];
    if (!strict) {
      // `?? null`: a missing path (undefined) reads as null; a null stays null.
      if (keys.length === 1) return (i) => (i as Bag)?.[a] ?? null;
      if (keys.length === 2) return (i) => (i as Bag)?.[a]?.[b] ?? null;
      return (i) => (i as Bag)?.[a]?.[b]?.[c] ?? null;
    }
    if (keys.length === 1) return (i) => orThrow((i as Bag)?.[a], path);
    if (keys.length === 2) return (i) => orThrow((i as Bag)?.[a]?.[b], path);
    return (i) => orThrow((i as Bag)?.[a]?.[b]?.[c], path);
  }
  const raw = compileRawReader(path);
  if (!strict) return (i, v) => orNull(raw(i, v));
  if (path.scope === 'input' || path.segments.length === 1) return (i, v) => orThrow(raw(i, v), path);
  // A variable or dataset path in strict mode: say whether the variable (dataset) itself is
  // unset (missing) or a field under it is missing.
  const head: PathNode = { ...path, segments: path.segments.slice(0, 1) };
  const readHead = compileRawReader(head);
  const segs = path.segments.map((s) => (typeof s === 'string' ? internalize(s) : s));
  const kinds = stepKinds(segs);
  return (_i, v) => {
    const base = readHead(_i, v);
    if (base === undefined) throw missingFieldError(head);
    return orThrow(readSteps(base, kinds, segs, 1), path);
  };
}

function orNull(x: unknown): JsonValue {
  return x === undefined ? null : (x as JsonValue);
}

function orThrow(x: unknown, path: PathNode): JsonValue {
  if (x === undefined) throw missingFieldError(path);
  return x as JsonValue;
}
