/**
 * The public API of src/expr beyond single expressions: evaluate(), compile() options and reuse,
 * fold() as a pure pass, render() on hand-built trees, and the exported semantics helpers.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node } from '../../../src/expr/ast.js';
import {
  FUNCTIONS,
  applyBinary,
  applyUnary,
  callFunction,
  compareValues,
  compile,
  evaluate,
  ExprRuntimeError,
  ExprSyntaxError,
  fold,
  jsonEquals,
  parse,
  readPath,
  render,
  truthy,
} from '../../../src/expr/index.js';

const lit = (value: null | boolean | number | string): Node => ({ kind: 'literal', value, pos: 0 });
const path = (...segments: (string | number)[]): Node => ({ kind: 'path', scope: 'input', segments, pos: 0 });

describe('evaluate', () => {
  test('returns the result and the rendered tree', () => {
    assert.deepEqual(evaluate('user.age >= 18 && user.country in ["US", "CA"]', { user: { age: 20, country: 'CA' } }), {
      result: true,
      parsed: '(&& (>= user.age 18) (in user.country ["US", "CA"]))',
    });
  });
  test('a missing context means {}', () => {
    assert.deepEqual(evaluate('exists(a)', undefined), { result: false, parsed: 'exists(a)' });
    assert.equal(evaluate('len(.["x"]) == null', undefined).result, true);
  });
  test('strict option and errors', () => {
    assert.throws(() => evaluate('a', {}, { fieldMissing: 'strict' }), ExprRuntimeError);
    assert.equal(evaluate('a', {}).result, null);
    assert.throws(() => evaluate('a +', {}), ExprSyntaxError);
  });
});

describe('compile', () => {
  test('a compiled expression is reusable and does not mutate its input', () => {
    const f = compile(parse('coalesce(a.b, 0) + len(xs)'));
    const input = { a: { b: 2 }, xs: [1, 2] };
    const before = JSON.stringify(input);
    assert.equal(f(input, null), 4);
    assert.equal(f({ xs: [] }, null), 0);
    assert.equal(JSON.stringify(input), before);
  });
  test('variables are read from the second argument', () => {
    const f = compile(parse('$rate * price'));
    assert.equal(f({ price: 10 }, { rate: 0.5 }), 5);
    assert.throws(() => f({ price: 10 }, null), /cannot multiply null and number/);
  });
  test('constant results are frozen and shared', () => {
    const f = compile(parse('[1, [2]]'));
    const r = f({}, null) as unknown[];
    assert.deepEqual(r, [1, [2]]);
    assert.ok(Object.isFrozen(r) && Object.isFrozen(r[1]));
    assert.equal(f({}, null), r);
  });
  test('a non-constant array is a fresh array each time', () => {
    const f = compile(parse('[a]'));
    assert.notEqual(f({ a: 1 }, null), f({ a: 1 }, null));
  });
  test('a constant error is raised at evaluation, not at compile time', () => {
    const f = compile(parse('1 / 0'));
    assert.throws(
      () => f({}, null),
      (e: unknown) => e instanceof ExprRuntimeError && e.code === 'DIVISION_BY_ZERO',
    );
  });
});

describe('fold', () => {
  test('folds constant sub-expressions and keeps positions', () => {
    assert.deepEqual(fold(parse('1 + 2 * 3')), { kind: 'literal', value: 7, pos: 0 });
    assert.equal(render(fold(parse('x > 60 * 60'))), '(> x 3600)');
    assert.equal(render(fold(parse('len("abc") == n'))), '(== 3 n)');
    assert.equal(render(fold(parse('x in [1, 1 + 1]'))), '(in x [1, 2])');
    assert.equal(render(fold(parse('upper("a") + b'))), '(+ "A" b)');
  });
  test('resolves short-circuits and constant conditions', () => {
    assert.equal(render(fold(parse('false && x'))), 'false');
    assert.equal(render(fold(parse('true || x'))), 'true');
    assert.equal(render(fold(parse('true && x > 1'))), '(> x 1)');
    assert.equal(render(fold(parse('true && x'))), '(&& true x)', 'x is not boolean-valued: its truthiness is kept');
    assert.equal(render(fold(parse('x && false'))), '(&& x false)', 'x may fail, so it stays');
    assert.equal(render(fold(parse('if 1 > 0 then a else b'))), 'a');
  });
  test('leaves failing constants in place', () => {
    assert.equal(render(fold(parse('1 / 0'))), '(/ 1 0)');
    assert.equal(render(fold(parse('x || "a" * 2'))), '(|| x (* "a" 2))');
  });
  test('is pure: the input tree is not changed, untouched subtrees are shared', () => {
    const ast = parse('a.b > 1 + 1');
    const text = JSON.stringify(ast);
    const folded = fold(ast);
    assert.equal(JSON.stringify(ast), text);
    assert.equal((folded as Node & { kind: 'binary' }).left, (ast as Node & { kind: 'binary' }).left);
    const plain = parse('a.b > c');
    assert.equal(fold(plain), plain);
  });
});

describe('render', () => {
  test('writes hand-built trees the parser reads back', () => {
    const cases: [Node, string][] = [
      [{ kind: 'unary', op: '-', operand: lit(3), pos: 0 }, '(- (3))'],
      [{ kind: 'binary', op: '-', left: path('a'), right: lit(-3), pos: 0 }, '(- a (-3))'],
      [lit(-0), '-0'],
      [path('odd key', 0, 'x', 'if'), '.["odd key"][0].x.if'],
      [path(2), '.[2]'],
      [path('null'), '.null'],
      [{ kind: 'path', scope: 'var', segments: ['d', 'a b'], pos: 0 }, '$d["a b"]'],
      [lit('\ud800"\n'), '"\\ud800\\"\\n"'],
    ];
    for (const [node, text] of cases) {
      assert.equal(render(node), text);
      const back = JSON.parse(JSON.stringify(parse(text), (k, v: unknown) => (k === 'pos' ? undefined : v)));
      assert.deepEqual(back, JSON.parse(JSON.stringify(node, (k, v: unknown) => (k === 'pos' ? undefined : v))));
    }
    assert.ok(Object.is((parse('-0') as Node & { kind: 'literal' }).value, -0));
  });
  test('refuses trees no parser can produce', () => {
    assert.throws(() => render(lit(Infinity)), TypeError);
    assert.throws(() => render(lit(NaN)), TypeError);
    assert.throws(() => render(path()), TypeError);
    assert.throws(() => render(path('a', -1)), TypeError);
    assert.throws(() => render({ kind: 'path', scope: 'var', segments: ['a b'], pos: 0 }), TypeError);
  });
});

describe('parse', () => {
  test('positions of nodes are 0-based offsets of their first character', () => {
    const ast = parse('  x == "a"') as Node & { kind: 'binary' };
    assert.equal(ast.pos, 2);
    assert.equal(ast.right.pos, 7);
  });
  test('rejects a non-string with a TypeError', () => {
    assert.throws(() => parse(42 as unknown as string), TypeError);
  });
});

describe('semantics helpers', () => {
  test('truthy', () => {
    assert.deepEqual([false, null, 0, '', -0].map(truthy), [false, false, false, false, false]);
    assert.deepEqual([true, 1, 'a', '0', [], {}].map(truthy), [true, true, true, true, true, true]);
  });
  test('jsonEquals', () => {
    assert.equal(jsonEquals({ a: [1, { b: null }] }, { a: [1, { b: null }] }), true);
    assert.equal(jsonEquals({ a: 1 }, { a: 1, b: undefined as unknown as null }), false);
    assert.equal(jsonEquals([], {}), false);
    assert.equal(jsonEquals(0, -0), true);
    assert.equal(jsonEquals('1', 1), false);
  });
  test('compareValues', () => {
    assert.equal(compareValues('<', 1, 2), true);
    assert.equal(compareValues('>=', 'b', 'a'), true);
    assert.equal(compareValues('<', '\uff5e', '\u{1f600}'), true);
    assert.equal(compareValues('<', 1, '2'), false);
    assert.equal(compareValues('>=', null, null), false);
  });
  test('applyUnary and applyBinary', () => {
    assert.equal(applyUnary('!', 0), true);
    assert.equal(applyUnary('-', 2), -2);
    assert.throws(() => applyUnary('-', 'a'), /cannot negate string/);
    assert.equal(applyBinary('+', 'a', 'b'), 'ab');
    assert.equal(applyBinary('&&', 1, 'x'), true);
    assert.equal(applyBinary('not in', 3, [1, 2]), true);
    assert.throws(
      () => applyBinary('%', 1, 0),
      (e: unknown) => e instanceof ExprRuntimeError && e.code === 'DIVISION_BY_ZERO',
    );
  });
  test('callFunction and FUNCTIONS', () => {
    assert.equal(callFunction('round', [-2.5]), -3);
    assert.equal(callFunction('coalesce', [null, 2]), 2);
    assert.throws(() => callFunction('exists', [1]), TypeError);
    assert.throws(() => callFunction('nope', []), TypeError);
    assert.throws(() => callFunction('len', []), TypeError);
    assert.deepEqual(FUNCTIONS['min'], { minArgs: 1, maxArgs: Infinity });
    assert.deepEqual(FUNCTIONS['contains'], { minArgs: 2, maxArgs: 2 });
    assert.equal(Object.hasOwn(FUNCTIONS, 'toString'), false);
    assert.equal(Object.keys(FUNCTIONS).length, 26); // 18 + the 8 date functions (dates.ts)
  });
  test('readPath', () => {
    assert.deepEqual(readPath({ a: [{ b: null }] }, ['a', 0, 'b']), { found: true, value: null });
    assert.deepEqual(readPath({ a: [] }, ['a', 0]), { found: false, value: null });
    assert.deepEqual(readPath({ a: 1 }, []), { found: true, value: { a: 1 } });
    assert.deepEqual(readPath(undefined, []), { found: false, value: null });
  });
});
