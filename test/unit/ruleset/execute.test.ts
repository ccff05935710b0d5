/**
 * execute: result shape, shared static output, odd inputs, log sink failures, error details.
 * (Step semantics are in the golden cases: test/cases/ruleset/*.yaml.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileRuleset, execute, ExecutionError, type ExecuteOptions } from '../../../src/ruleset/index.js';

const options: ExecuteOptions = { clock: () => 0, timeoutMs: 5000, maxSteps: 10000 };

const ruleset = compileRuleset({
  config: { name: 'shape', entry_step: 'check' },
  steps: {
    check: {
      type: 'decision',
      branches: [
        { condition: 'kind == "static"', next_step: 'fixed' },
        { condition: 'kind == "computed"', next_step: 'computed' },
        { condition: 'kind == "log"', next_step: 'logged' },
      ],
      default_next: 'fixed',
    },
    logged: { type: 'action', actions: [{ action: 'log', message: 'hi', level: 'error' }], next_step: 'fixed' },
    fixed: { type: 'terminal', result: { code: 'FIXED', message: 'm', data: { list: [1, 2] } } },
    computed: { type: 'terminal', result: { code: 'COMPUTED', keep: 1 }, output: { kind: 'kind' } },
  },
});

test('an untraced result has exactly code, message, output, duration_us', () => {
  const r = execute(ruleset, { kind: 'static' }, options);
  assert.deepEqual(Object.keys(r), ['code', 'message', 'output', 'duration_us']);
  assert.deepEqual(r, { code: 'FIXED', message: 'm', output: { data: { list: [1, 2] } }, duration_us: 0 });
});

test('a traced result adds trace last', () => {
  const r = execute(ruleset, { kind: 'static' }, { ...options, trace: true });
  assert.deepEqual(Object.keys(r), ['code', 'message', 'output', 'duration_us', 'trace']);
});

test('static output is one shared frozen object; computed output is fresh per execution', () => {
  const a = execute(ruleset, { kind: 'static' }, options);
  const b = execute(ruleset, { kind: 'static' }, options);
  assert.equal(a.output, b.output);
  assert.ok(Object.isFrozen(a.output) && Object.isFrozen(a.output['data']));
  const c = execute(ruleset, { kind: 'computed' }, options);
  const d = execute(ruleset, { kind: 'computed' }, options);
  assert.notEqual(c.output, d.output);
  assert.deepEqual(c.output, { keep: 1, kind: 'computed' });
  assert.ok(!Object.isFrozen(c.output));
});

test('inputs that are not objects do not crash (lenient paths read null)', () => {
  for (const input of [null, undefined, 5, 'text', [], [1, 2], true]) {
    const r = execute(ruleset, input, options);
    assert.equal(r.code, 'FIXED', JSON.stringify(input));
  }
});

test('log actions are dropped without a sink, and a throwing sink does not fail the execution', () => {
  assert.equal(execute(ruleset, { kind: 'log' }, options).code, 'FIXED');
  const seen: string[] = [];
  const r = execute(
    ruleset,
    { kind: 'log' },
    {
      ...options,
      log: (level, message) => {
        seen.push(`${level}:${message}`);
        throw new Error('sink down');
      },
    },
  );
  assert.equal(r.code, 'FIXED');
  assert.deepEqual(seen, ['error:hi']);
});

test('execution errors carry the step id', () => {
  const strict = compileRuleset({
    config: { name: 'strict', entry_step: 'a', field_missing: 'strict' },
    steps: {
      a: { type: 'decision', branches: [{ condition: 'x.y > 1', next_step: 'b' }] },
      b: { type: 'terminal', result: { code: 'B' } },
    },
  });
  assert.throws(
    () => execute(strict, {}, options),
    (err: unknown) => err instanceof ExecutionError && err.code === 'EVALUATION_ERROR' && err.stepId === 'a',
  );
  assert.throws(
    () => execute(strict, { x: { y: 0 } }, options),
    (err: unknown) => err instanceof ExecutionError && err.code === 'NO_MATCHING_BRANCH' && err.stepId === 'a',
  );
});

test('maxSteps 0 means no step limit', () => {
  const steps: Record<string, unknown> = {};
  for (let i = 0; i < 20000; i++) steps[`s${i}`] = { type: 'action', actions: [], next_step: `s${i + 1}` };
  steps['s20000'] = { type: 'terminal', result: { code: 'END' } };
  const long = compileRuleset({ config: { name: 'long', entry_step: 's0' }, steps });
  assert.equal(execute(long, {}, { ...options, maxSteps: 0 }).code, 'END');
  assert.throws(
    () => execute(long, {}, options),
    (err: unknown) => err instanceof ExecutionError && err.code === 'STEP_LIMIT',
  );
});

test('the same compiled ruleset gives the same answers when reused many times', () => {
  for (let i = 0; i < 1000; i++) {
    const kind = i % 2 === 0 ? 'static' : 'computed';
    assert.equal(execute(ruleset, { kind }, options).code, i % 2 === 0 ? 'FIXED' : 'COMPUTED');
  }
});
