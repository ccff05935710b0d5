/**
 * `compile`'s `share` option: path reads and the operands of `&&` / `||` chains are looked up
 * by mode and rendered text, so that conditions written from one template (a threshold of their
 * own each) run their common parts through one closure.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compile, parse, type CompiledExpr } from '../../../src/expr/index.js';

function recorder(): { share: (key: string, make: () => CompiledExpr) => CompiledExpr; made: Map<string, CompiledExpr>; asked: string[] } {
  const made = new Map<string, CompiledExpr>();
  const asked: string[] = [];
  return {
    made,
    asked,
    share: (key, make) => {
      asked.push(key);
      let fn = made.get(key);
      if (fn === undefined) made.set(key, (fn = make()));
      return fn;
    },
  };
}

test('the common operand of two conditions is compiled once and shared; each still answers its own threshold', () => {
  const r = recorder();
  const a = compile(parse('applicant.vip || loan.amount < 10042'), { share: r.share });
  const b = compile(parse('applicant.vip || loan.amount < 10043'), { share: r.share });
  assert.deepEqual(r.asked, [
    'lenient\u0001applicant.vip',
    'lenient\u0001(< loan.amount 10042)',
    'lenient\u0001applicant.vip',
    'lenient\u0001(< loan.amount 10043)',
  ]);
  assert.equal(r.made.size, 3, 'the path read is made once');
  const input = { applicant: { vip: false }, loan: { amount: 10042 } };
  assert.equal(a(input, null), false);
  assert.equal(b(input, null), true);
  assert.equal(a({ applicant: { vip: true }, loan: { amount: 1e9 } }, null), true);
});

test('the mode is part of the key: a strict read is never a lenient one', () => {
  const r = recorder();
  const lenient = compile(parse('x.y || false'), { share: r.share });
  const strict = compile(parse('x.y || false'), { share: r.share, fieldMissing: 'strict' });
  assert.deepEqual([...r.made.keys()], ['lenient\u0001x.y', 'strict\u0001x.y'], 'constants are not looked up');
  assert.equal(lenient({}, null), false);
  assert.throws(() => strict({}, null), /MISSING_FIELD|not found|missing/i);
});

test('paths inside other operators are shared too (a value read by a computed comparison)', () => {
  const r = recorder();
  compile(parse('loan.amount <= applicant.income * 3'), { share: r.share });
  assert.ok(r.made.has('lenient\u0001loan.amount'), [...r.made.keys()].join(', '));
  assert.ok(r.made.has('lenient\u0001applicant.income'), [...r.made.keys()].join(', '));
});

test('without the option nothing is shared (two compiles give closures of their own)', () => {
  const a = compile(parse('a || b'));
  const b = compile(parse('a || b'));
  assert.notEqual(a, b);
  assert.equal(a({ b: 1 }, null), true);
});
