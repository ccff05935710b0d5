/**
 * Property tests of the expression language:
 *   - parse(render(ast)) equals ast (modulo pos) for generated trees, and so does parse of their infix text;
 *   - parse throws nothing but ExprSyntaxError, on any string;
 *   - compiled closures (folded, specialised) agree with the reference interpreter, lenient and strict,
 *     also with parts shared between trees (compile's `share` option),
 *     also on reference data (`@name.path` over generated snapshots) and on date-function trees
 *     (the reference's date functions are independent of src/expr/dates.ts, `now()` fixed);
 *   - the documented `date_diff` bound: `date_add(a, date_diff(a, b, u), u)` never passes `b`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { JsonValue, Node } from '../../src/expr/ast.js';
import { setRequestNow } from '../../src/expr/dates.js';
import { compile, ExprRuntimeError, ExprSyntaxError, fold, parse, render, setDataSnapshot, type CompiledExpr } from '../../src/expr/index.js';
import { referenceParse } from '../helpers/date-reference.js';
import { outcomeOf, referenceEvaluate, type Outcome } from '../helpers/expr-reference.js';
import {
  dateData,
  dateInput,
  dateText,
  dateTree,
  evalConstant,
  evalData,
  evalInput,
  evalPath,
  evalTree,
  evalVars,
  parsableTree,
  tokenSoup,
} from './expr-arbitraries.js';

/** The execution's time now() answers in these tests (a fixed request "now"). */
const NOW = '2026-11-24T10:00:00.000Z';

/** A copy of the tree without `pos`. */
function stripPos(node: Node): unknown {
  return JSON.parse(JSON.stringify(node, (k, v: unknown) => (k === 'pos' ? undefined : Object.is(v, -0) ? 'NEGATIVE ZERO\u0000' : v)));
}

/** Parses, returning null for a syntax error and failing the property for anything else. */
function parseOrNull(source: string): Node | null {
  try {
    return parse(source);
  } catch (e) {
    if (e instanceof ExprSyntaxError) {
      assert.equal(typeof e.position, 'number');
      assert.ok(e.position >= 0 && e.position <= source.length, `position ${e.position} outside the source`);
      assert.equal(e.message, `${e.detail} at ${e.position}`);
      return null;
    }
    throw e;
  }
}

/** Writes a tree in the infix language, every operation parenthesised; `compact` drops optional spaces. */
function toInfix(node: Node, compact: boolean): string {
  const sp = compact ? '' : ' ';
  const go = (n: Node): string => toInfix(n, compact);
  switch (node.kind) {
    case 'literal':
      return render(node);
    case 'path':
      return render(node);
    case 'array':
      return `[${node.items.map(go).join(`,${sp}`)}]`;
    case 'unary':
      return `${node.op}(${go(node.operand)})`;
    case 'binary': {
      const word = node.op === 'in' || node.op === 'not in';
      const op = word || !compact ? ` ${node.op} ` : node.op;
      return `(${go(node.left)}${op}${go(node.right)})`;
    }
    case 'if':
      return `(if ${go(node.cond)} then ${go(node.then)} else ${go(node.else)})`;
    case 'call':
      return `${node.name}(${node.args.map(go).join(`,${sp}`)})`;
  }
}

function normal(o: Outcome): Outcome {
  return o.ok ? { ok: true, value: JSON.parse(JSON.stringify(o.value)) as JsonValue } : o;
}

test('parse(render(ast)) gives the tree back (modulo pos)', () => {
  fc.assert(
    fc.property(parsableTree, (ast) => {
      const text = render(ast);
      assert.deepEqual(stripPos(parse(text)), stripPos(ast), text);
    }),
    { numRuns: 1500 },
  );
});

test('the infix text of a tree parses to that tree', () => {
  fc.assert(
    fc.property(parsableTree, fc.boolean(), (ast, compact) => {
      const text = toInfix(ast, compact);
      assert.deepEqual(stripPos(parse(text)), stripPos(ast), text);
    }),
    { numRuns: 1500 },
  );
});

test('render of a folded tree also reads back', () => {
  fc.assert(
    fc.property(evalTree, (ast) => {
      const folded = fold(ast);
      assert.deepEqual(stripPos(parse(render(folded))), stripPos(folded));
    }),
    { numRuns: 500 },
  );
});

test('parse throws only ExprSyntaxError on arbitrary strings', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })), (s) => {
      parseOrNull(s);
    }),
    { numRuns: 1500 },
  );
});

test('token soup: parse fails cleanly or round-trips through render, and evaluation throws only runtime errors', () => {
  fc.assert(
    fc.property(tokenSoup, evalInput, (source, input) => {
      const ast = parseOrNull(source);
      if (ast === null) return;
      const text = render(ast);
      assert.deepEqual(stripPos(parse(text)), stripPos(ast), `${source} -> ${text}`);
      for (const fieldMissing of ['lenient', 'strict'] as const) {
        try {
          compile(ast, { fieldMissing })(input, null);
        } catch (e) {
          if (!(e instanceof ExprRuntimeError)) throw e;
        }
      }
    }),
    { numRuns: 3000 },
  );
});

