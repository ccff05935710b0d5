/**
 * The pure test runner (EXTENSIONS.md 2 "Tests"): each test runs traced; it passes when code,
 * message, output (a subset) and path match; an execution error is a failure with
 * `actual: {error, code}`. Coverage of steps, branches (a decision's default is one) and
 * terminals comes from the traces only, with the branch actually taken even when two branches
 * lead to the same step.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRuleset, execute, type RulesetTestDoc } from '../../../src/ruleset/index.js';
import { runTests, type TestRunOptions } from '../../../src/ruleset/testing.js';

const options: TestRunOptions = { clock: () => 0, timeoutMs: 0, maxSteps: 100 };

/** age: adult (two branches to the same step), minor via default; vip: no default. */
const rules = compileRuleset({
  config: { name: 'cov', entry_step: 'age' },
  steps: {
    age: {
      type: 'decision',
      branches: [
        { condition: 'user.age >= 65', next_step: 'senior' },
        { condition: 'user.age >= 18', next_step: 'vip' },
        { condition: 'user.vip == true', next_step: 'vip' },
      ],
      default_next: 'minor',
    },
    vip: {
      type: 'decision',
      branches: [
        { condition: 'user.vip == true', next_step: 'gold' },
        { condition: 'true', next_step: 'adult' },
      ],
    },
    senior: { type: 'terminal', result: { code: 'SENIOR', message: 'welcome', tier: 1 } },
    gold: { type: 'terminal', result: { code: 'GOLD' }, output: { name: 'user.name', tags: '[1, 2]' } },
    adult: { type: 'terminal', result: { code: 'ADULT' } },
    minor: { type: 'terminal', result: { code: 'MINOR' } },
    orphan: { type: 'terminal', result: { code: 'ORPHAN' } },
  },
});

function t(name: string, user: Record<string, unknown>, expect: RulesetTestDoc['expect']): RulesetTestDoc {
  return { name, input: { user } as RulesetTestDoc['input'], expect };
}

describe('runTests: results', () => {
  it('passes when code, message, output subset and path match', () => {
    const report = runTests(
      rules,
      [
        t('senior', { age: 70 }, { code: 'SENIOR', message: 'welcome', output: { tier: 1 }, path: 'age -> senior' }),
        t('gold', { age: 30, vip: true, name: 'ann' }, { code: 'GOLD', output: { name: 'ann', tags: [1, 2] } }),
        t('empty subset', { age: 30 }, { code: 'ADULT', output: {} }),
      ],
      options,
    );
    assert.equal(report.passed, 3);
    assert.equal(report.failed, 0);
    assert.deepEqual(report.results[0], {
      name: 'senior',
      passed: true,
      expected: { code: 'SENIOR', message: 'welcome', output: { tier: 1 }, path: 'age -> senior' },
      actual: { code: 'SENIOR', message: 'welcome', output: { tier: 1 }, path: 'age -> senior' },
    });
  });

  it('fails on each mismatching part, and shows what it got', () => {
    const report = runTests(
      rules,
      [
        t('code', { age: 70 }, { code: 'ADULT' }),
        t('message', { age: 70 }, { code: 'SENIOR', message: 'hello' }),
        t('output value', { age: 70 }, { code: 'SENIOR', output: { tier: 2 } }),
        t('output key missing', { age: 70 }, { code: 'SENIOR', output: { rank: null } }),
        t('output deep', { age: 30, vip: true, name: 'ann' }, { code: 'GOLD', output: { tags: [1] } }),
        t('path', { age: 70 }, { code: 'SENIOR', path: 'age -> vip -> senior' }),
      ],
      options,
    );
    assert.equal(report.passed, 0);
    assert.equal(report.failed, 6);
    assert.deepEqual(report.results[0]!.actual, { code: 'SENIOR', message: 'welcome', output: { tier: 1 }, path: 'age -> senior' });
    assert.deepEqual(report.results[0]!.expected, { code: 'ADULT' });
  });

  it('an execution error is a failure with actual {error, code}', () => {
    const strict = compileRuleset({
      config: { name: 'nb', entry_step: 'd' },
      steps: { d: { type: 'decision', branches: [{ condition: 'x > 1', next_step: 'e' }] }, e: { type: 'terminal', result: { code: 'E' } } },
    });
    const report = runTests(strict, [{ name: 'no match', input: { x: 0 }, expect: { code: 'E' } }], options);
    assert.equal(report.failed, 1);
    assert.deepEqual(report.results[0]!.actual, { error: "step 'd': no branch condition is true and there is no default_next", code: 'NO_MATCHING_BRANCH' });
    // A test that failed with an error has no trace: it covers nothing.
    assert.equal(report.coverage.steps.covered, 0);
  });

  it('no tests: an empty report with nothing covered', () => {
    const report = runTests(rules, [], options);
    assert.deepEqual(report.results, []);
    assert.deepEqual(report.coverage.terminals, {
      covered: 0,
      total: 5,
      missing: ['steps.senior', 'steps.gold', 'steps.adult', 'steps.minor', 'steps.orphan'],
    });
  });
});

