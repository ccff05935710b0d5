/**
 * Properties of the test runner's coverage (EXTENSIONS.md 2 "Tests"), over random inputs of a
 * ruleset whose branches share targets:
 * - one test covers exactly the branch the first true condition names (or the default), computed
 *   here independently of the engine, and exactly the steps of its trace path;
 * - for any set of tests, covered + missing = total and covered only grows when tests are added.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compileRuleset, type RulesetTestDoc } from '../../src/ruleset/index.js';
import { runTests, type TestRunOptions } from '../../src/ruleset/testing.js';

const options: TestRunOptions = { clock: () => 0, timeoutMs: 0, maxSteps: 100 };

const CONDITIONS: Array<[string, (x: number, y: number) => boolean]> = [
  ['x > 5', (x) => x > 5],
  ['y < 0', (_x, y) => y < 0],
  ['x == y', (x, y) => x === y],
  ['x + y > 3', (x, y) => x + y > 3],
];

const rules = compileRuleset({
  config: { name: 'prop', entry_step: 'd' },
  steps: {
    // Branches 0 and 2 lead to the same step; 1 and 3 to another.
    d: { type: 'decision', branches: CONDITIONS.map(([condition], i) => ({ condition, next_step: i % 2 === 0 ? 'a' : 'b' })), default_next: 'c' },
    a: { type: 'terminal', result: { code: 'A' } },
    b: { type: 'terminal', result: { code: 'B' } },
    c: { type: 'terminal', result: { code: 'C' } },
  },
});

const point = fc.record({ x: fc.integer({ min: -10, max: 10 }), y: fc.integer({ min: -10, max: 10 }) });

test('one test covers exactly the branch it takes and the steps of its path', () => {
  fc.assert(
    fc.property(point, ({ x, y }) => {
      const report = runTests(rules, [{ name: 't', input: { x, y }, expect: { code: 'A' } }], options);
      const first = CONDITIONS.findIndex(([, holds]) => holds(x, y));
      const taken = first === -1 ? 'steps.d.default_next' : `steps.d.branches[${first}]`;
      const all = ['steps.d.branches[0]', 'steps.d.branches[1]', 'steps.d.branches[2]', 'steps.d.branches[3]', 'steps.d.default_next'];
      assert.deepEqual(
        report.coverage.branches.missing,
        all.filter((b) => b !== taken),
      );
      const target = first === -1 ? 'c' : first % 2 === 0 ? 'a' : 'b';
      assert.equal(report.results[0]!.actual.code, target.toUpperCase());
      assert.deepEqual(
        report.coverage.steps.missing,
        ['steps.a', 'steps.b', 'steps.c'].filter((s) => s !== `steps.${target}`),
      );
    }),
    { numRuns: 300 },
  );
});

test('covered + missing = total, and adding tests never uncovers anything', () => {
  fc.assert(
    fc.property(fc.array(point, { maxLength: 8 }), point, (points, extra) => {
      const tests: RulesetTestDoc[] = points.map((p, i) => ({ name: `t${i}`, input: p, expect: { code: 'A' } }));
      const before = runTests(rules, tests, options).coverage;
      const after = runTests(rules, [...tests, { name: 'extra', input: extra, expect: { code: 'A' } }], options).coverage;
      for (const kind of ['steps', 'branches', 'terminals'] as const) {
        assert.equal(before[kind].covered + before[kind].missing.length, before[kind].total);
        assert.ok(after[kind].covered >= before[kind].covered);
        for (const m of after[kind].missing) assert.ok(before[kind].missing.includes(m));
      }
    }),
    { numRuns: 200 },
  );
});
