/**
 * Compiles a syntax tree to specialised JavaScript closures (no eval, no `new Function`).
 * Constants are folded first (fold.ts); paths, `path op literal` tests and `&&`/`||` chains get
 * shape-specific closures (compile-path.ts, compile-compare.ts); everything else follows the
 * generic semantics of semantics.ts, with fast paths for numbers. Parse once, compile once,
 * evaluate many times: a compiled expression is a plain function with no per-call setup.
 */
import type { BinaryNode, BinaryOp, CallNode, JsonValue, Node } from './ast.js';
import { compilePathTest, isLowString, type Primitive } from './compile-compare.js';
import { compileOperator } from './compile-ops.js';
import { compileRawReader, compileValueReader, internalize } from './compile-path.js';
import { constValue, fold, isConst } from './fold.js';
import { checkArrayLength } from './budget.js';
import { IMPLS_1, IMPLS_2, IMPLS_N } from './functions.js';
import { render, renderPath } from './render.js';
import { applyUnary, truthy } from './semantics.js';
import type { CompiledExpr } from './compiled-expr.js';

export type { CompiledExpr, Vars } from './compiled-expr.js';

/** Options of `compile`. */
export interface CompileOptions {
  /** What reading a path that does not resolve does: `null` (lenient, default) or MISSING_FIELD (strict). */
  readonly fieldMissing?: 'lenient' | 'strict';
  /**
   * Shares compiled parts between expressions: called with a key naming a part exactly (the mode
   * and the part's rendered text) and the function that compiles it, it returns a closure
   * compiled earlier for the same key or `make()`'s. Parts shared: path reads and the operands
   * of `&&` / `||` chains. Compiled closures keep no state of an execution, so any two with one
   * key are interchangeable. NOTE (speed, bench/NOTES.md "Eighth session"): a condition of its
   * own per ruleset (`flag || amount < 10042`) then still reads its common parts (`flag`)
   * through closures that stay in the CPU caches when traffic spreads over many rulesets.
   */
  readonly share?: (key: string, make: () => CompiledExpr) => CompiledExpr;
}

/**
 * Compiles a syntax tree (from `parse`) into a closure. Runtime failures of the closure throw
 * `ExprRuntimeError` (TYPE_ERROR, DIVISION_BY_ZERO, MISSING_FIELD). Results may share frozen
 * constant arrays and values of the input: treat them as read-only.
 */
export function compile(node: Node, options?: CompileOptions): CompiledExpr {
  const outer = sharing;
  sharing = options?.share ?? null;
  try {
    return compileNode(fold(node), options?.fieldMissing === 'strict');
  } finally {
    sharing = outer;
  }
}

/** The `share` option of the `compile` call under way (compiling is synchronous). */
let sharing: ((key: string, make: () => CompiledExpr) => CompiledExpr) | null = null;

/** `make()`, or the closure shared under `strict` and `text` (see `CompileOptions.share`). */
function shared(strict: boolean, text: () => string, make: () => CompiledExpr): CompiledExpr {
  if (sharing === null) return make();
  let key: string;
  try {
    key = `${strict ? 'strict' : 'lenient'}\u0001${text()}`;
  } catch {
    return make(); // a folded value no text names exactly (render throws for it): not shared
  }
  return sharing(key, make);
}