describe('runTests: coverage', () => {
  it('counts steps, branches (default included) and terminals from the traces', () => {
    const report = runTests(rules, [t('senior', { age: 70 }, { code: 'SENIOR' }), t('adult', { age: 30 }, { code: 'ADULT' })], options);
    assert.deepEqual(report.coverage, {
      steps: { covered: 4, total: 7, missing: ['steps.gold', 'steps.minor', 'steps.orphan'] },
      branches: {
        covered: 3,
        total: 6,
        missing: ['steps.age.branches[2]', 'steps.age.default_next', 'steps.vip.branches[0]'],
      },
      terminals: { covered: 2, total: 5, missing: ['steps.gold', 'steps.minor', 'steps.orphan'] },
    });
  });

  it('tells apart two branches that lead to the same step', () => {
    // age 10 with vip: branches[2] (not branches[1]) takes it to `vip`.
    const report = runTests(rules, [t('young vip', { age: 10, vip: true }, { code: 'GOLD' })], options);
    assert.deepEqual(report.coverage.branches.missing, ['steps.age.branches[0]', 'steps.age.branches[1]', 'steps.age.default_next', 'steps.vip.branches[1]']);
  });

  it('the default of a decision is covered when taken', () => {
    const report = runTests(rules, [t('minor', { age: 10 }, { code: 'MINOR', path: 'age -> minor' })], options);
    assert.equal(report.passed, 1);
    assert.ok(!report.coverage.branches.missing.includes('steps.age.default_next'));
    assert.ok(report.coverage.branches.missing.includes('steps.age.branches[0]'));
  });

  it('a failing test still covers what its trace reached', () => {
    const report = runTests(rules, [t('wrong', { age: 10 }, { code: 'NOPE' })], options);
    assert.equal(report.failed, 1);
    assert.deepEqual(report.coverage.terminals.missing, ['steps.senior', 'steps.gold', 'steps.adult', 'steps.orphan']);
  });

  it('a decision visited several times (a loop) covers each branch it took', () => {
    const loop = compileRuleset({
      config: { name: 'loop', entry_step: 'init' },
      steps: {
        init: { type: 'action', actions: [{ action: 'set_variable', name: 'n', value: '0' }], next_step: 'check' },
        check: { type: 'decision', branches: [{ condition: '$n >= 2', next_step: 'done' }], default_next: 'inc' },
        inc: { type: 'action', actions: [{ action: 'set_variable', name: 'n', value: '$n + 1' }], next_step: 'check' },
        done: { type: 'terminal', result: { code: 'DONE' } },
      },
    });
    const report = runTests(
      loop,
      [{ name: 'twice', input: {}, expect: { code: 'DONE', path: 'init -> check -> inc -> check -> inc -> check -> done' } }],
      options,
    );
    assert.equal(report.passed, 1);
    assert.deepEqual(report.coverage.branches, { covered: 2, total: 2, missing: [] });
    assert.deepEqual(report.coverage.steps, { covered: 4, total: 4, missing: [] });
  });

  it('step ids that need quoting are written as locations', () => {
    const odd = compileRuleset({
      config: { name: 'odd', entry_step: 'a.b' },
      steps: {
        'a.b': { type: 'decision', branches: [{ condition: 'false', next_step: 'c d' }], default_next: 'c d' },
        'c d': { type: 'terminal', result: { code: 'C' } },
      },
    });
    const report = runTests(odd, [], options);
    assert.deepEqual(report.coverage.branches.missing, ['steps["a.b"].branches[0]', 'steps["a.b"].default_next']);
  });

  it('the branch log is only written by traced executions', () => {
    const log: number[] = [];
    execute(rules, { user: { age: 30 } }, { ...options, branchLog: log });
    assert.deepEqual(log, []);
    execute(rules, { user: { age: 30 } }, { ...options, trace: true, branchLog: log });
    assert.deepEqual(log, [1, 1]);
  });
});
