/**
 * Generic closures for the binary operators that have no specialised shape (compile-compare.ts):
 * equality, ordering, membership and arithmetic on two compiled operands, with fast paths for
 * numbers. Each closure evaluates left, then right, like the generic semantics, so the first
 * error is the same one.
 */
import type { BinaryNode, JsonValue } from './ast.js';
import type { CompiledExpr } from './compiled-expr.js';
import { constValue, isConst } from './fold.js';
import { applyBinary, compareStrings, containsValue, jsonEquals } from './semantics.js';

/** Compiles `l op r` for every binary operator but `&&` and `||` (compiled as chains). */
export function compileOperator(op: Exclude<BinaryNode['op'], '&&' | '||'>, node: BinaryNode, l: CompiledExpr, r: CompiledExpr): CompiledExpr {
  switch (op) {
    case '==':
      return (i, v) => jsonEquals(l(i, v), r(i, v));
    case '!=':
      return (i, v) => !jsonEquals(l(i, v), r(i, v));
    case '<':
      return (i, v) => order(l(i, v), r(i, v)) < 0;
    case '<=':
      return (i, v) => order(l(i, v), r(i, v)) <= 0;
    case '>':
      return (i, v) => order(l(i, v), r(i, v)) > 0;
    case '>=':
      return (i, v) => order(l(i, v), r(i, v)) >= 0;
    case 'in':
    case 'not in':
      return compileMembership(op, node, l, r);
    default:
      return compileArithmetic(op, l, r);
  }
}

/**
 * Three-way order of two values for `< <= > >=`: negative, zero, positive, or NaN when the pair
 * is not comparable (every comparison with NaN is false, which is the spec's "else false").
 */
function order(a: JsonValue, b: JsonValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  return NaN;
}

function compileMembership(op: 'in' | 'not in', node: BinaryNode, l: CompiledExpr, r: CompiledExpr): CompiledExpr {
  const who = `'${op}'`;
  const right = constValue(node.right);
  if (isConst(right) && typeof right === 'string') {
    // `x in "literal"`: substring test against a captured string.
    const want = op === 'in';
    return (i, v) => {
      const x = l(i, v);
      return (typeof x === 'string' ? right.includes(x) : containsValue(right, x, who)) === want;
    };
  }
  if (op === 'in') {
    return (i, v) => {
      const x = l(i, v);
      return containsValue(r(i, v), x, who);
    };
  }
  return (i, v) => {
    const x = l(i, v);
    return !containsValue(r(i, v), x, who);
  };
}

function compileArithmetic(op: '+' | '-' | '*' | '/' | '%', l: CompiledExpr, r: CompiledExpr): CompiledExpr {
  // Fast path: two numbers with a finite result; anything else (strings, errors) goes through applyBinary.
  switch (op) {
    case '+':
      return (i, v) => {
        const a = l(i, v);
        const b = r(i, v);
        if (typeof a === 'number' && typeof b === 'number') {
          const s = a + b;
          if (Number.isFinite(s)) return s;
        }
        return applyBinary('+', a, b);
      };
    case '-':
      return (i, v) => {
        const a = l(i, v);
        const b = r(i, v);
        if (typeof a === 'number' && typeof b === 'number') {
          const s = a - b;
          if (Number.isFinite(s)) return s;
        }
        return applyBinary('-', a, b);
      };
    case '*':
      return (i, v) => {
        const a = l(i, v);
        const b = r(i, v);
        if (typeof a === 'number' && typeof b === 'number') {
          const s = a * b;
          if (Number.isFinite(s)) return s;
        }
        return applyBinary('*', a, b);
      };
    case '/':
      return (i, v) => {
        const a = l(i, v);
        const b = r(i, v);
        if (typeof a === 'number' && typeof b === 'number' && b !== 0) {
          const s = a / b;
          if (Number.isFinite(s)) return s;
        }
        return applyBinary('/', a, b);
      };
    case '%':
      return (i, v) => {
        const a = l(i, v);
        const b = r(i, v);
        if (typeof a === 'number' && typeof b === 'number' && b !== 0) {
          const s = a % b;
          if (Number.isFinite(s)) return s;
        }
        return applyBinary('%', a, b);
      };
  }
}