function deepFreeze<T extends JsonValue>(v: T): T {
  if (typeof v === 'object' && v !== null) {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

function compileNode(node: Node, strict: boolean): CompiledExpr {
  const c = constValue(node);
  if (isConst(c)) {
    const value = typeof c === 'string' ? internalize(c) : deepFreeze(c);
    return () => value;
  }
  switch (node.kind) {
    case 'literal':
      return () => node.value; // unreachable: a literal is a constant, handled above
    case 'array': {
      const fs = node.items.map((it) => compileNode(it, strict));
      // NOTE (work budget): an array literal is the only array the language builds and its
      // length is known here, so the element limit is checked once, at compile time (an
      // expression of MAX_EXPRESSION_LENGTH characters cannot reach it today).
      checkArrayLength(fs.length);
      return (i, v) => {
        const out: JsonValue[] = new Array(fs.length);
        for (let k = 0; k < fs.length; k++) out[k] = fs[k]!(i, v);
        return out;
      };
    }
    case 'path':
      return shared(
        strict,
        () => renderPath(node),
        () => compileValueReader(node, strict),
      );
    case 'unary': {
      const f = compileNode(node.operand, strict);
      if (node.op === '!') return (i, v) => !truthy(f(i, v));
      return (i, v) => {
        const x = f(i, v);
        return typeof x === 'number' ? -x : applyUnary('-', x);
      };
    }
    case 'binary':
      return compileBinary(node, strict);
    case 'if': {
      const cond = compileNode(node.cond, strict);
      const then = compileNode(node.then, strict);
      const otherwise = compileNode(node.else, strict);
      return (i, v) => (truthy(cond(i, v)) ? then(i, v) : otherwise(i, v));
    }
    case 'call':
      return compileCall(node, strict);
  }
}

/** Operands of a chain of one logical operator: `a && (b && c) && d` gives [a, b, c, d]. */
function flatten(node: Node, op: '&&' | '||', out: Node[]): Node[] {
  if (node.kind === 'binary' && node.op === op) {
    flatten(node.left, op, out);
    flatten(node.right, op, out);
  } else {
    out.push(node);
  }
  return out;
}

/** `&&` / `||` chains: short-circuit, truthiness inline, no array allocation per evaluation. */
function compileLogical(op: '&&' | '||', operands: readonly Node[], strict: boolean): CompiledExpr {
  // A path operand is shared by compileNode itself; a constant is not worth a lookup.
  const fs = operands.map((o) =>
    o.kind === 'path' || o.kind === 'literal'
      ? compileNode(o, strict)
      : shared(
          strict,
          () => render(o),
          () => compileNode(o, strict),
        ),
  );
  const [f0, f1, f2, f3] = fs as [CompiledExpr, CompiledExpr, CompiledExpr, CompiledExpr];
  if (op === '&&') {
    if (fs.length === 2) return (i, v) => truthy(f0(i, v)) && truthy(f1(i, v));
    if (fs.length === 3) return (i, v) => truthy(f0(i, v)) && truthy(f1(i, v)) && truthy(f2(i, v));
    if (fs.length === 4) {
      return (i, v) => truthy(f0(i, v)) && truthy(f1(i, v)) && truthy(f2(i, v)) && truthy(f3(i, v));
    }
    return (i, v) => {
      for (let k = 0; k < fs.length; k++) if (!truthy(fs[k]!(i, v))) return false;
      return true;
    };
  }
  if (fs.length === 2) return (i, v) => truthy(f0(i, v)) || truthy(f1(i, v));
  if (fs.length === 3) return (i, v) => truthy(f0(i, v)) || truthy(f1(i, v)) || truthy(f2(i, v));
  if (fs.length === 4) {
    return (i, v) => truthy(f0(i, v)) || truthy(f1(i, v)) || truthy(f2(i, v)) || truthy(f3(i, v));
  }
  return (i, v) => {
    for (let k = 0; k < fs.length; k++) if (truthy(fs[k]!(i, v))) return true;
    return false;
  };
}

const FLIPPED: Readonly<Record<string, BinaryOp>> = { '==': '==', '!=': '!=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

function isPrimitive(v: JsonValue): v is Primitive {
  return v === null || typeof v !== 'object';
}

/** `path op literal` (either order) and `path in [primitives]`: the specialised test, or null. */
function specialTest(node: BinaryNode, strict: boolean): CompiledExpr | null {
  const { left, right } = node;
  if (node.op === 'in' || node.op === 'not in') {
    if (left.kind !== 'path') return null;
    const values = constValue(right);
    if (!isConst(values) || !Array.isArray(values) || !values.every(isPrimitive)) return null;
    return compilePathTest(left, { kind: node.op, values: values as Primitive[] }, strict);
  }
  let op: BinaryOp = node.op;
  let path: Node;
  let lit: Node & { kind: 'literal' };
  if (left.kind === 'path' && right.kind === 'literal') {
    path = left;
    lit = right;
  } else if (left.kind === 'literal' && right.kind === 'path') {
    path = right;
    lit = left;
    op = FLIPPED[op]!;
  } else {
    return null;
  }
  const value = lit.value;
  if (op === '==' || op === '!=') return compilePathTest(path, { kind: op, value }, strict);
  if (op !== '<' && op !== '<=' && op !== '>' && op !== '>=') return null;
  if (typeof value === 'number' || (typeof value === 'string' && isLowString(value))) {
    return compilePathTest(path, { kind: op, value }, strict);
  }
  return null;
}

function compileBinary(node: BinaryNode, strict: boolean): CompiledExpr {
  const op = node.op;
  if (op === '&&' || op === '||') return compileLogical(op, flatten(node, op, []), strict);
  if (op !== '+' && op !== '-' && op !== '*' && op !== '/' && op !== '%') {
    const special = specialTest(node, strict);
    if (special !== null) return special;
  }
  return compileOperator(op, node, compileNode(node.left, strict), compileNode(node.right, strict));
}

function compileCall(node: CallNode, strict: boolean): CompiledExpr {
  const { name, args } = node;
  const first = args[0]!;
  if (name === 'exists') {
    // NOTE: exists never throws, even in strict mode: it is the way to test for a field.
    if (first.kind !== 'path') throw new TypeError('exists expects a path');
    const read = compileRawReader(first);
    return (i, v) => read(i, v) !== undefined;
  }
  if (name === 'is_null' && first.kind === 'path') {
    // NOTE: is_null(path) is true for a missing path and does not throw in strict mode (docs/expressions.md).
    const read = compileRawReader(first);
    return (i, v) => {
      const x = read(i, v);
      return x === null || x === undefined;
    };
  }
  if (name === 'coalesce') {
    // NOTE: a path argument of coalesce reads a missing field as null in strict mode too; arguments are lazy.
    const fs = args.map((a) => (a.kind === 'path' ? compileValueReader(a, false) : compileNode(a, strict)));
    return (i, v) => {
      for (let k = 0; k < fs.length; k++) {
        const x = fs[k]!(i, v);
        if (x !== null) return x;
      }
      return null;
    };
  }
  const fs = args.map((a) => compileNode(a, strict));
  if (Object.hasOwn(IMPLS_1, name)) {
    const f = IMPLS_1[name]!;
    const a0 = fs[0]!;
    return (i, v) => f(a0(i, v));
  }
  if (Object.hasOwn(IMPLS_2, name)) {
    const f = IMPLS_2[name]!;
    const a0 = fs[0]!;
    const a1 = fs[1]!;
    return (i, v) => f(a0(i, v), a1(i, v));
  }
  const f = IMPLS_N[name];
  if (f === undefined) throw new TypeError(`unknown function ${name}`);
  // NOTE: one scratch array per compiled call, refilled on each evaluation (evaluation is
  // synchronous and a call cannot re-enter itself), so variadic calls allocate nothing.
  const scratch: JsonValue[] = new Array(fs.length).fill(null);
  return (i, v) => {
    for (let k = 0; k < fs.length; k++) scratch[k] = fs[k]!(i, v);
    return f(scratch);
  };
}
