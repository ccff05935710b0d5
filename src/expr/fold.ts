/**
 * Constant folding as a pure pass over the syntax tree. Sub-expressions without paths are
 * evaluated once and replaced by a literal when the result is a primitive; `false && x`,
 * `true || x` and `if <constant> then …` are resolved. Evaluation order and errors are kept: a
 * constant sub-expression that would fail (`1 / 0`) is left in place to fail at run time, and a
 * path is never dropped unless the generic semantics would not evaluate it either.
 */
import type { BinaryOp, JsonValue, Node } from './ast.js';
import { ExprRuntimeError } from './errors.js';
import { callFunction } from './functions.js';
import { applyBinary, applyUnary, truthy } from './semantics.js';

/** Marker returned by `constValue` for "not a constant". */
export const NOT_CONST: unique symbol = Symbol('not constant');

/**
 * The value of a node that is a constant as it stands: a literal, or an array literal whose
 * items are all constants. Anything else (including foldable but unfolded nodes) is not.
 */
export function constValue(node: Node): JsonValue | typeof NOT_CONST {
  if (node.kind === 'literal') return node.value;
  if (node.kind !== 'array') return NOT_CONST;
  const out: JsonValue[] = [];
  for (const item of node.items) {
    const v = constValue(item);
    if (v === NOT_CONST) return NOT_CONST;
    out.push(v);
  }
  return out;
}

/** True when `v` is a real value rather than the not-a-constant marker. */
export function isConst(v: JsonValue | typeof NOT_CONST): v is JsonValue {
  return v !== NOT_CONST;
}

const BOOLEAN_OPS: ReadonlySet<BinaryOp> = new Set(['||', '&&', '==', '!=', '<', '<=', '>', '>=', 'in', 'not in']);
const BOOLEAN_FUNCTIONS: ReadonlySet<string> = new Set(['contains', 'starts_with', 'ends_with', 'is_null', 'exists']);

/** True when the node always yields a boolean (or throws), so `truthy(x)` is `x` itself. */
export function isBooleanValued(node: Node): boolean {
  switch (node.kind) {
    case 'literal':
      return typeof node.value === 'boolean';
    case 'unary':
      return node.op === '!';
    case 'binary':
      return BOOLEAN_OPS.has(node.op);
    case 'call':
      return BOOLEAN_FUNCTIONS.has(node.name);
    case 'if':
      return isBooleanValued(node.then) && isBooleanValued(node.else);
    case 'array':
    case 'path':
      return false;
  }
}

/** Replaces a node by a literal of `value` when that is a primitive, keeping its position. */
function asLiteral(value: JsonValue, pos: number): Node | null {
  if (value === null || typeof value !== 'object') return { kind: 'literal', value, pos };
  return null;
}

/** Runs `f`; a runtime error means "do not fold" (the error then happens at evaluation time). */
function attempt(f: () => JsonValue): JsonValue | typeof NOT_CONST {
  try {
    return f();
  } catch (e) {
    if (e instanceof ExprRuntimeError) return NOT_CONST;
    throw e;
  }
}

/** Folds constant sub-expressions; returns a new tree (unchanged nodes are shared). */
export function fold(node: Node): Node {
  switch (node.kind) {
    case 'literal':
    case 'path':
      return node;
    case 'array': {
      const items = node.items.map(fold);
      return items.every((it, k) => it === node.items[k]) ? node : { ...node, items };
    }
    case 'unary': {
      const operand = fold(node.operand);
      const v = constValue(operand);
      if (isConst(v)) {
        const r = attempt(() => applyUnary(node.op, v));
        const lit = isConst(r) ? asLiteral(r, node.pos) : null;
        if (lit) return lit;
      }
      return operand === node.operand ? node : { ...node, operand };
    }
    case 'binary':
      return foldBinary(node.op, node.left, node.right, node);
    case 'if': {
      const cond = fold(node.cond);
      const c = constValue(cond);
      if (isConst(c)) return fold(truthy(c) ? node.then : node.else);
      return { ...node, cond, then: fold(node.then), else: fold(node.else) };
    }
    case 'call': {
      // NOTE: is_null and coalesce read a *direct* path argument leniently (docs/expressions.md);
      // folding must not turn another argument into a bare path (`if true then x else 1` -> `x`).
      const tolerant = node.name === 'is_null' || node.name === 'coalesce';
      const args = node.args.map((a) => {
        const f = fold(a);
        return tolerant && f.kind === 'path' && a.kind !== 'path' ? a : f;
      });
      // NOTE: now() is the execution's time, not a constant (dates.ts).
      if (node.name !== 'exists' && node.name !== 'now') {
        const values: JsonValue[] = [];
        for (const a of args) {
          const v = constValue(a);
          if (!isConst(v)) break;
          values.push(v);
        }
        if (values.length === args.length) {
          const r = attempt(() => callFunction(node.name, values));
          const lit = isConst(r) ? asLiteral(r, node.pos) : null;
          if (lit) return lit;
        }
      }
      return args.every((a, k) => a === node.args[k]) ? node : { ...node, args };
    }
  }
}

function foldBinary(op: BinaryOp, leftIn: Node, rightIn: Node, node: Node & { kind: 'binary' }): Node {
  const left = fold(leftIn);
  const right = fold(rightIn);
  const l = constValue(left);
  if ((op === '&&' || op === '||') && isConst(l)) {
    // NOTE: short-circuit (DECISIONS.md 2): `false && x` and `true || x` never evaluate x.
    if (truthy(l) === (op === '||')) return { kind: 'literal', value: op === '||', pos: node.pos };
    const r = constValue(right);
    if (isConst(r)) return { kind: 'literal', value: truthy(r), pos: node.pos };
    if (isBooleanValued(right)) return right;
  } else if (op !== '&&' && op !== '||') {
    const r = constValue(right);
    if (isConst(l) && isConst(r)) {
      const v = attempt(() => applyBinary(op, l, r));
      const lit = isConst(v) ? asLiteral(v, node.pos) : null;
      if (lit) return lit;
    }
  }
  return left === leftIn && right === rightIn ? node : { ...node, left, right };
}
