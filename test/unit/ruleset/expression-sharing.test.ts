/**
 * Rulesets that write the same condition share its compiled evaluator (src/ruleset/expressions.ts):
 * one closure per expression text and `field_missing` mode, with each ruleset still answering by
 * its own steps and mode.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileRuleset, execute } from '../../../src/ruleset/index.js';
import { parseExpression } from '../../../src/ruleset/expressions.js';

const OPTIONS = { clock: () => 0, timeoutMs: 0, maxSteps: 100 } as const;

function fnOf(source: string, mode: 'lenient' | 'strict') {
  const outcome = parseExpression(source, mode);
  assert.ok(outcome.ok);
  return outcome.expr.fn;
}

test('the same expression text in the same mode compiles once', () => {
  const a = fnOf('user.country in ["DE", "FR"] && user.age >= 18', 'lenient');
  const b = fnOf('user.country in ["DE", "FR"] && user.age >= 18', 'lenient');
  assert.equal(a, b);
  assert.notEqual(fnOf('user.country in ["DE", "FR"] && user.age >= 21', 'lenient'), a, 'another literal, another evaluator');
  assert.notEqual(fnOf('user.country in ["DE", "FR"] && user.age >= 18', 'strict'), a, 'another mode, another evaluator');
});

test('rulesets sharing a condition keep their own steps, outcomes and field_missing mode', () => {
  const doc = (name: string, mode: 'lenient' | 'strict', code: string) => ({
    config: { name, version: '1.0.0', entry_step: 'check', field_missing: mode },
    steps: {
      check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'yes' }], default_next: 'no' },
      yes: { type: 'terminal', result: { code } },
      no: { type: 'terminal', result: { code: 'NO' } },
    },
  });
  const a = compileRuleset(doc('a', 'lenient', 'A_YES'));
  const b = compileRuleset(doc('b', 'lenient', 'B_YES'));
  const strict = compileRuleset(doc('s', 'strict', 'S_YES'));
  assert.equal(execute(a, { user: { age: 30 } }, OPTIONS).code, 'A_YES');
  assert.equal(execute(b, { user: { age: 30 } }, OPTIONS).code, 'B_YES');
  assert.equal(execute(b, { user: { age: 3 } }, OPTIONS).code, 'NO');
  assert.equal(execute(a, {}, OPTIONS).code, 'NO', 'lenient: a missing field is null');
  assert.throws(() => execute(strict, {}, OPTIONS), /user/, 'strict: a missing field is an error, though the text is the same');
});
