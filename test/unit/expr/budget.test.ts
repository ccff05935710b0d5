/**
 * The work budget of an evaluation (src/expr/budget.ts, EXTENSIONS.md 6 "Work budget" and
 * "Numbers"): element-wise operations against --max-eval-ops, built strings against
 * --max-value-bytes, the deadline checked inside the counting, the meter disarmed outside an
 * execution, and results that are not finite numbers as TYPE_ERROR.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  BudgetError,
  DEFAULT_BUDGET,
  ExprRuntimeError,
  applyBinary,
  applyUnary,
  armBudget,
  callFunction,
  compile,
  disarmBudget,
  jsonEquals,
  meter,
  parse,
} from '../../../src/expr/index.js';

const run = (expr: string, input: unknown) => compile(parse(expr))(input, null);
const zeros = (n: number) => new Array<number>(n).fill(0);
const noClock = () => 0;

function throwsBudget(fn: () => unknown, kind: BudgetError['kind'], pattern?: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof BudgetError, `a BudgetError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

afterEach(() => disarmBudget());

describe('operations (--max-eval-ops)', () => {
  it('deep equality of arrays counts their length and stops at the budget', () => {
    armBudget({ maxEvalOps: 10_000, maxValueBytes: 1 << 20 }, noClock, 0, 0);
    const input = { a: zeros(3000), b: zeros(3000) };
    assert.equal(run('a == b', input), true); // 3,000
    assert.equal(run('[a, a] == [b, b]', input), true); // 2 + 6,000 more
    throwsBudget(() => run('[a, a, a] == [b, b, b]', input), 'ops', /work budget of 10000 operations \(--max-eval-ops\)/);
  });

  it('the amplification case: [a,a,…×1000] == [b,b,…×1000] on big arrays stops after a few element comparisons', () => {
    armBudget(DEFAULT_BUDGET, noClock, 0, 0);
    const a = zeros(2_500_000);
    const expr = `[${new Array(1000).fill('a').join(',')}] == [${new Array(1000).fill('b').join(',')}]`;
    const t = performance.now();
    throwsBudget(() => run(expr, { a, b: [...a] }), 'ops');
    assert.ok(meter.ops <= DEFAULT_BUDGET.maxEvalOps + 2_500_000 + 1000, `stopped right after the budget (${meter.ops})`);
    assert.ok(performance.now() - t < 5000);
  });

  it('in, contains, sum, avg, min, max and string scans count toward the budget', () => {
    const list = zeros(600);
    const cases: Array<[string, unknown]> = [
      ['1 in list', { list }],
      ['contains(list, 1)', { list }],
      ['sum(list)', { list }],
      ['avg(list)', { list }],
      ['min(list)', { list }],
      ['max(list)', { list }],
      ['upper(s)', { s: 'x'.repeat(600) }],
      ['len(s)', { s: 'x'.repeat(600) }],
      ['"y" in s', { s: 'x'.repeat(600) }],
      ['s < t', { s: 'x'.repeat(600), t: 'x'.repeat(600) + 'y' }],
    ];
    for (const [expr, input] of cases) {
      armBudget({ maxEvalOps: 1000, maxValueBytes: 1 << 20 }, noClock, 0, 0);
      run(expr, input); // 600 operations: within
      assert.ok(meter.ops >= 600, `${expr} counted ${meter.ops}`);
      throwsBudget(() => run(expr, input), 'ops'); // 1,200: over
    }
  });

  it('a primitive comparison counts nothing (no per-node counting)', () => {
    armBudget({ maxEvalOps: 10, maxValueBytes: 1 << 20 }, noClock, 0, 0);
    for (let i = 0; i < 100; i++) run('x == 1 && y + 1 > 2 && z != "a"', { x: 1, y: 5, z: 'b' });
    assert.equal(meter.ops, 0);
  });

  it('a disarmed meter (outside an execution) has no operation limit and no deadline', () => {
    disarmBudget();
    assert.equal(jsonEquals(zeros(100_000) as never, zeros(100_000) as never), true);
    assert.equal(meter.maxOps, Infinity);
    assert.equal(meter.deadline, Infinity);
  });
});

describe('the deadline inside the counting', () => {
  it('a single long comparison ends with a deadline error once the clock passes it', () => {
    let now = 0;
    const clock = () => (now += 1); // 1 ms per reading
    armBudget({ maxEvalOps: 1e12, maxValueBytes: 1 << 20 }, clock, 0, 20);
    const a = zeros(100_000);
    const expr = `[${new Array(1000).fill('a').join(',')}] == [${new Array(1000).fill('b').join(',')}]`;
    assert.throws(
      () => run(expr, { a, b: [...a] }),
      (err: unknown) => err instanceof BudgetError && err.kind === 'deadline' && err.timeoutMs === 20 && err.elapsedMs >= 20,
    );
  });

  it('no timeout (0) reads no clock', () => {
    armBudget({ maxEvalOps: 1e12, maxValueBytes: 1 << 20 }, () => assert.fail('clock read'), 0, 0);
    const a = zeros(300_000);
    assert.equal(run('[a, a, a] == [b, b, b]', { a, b: [...a] }), true);
  });
});

describe('strings (--max-value-bytes)', () => {
  it('a string built over the limit fails; at the limit it fits (UTF-8 bytes, not UTF-16 units)', () => {
    armBudget({ maxEvalOps: 1e9, maxValueBytes: 12 }, noClock, 0, 0);
    assert.equal(run('s + s', { s: 'ééé' }), 'éééééé'); // 6 units, 12 bytes: fits
    throwsBudget(() => run('s + s + "x"', { s: 'ééé' }), 'bytes', /more than 12 bytes was built \(--max-value-bytes\)/);
    assert.equal(run('s + s', { s: 'abcdef' }), 'abcdefabcdef');
    throwsBudget(() => run('s + s', { s: 'abcdefg' }), 'bytes');
  });

  it('upper() is checked on its result (a string can grow when upper-cased)', () => {
    armBudget({ maxEvalOps: 1e9, maxValueBytes: 12 }, noClock, 0, 0);
    assert.equal(run('upper(s)', { s: 'ßßß' }), 'SSSSSS');
    throwsBudget(() => run('upper(s)', { s: 'ßßßßßßß' }), 'bytes'); // 14 bytes in, 14 out
  });

  it('the amplification cases: upper(s+s+…) and len(s+s+…) with a 1 MB s stop at the first concatenation', () => {
    armBudget(DEFAULT_BUDGET, noClock, 0, 0);
    const s = 'x'.repeat(1_000_000);
    const chain = new Array(200).fill('s').join('+');
    throwsBudget(() => run(`upper(${chain})`, { s }), 'bytes');
    throwsBudget(() => run(`len(${new Array(600).fill('s').join('+')})`, { s }), 'bytes');
  });

  it('strings read from the input are not limited (only built ones)', () => {
    armBudget({ maxEvalOps: 1e9, maxValueBytes: 4 }, noClock, 0, 0);
    assert.equal(run('s', { s: 'a long input string' }), 'a long input string');
  });
});

describe('results that are not finite numbers are TYPE_ERROR (never null)', () => {
  const typeError = (fn: () => unknown) => assert.throws(fn, (err: unknown) => err instanceof ExprRuntimeError && err.code === 'TYPE_ERROR');

  it('arithmetic that overflows', () => {
    typeError(() => run('x * 10', { x: 1e308 }));
    typeError(() => run('x + x', { x: 1.7e308 }));
    typeError(() => run('-x - x', { x: 1.7e308 }));
    typeError(() => run('x / 0.1', { x: 1e308 }));
    typeError(() => applyBinary('*', 1e308, 10));
  });

  it('operators and functions on a non-finite value given by a library caller', () => {
    typeError(() => run('x % 3', { x: Infinity }));
    typeError(() => applyBinary('%', Infinity, 3));
    typeError(() => applyUnary('-', Infinity));
    for (const f of ['abs', 'round', 'floor', 'ceil']) typeError(() => callFunction(f, [Infinity]));
  });
});
