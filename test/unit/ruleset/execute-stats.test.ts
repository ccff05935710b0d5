/**
 * `ExecuteOptions.stats` (the step count of execution spans): filled with the number
 * of visited steps, equal to the trace's step count, in both walks, and also when the
 * execution fails (the failing step counts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileRuleset, execute, ExecutionError, type ExecuteOptions, type ExecutionStats } from '../../../src/ruleset/index.js';

const base: ExecuteOptions = { clock: () => 0, timeoutMs: 0, maxSteps: 50 };

/** entry → (action) → terminal, or a loop, or a failing expression at the third step. */
const ruleset = compileRuleset({
  config: { name: 'stats', entry_step: 'route' },
  steps: {
    route: {
      type: 'decision',
      branches: [
        { condition: 'kind == "short"', next_step: 'done' },
        { condition: 'kind == "long"', next_step: 'bump' },
        { condition: 'kind == "loop"', next_step: 'spin' },
        { condition: 'kind == "fail"', next_step: 'mid' },
      ],
    },
    bump: { type: 'action', actions: [{ action: 'set_variable', name: 'n', value: '1' }], next_step: 'check' },
    check: { type: 'decision', branches: [{ condition: '$n == 1', next_step: 'done' }] },
    spin: { type: 'action', actions: [], next_step: 'spin' },
    mid: { type: 'action', actions: [], next_step: 'bad' },
    bad: { type: 'decision', branches: [{ condition: '1 / 0 > 0', next_step: 'done' }] },
    done: { type: 'terminal', result: { code: 'DONE' }, output: { kind: 'kind' } },
  },
});

for (const traced of [false, true]) {
  const mode = traced ? 'traced' : 'untraced';

  test(`${mode}: stats.steps is the number of visited steps, the terminal included`, () => {
    for (const [kind, steps] of [
      ['short', 2],
      ['long', 4],
    ] as const) {
      const stats: ExecutionStats = { steps: -1 };
      const r = execute(ruleset, { kind }, { ...base, trace: traced, stats });
      assert.equal(r.code, 'DONE');
      assert.equal(stats.steps, steps, kind);
      if (traced) assert.equal(r.trace?.steps.length, steps);
    }
  });

  test(`${mode}: a failing execution still fills stats, counting the failing step`, () => {
    const stats: ExecutionStats = { steps: -1 };
    assert.throws(() => execute(ruleset, { kind: 'fail' }, { ...base, trace: traced, stats }), ExecutionError);
    assert.equal(stats.steps, 3);
    const loop: ExecutionStats = { steps: -1 };
    assert.throws(() => execute(ruleset, { kind: 'loop' }, { ...base, trace: traced, stats: loop }), /step limit of 50/);
    assert.equal(loop.steps, 51);
  });

  test(`${mode}: one stats object serves consecutive executions`, () => {
    const stats: ExecutionStats = { steps: 0 };
    const options = { ...base, trace: traced, stats };
    execute(ruleset, { kind: 'long' }, options);
    assert.equal(stats.steps, 4);
    execute(ruleset, { kind: 'short' }, options);
    assert.equal(stats.steps, 2);
  });
}
