/**
 * Reference interpreter of the expression language for tests: walks the syntax tree directly
 * with the generic semantics (semantics.ts), no folding, no specialisation. The compiled
 * closures must agree with it on every input (test/property/expr.test.ts, the golden cases).
 * Reference data (`@name.path`) reads the current data snapshot as a plain object of datasets;
 * the date functions are an independent implementation (date-reference.ts); `now()` answers the
 * execution's time the test fixed (`setRequestNow`), else the one the compiled closure read first.
 */
import type { JsonValue, Node, PathNode } from '../../src/expr/ast.js';
import { dataState } from '../../src/expr/data-ref.js';
import { nowState } from '../../src/expr/dates.js';
import { ExprRuntimeError } from '../../src/expr/errors.js';
import { renderPath } from '../../src/expr/render.js';
import { callFunction } from '../../src/expr/functions.js';
import { applyBinary, applyUnary, readPath, truthy } from '../../src/expr/semantics.js';
import { isReferenceDateFunction, referenceDateCall } from './date-reference.js';

/** Outcome of an evaluation: a value or a runtime error (code and message). */
export type Outcome = { ok: true; value: JsonValue } | { ok: false; code: string; message: string };

/** Runs `f`, capturing an ExprRuntimeError as an outcome (anything else is rethrown). */
export function outcomeOf(f: () => JsonValue): Outcome {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (e instanceof ExprRuntimeError) return { ok: false, code: e.code, message: e.message };
    throw e;
  }
}

function root(path: PathNode, input: unknown, vars: Record<string, JsonValue> | null): unknown {
  // Reference data (`@name`): the current data snapshot as a plain object of datasets.
  if (path.scope === 'data') return Object.fromEntries(dataState.current ?? []);
  return path.scope === 'input' ? input : (vars ?? {});
}

/** Reads a path: `undefined` when it does not resolve. */
function readRaw(path: PathNode, input: unknown, vars: Record<string, JsonValue> | null): JsonValue | undefined {
  const r = readPath(root(path, input, vars), path.segments);
  return r.found ? r.value : undefined;
}

function readValue(path: PathNode, input: unknown, vars: Record<string, JsonValue> | null, strict: boolean): JsonValue {
  const x = readRaw(path, input, vars);
  if (x !== undefined) return x;
  if (!strict) return null;
  if (path.scope === 'var' && !readPath(vars ?? {}, path.segments.slice(0, 1)).found) {
    throw new ExprRuntimeError('MISSING_FIELD', `variable '$${String(path.segments[0])}' is not set`);
  }
  if (path.scope === 'data' && dataState.current?.get(String(path.segments[0])) === undefined) {
    throw new ExprRuntimeError('MISSING_FIELD', `dataset '@${String(path.segments[0])}' does not exist`);
  }
  throw new ExprRuntimeError('MISSING_FIELD', `field '${renderPath(path)}' is missing`);
}

/** Evaluates `node` against `input` and `vars` with the plain semantics. */
export function referenceEvaluate(node: Node, input: unknown, vars: Record<string, JsonValue> | null, strict: boolean): JsonValue {
  const ev = (n: Node): JsonValue => referenceEvaluate(n, input, vars, strict);
  switch (node.kind) {
    case 'literal':
      return node.value;
    case 'array':
      return node.items.map(ev);
    case 'path':
      return readValue(node, input, vars, strict);
    case 'unary':
      return applyUnary(node.op, ev(node.operand));
    case 'binary':
      if (node.op === '&&') return truthy(ev(node.left)) ? truthy(ev(node.right)) : false;
      if (node.op === '||') return truthy(ev(node.left)) ? true : truthy(ev(node.right));
      {
        const l = ev(node.left);
        return applyBinary(node.op, l, ev(node.right));
      }
    case 'if':
      return truthy(ev(node.cond)) ? ev(node.then) : ev(node.else);
    case 'call': {
      const first = node.args[0]!;
      if (node.name === 'exists') return first.kind === 'path' && readRaw(first, input, vars) !== undefined;
      // is_null and coalesce read a path argument leniently, also in strict mode.
      const tolerant = (n: Node): JsonValue => (n.kind === 'path' ? readValue(n, input, vars, false) : ev(n));
      if (node.name === 'is_null') return tolerant(first) === null;
      if (node.name === 'coalesce') {
        for (const a of node.args) {
          const v = tolerant(a);
          if (v !== null) return v;
        }
        return null;
      }
      if (node.name === 'now') {
        if (nowState.current === null) throw new Error('reference: now() needs a fixed time (setRequestNow) or a compiled run first');
        return nowState.current;
      }
      const args: JsonValue[] = [];
      for (const a of node.args) args.push(ev(a));
      if (isReferenceDateFunction(node.name)) return referenceDateCall(node.name, args);
      return callFunction(node.name, args);
    }
  }
}
