/**
 * execute under the work budget (EXTENSIONS.md 6): a condition, an action value or an output
 * over the budget is LIMIT_EXCEEDED naming the step and the limit; the execution timeout fires
 * inside one step (not only between steps) as TIMEOUT; the meter is disarmed after every
 * execution, success or failure, traced or not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { meter } from '../../../src/expr/index.js';
import { compileRuleset, execute, ExecutionError, type ExecuteOptions } from '../../../src/ruleset/index.js';

const HEAVY = `[${new Array(100).fill('a').join(',')}] == [${new Array(100).fill('b').join(',')}]`;

function ruleset(where: 'condition' | 'action' | 'output', expr: string, timeoutMs?: number) {
  return compileRuleset({
    config: { name: 'heavy', entry_step: 'start', ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }) },
    steps: {
      start: { type: 'action', actions: [{ action: 'set_variable', name: 'v', value: where === 'action' ? expr : '1' }], next_step: 'check' },
      check: {
        type: 'decision',
        branches: [{ condition: where === 'condition' ? expr : 'true', next_step: 'done' }],
        default_next: 'done',
      },
      done: { type: 'terminal', result: { code: 'DONE' }, output: { r: where === 'output' ? expr : '$v' } },
    },
  });
}

const input = { a: new Array(10_000).fill(0), b: new Array(10_000).fill(0) };
const small: ExecuteOptions = { clock: () => 0, timeoutMs: 0, maxSteps: 100, budget: { maxEvalOps: 100_000, maxValueBytes: 1 << 20 } };

function failsWith(fn: () => unknown, code: string, pattern: RegExp): ExecutionError {
  let caught: ExecutionError | undefined;
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ExecutionError, String(err));
    assert.equal(err.code, code);
    assert.match(err.message, pattern);
    caught = err;
    return true;
  });
  return caught!;
}

describe('LIMIT_EXCEEDED', () => {
  for (const where of ['condition', 'action', 'output'] as const) {
    for (const trace of [false, true]) {
      it(`a ${where} over --max-eval-ops (trace ${trace}) names the step and the limit; the meter is disarmed after`, () => {
        const compiled = ruleset(where, HEAVY);
        const step = where === 'condition' ? 'check' : where === 'action' ? 'start' : 'done';
        const err = failsWith(() => execute(compiled, input, { ...small, trace }), 'LIMIT_EXCEEDED', /--max-eval-ops/);
        assert.equal(err.stepId, step);
        assert.match(err.message, new RegExp(`^step '${step}'`));
        assert.equal(meter.maxOps, Infinity);
        assert.equal(meter.clock, null);
      });
    }
  }

  it('within the budget the same ruleset succeeds, and the budget is per execution', () => {
    const compiled = ruleset('condition', `[a] == [b]`);
    for (let i = 0; i < 50; i++) assert.equal(execute(compiled, input, small).code, 'DONE'); // 10,001 each: 500k in all
    assert.equal(meter.maxOps, Infinity);
  });

  it('a string over --max-value-bytes is LIMIT_EXCEEDED naming the flag', () => {
    const compiled = ruleset('output', 's + s');
    const opts: ExecuteOptions = { ...small, budget: { maxEvalOps: 1e9, maxValueBytes: 100 } };
    failsWith(() => execute(compiled, { s: 'x'.repeat(60) }, opts), 'LIMIT_EXCEEDED', /--max-value-bytes/);
    assert.deepEqual(execute(compiled, { s: 'x'.repeat(50) }, opts).output, { r: 'x'.repeat(100) });
  });
});

describe('the timeout inside one step', () => {
  for (const trace of [false, true]) {
    it(`one heavy condition ends with TIMEOUT at the ruleset's timeout_ms (trace ${trace})`, () => {
      let now = 0;
      const clock = () => (now += 5); // 5 ms per reading
      const compiled = ruleset('condition', `[${new Array(1000).fill('a').join(',')}] == [${new Array(1000).fill('b').join(',')}]`, 50);
      const err = failsWith(
        () => execute(compiled, input, { clock, timeoutMs: 0, maxSteps: 100, budget: { maxEvalOps: 1e12, maxValueBytes: 1 << 20 }, trace }),
        'TIMEOUT',
        /timed out after 50 ms/,
      );
      assert.equal(err.timeoutMs, 50);
      assert.equal(err.stepId, 'check');
      assert.ok(err.durationUs >= 50_000);
      assert.ok(now < 400, `stopped soon after the deadline (${now} ms of fake clock)`);
      assert.equal(meter.clock, null);
    });
  }
});