/** Compiled closure and reference interpreter on one tree, input, variables and snapshot. */
function agree(ast: Node, input: JsonValue, vars: Record<string, JsonValue> | null, data: Map<string, JsonValue> | null, strict: boolean): Outcome {
  setRequestNow(NOW);
  setDataSnapshot(data);
  try {
    const run = compile(ast, { fieldMissing: strict ? 'strict' : 'lenient' });
    const got = normal(outcomeOf(() => run(input, vars)));
    const want = normal(outcomeOf(() => referenceEvaluate(ast, input, vars, strict)));
    assert.deepEqual(got, want, render(ast));
    return got;
  } finally {
    setDataSnapshot(null);
    setRequestNow(null);
  }
}

test('reference data: compiled closures agree with the reference interpreter on generated snapshots', () => {
  fc.assert(
    fc.property(evalTree, evalInput, evalVars, evalData, fc.boolean(), (ast, input, vars, data, strict) => {
      agree(ast, input, vars, data, strict);
    }),
    { numRuns: 2000 },
  );
});

test('dates: compiled date functions agree with the independent reference implementation', () => {
  let values = 0;
  fc.assert(
    fc.property(dateTree, dateInput, dateData, fc.boolean(), (ast, input, data, strict) => {
      if (agree(ast, input, null, data, strict).ok) values++;
    }),
    { numRuns: 4000 },
  );
  // The trees are not mostly type errors: many evaluate to a value.
  assert.ok(values > 1000, `only ${values} of 4000 date trees evaluated to a value`);
});

test('dates: date_add(a, date_diff(a, b, u), u) never passes b (docs/expressions.md)', () => {
  const valid = dateText.filter((t) => referenceParse(t) !== null);
  fc.assert(
    fc.property(valid, valid, fc.constantFrom('years', 'months', 'days', 'hours'), (a, b, unit) => {
      const lit = (v: string): Node => ({ kind: 'literal', value: v, pos: 0 });
      const diff: Node = { kind: 'call', name: 'date_diff', args: [lit(a), lit(b), lit(unit)], pos: 0 };
      const back: Node = { kind: 'call', name: 'date_add', args: [lit(a), diff, lit(unit)], pos: 0 };
      const r = agree(back, {}, null, null, false);
      if (!r.ok) return; // out of range (years 0000 to 9999)
      const [t, tb] = [referenceParse(r.value as string)!, referenceParse(b)!];
      assert.ok(tb >= referenceParse(a)! ? t <= tb : t >= tb, `${a} -> ${b} in ${unit}: ${String(r.value)}`);
    }),
    { numRuns: 2000 },
  );
});

test('compiled closures agree with the reference interpreter', () => {
  fc.assert(
    fc.property(evalTree, evalInput, evalVars, fc.boolean(), (ast, input, vars, strict) => {
      setRequestNow(NOW);
      const run = compile(ast, { fieldMissing: strict ? 'strict' : 'lenient' });
      const got = normal(outcomeOf(() => run(input, vars)));
      const want = normal(outcomeOf(() => referenceEvaluate(ast, input, vars, strict)));
      assert.deepEqual(got, want, render(ast));
      if (got.ok) assert.doesNotThrow(() => JSON.stringify(got.value));
    }),
    { numRuns: 4000 },
  );
});

test("shared parts (compile's share option, one table across all trees) agree with the reference interpreter", () => {
  // The trees draw on a small vocabulary of keys, so later trees reuse parts compiled for
  // earlier ones, in both modes: a part shared across modes or across different texts fails.
  const table = new Map<string, CompiledExpr>();
  let reused = 0;
  const share = (key: string, make: () => CompiledExpr): CompiledExpr => {
    const fn = table.get(key);
    if (fn !== undefined) {
      reused++;
      return fn;
    }
    const made = make();
    table.set(key, made);
    return made;
  };
  fc.assert(
    fc.property(evalTree, evalInput, evalVars, fc.boolean(), (ast, input, vars, strict) => {
      setRequestNow(NOW);
      const run = compile(ast, { fieldMissing: strict ? 'strict' : 'lenient', share });
      const got = normal(outcomeOf(() => run(input, vars)));
      const want = normal(outcomeOf(() => referenceEvaluate(ast, input, vars, strict)));
      assert.deepEqual(got, want, render(ast));
    }),
    { numRuns: 3000 },
  );
  assert.ok(reused > 200, `only ${reused} parts were reused`);
});

test('comparison-heavy trees: specialised tests agree with the reference interpreter', () => {
  const path = evalPath;
  const lit = evalConstant;
  const op = fc.constantFrom('==', '!=', '<', '<=', '>', '>=', 'in', 'not in' as const);
  const shape = fc.oneof(
    fc.tuple(path, op, lit).map(([l, o, r]) => ({ kind: 'binary', op: o, left: l, right: r, pos: 0 }) as Node),
    fc.tuple(lit, op, path).map(([l, o, r]) => ({ kind: 'binary', op: o, left: l, right: r, pos: 0 }) as Node),
  );
  fc.assert(
    fc.property(shape, evalInput, fc.boolean(), (ast, input, strict) => {
      const got = normal(outcomeOf(() => compile(ast, { fieldMissing: strict ? 'strict' : 'lenient' })(input, null)));
      const want = normal(outcomeOf(() => referenceEvaluate(ast, input, null, strict)));
      assert.deepEqual(got, want, render(ast));
    }),
    { numRuns: 3000 },
  );
});
