/**
 * Impact over inputs (src/change/impact.ts): outcomes counted by transition, errors, examples
 * (at most 20, every transition first), the limits, and that the traced flag is ignored.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { impact, ImpactStopped, MAX_IMPACT_EXAMPLES } from '../../../src/change/index.js';
import { compileRuleset, type ExecuteOptions } from '../../../src/ruleset/index.js';

function rules(threshold: number, extra: Record<string, unknown> = {}): unknown {
  return {
    config: { name: 'loan', entry_step: 'age', ...extra },
    steps: {
      age: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'score' }], default_next: 'minor' },
      score: {
        type: 'decision',
        branches: [
          { condition: `user.score >= ${threshold}`, next_step: 'ok' },
          { condition: 'user.score >= 300', next_step: 'review' },
        ],
      },
      ok: { type: 'terminal', result: { code: 'APPROVE' } },
      review: { type: 'terminal', result: { code: 'REVIEW' } },
      minor: { type: 'terminal', result: { code: 'DECLINE' } },
    },
  };
}

const OPTIONS: ExecuteOptions = { clock: () => 0, timeoutMs: 0, maxSteps: 100 };

describe('impact', () => {
  const current = compileRuleset(rules(700));
  const candidate = compileRuleset(rules(650));

  it('counts the inputs whose code changed, by transition', () => {
    const inputs = [
      { user: { age: 30, score: 680 } }, // REVIEW -> APPROVE
      { user: { age: 30, score: 660 } }, // REVIEW -> APPROVE
      { user: { age: 30, score: 720 } }, // APPROVE both
      { user: { age: 10, score: 680 } }, // DECLINE both
    ];
    const r = impact(current, candidate, inputs, OPTIONS);
    assert.equal(r.total, 4);
    assert.equal(r.changed, 2);
    assert.equal(r.errors, 0);
    assert.deepEqual(r.transitions, [{ from: 'REVIEW', to: 'APPROVE', count: 2 }]);
    assert.deepEqual(r.examples, [
      { input: inputs[0], from: 'REVIEW', to: 'APPROVE' },
      { input: inputs[1], from: 'REVIEW', to: 'APPROVE' },
    ]);
  });

  it('the same version: nothing changed', () => {
    const r = impact(current, current, [{ user: { age: 30, score: 400 } }, { user: { age: 40, score: 900 } }], OPTIONS);
    assert.deepEqual(r, { total: 2, changed: 0, errors: 0, transitions: [], examples: [] });
  });

  it('a failed execution is error:<REASON>, counted in errors; both sides failing alike is not a change', () => {
    // score 100 matches no branch of `score` and it has no default: NO_MATCHING_BRANCH on both.
    const inputs = [{ user: { age: 30, score: 100 } }, { user: { age: 30, score: 'high' } }];
    const strictCandidate = compileRuleset(rules(650, { field_missing: 'strict' }));
    const r = impact(current, strictCandidate, [...inputs, { user: { age: 30 } }], OPTIONS);
    assert.equal(r.errors, 3);
    // The missing score: lenient null (no branch true) vs strict MISSING_FIELD evaluation error.
    assert.deepEqual(r.transitions, [{ from: 'error:NO_MATCHING_BRANCH', to: 'error:EVALUATION_ERROR', count: 1 }]);
    assert.equal(r.changed, 1);
  });

  it('an input the candidate schema rejects is error:INPUT_INVALID', () => {
    const schema = {
      type: 'object',
      properties: { user: { type: 'object', properties: { age: { type: 'integer' }, score: { type: 'integer' } }, required: ['score'] } },
      required: ['user'],
    };
    const withSchema = compileRuleset(rules(700, { input_schema: schema }));
    const r = impact(current, withSchema, [{ user: { age: 30, score: 800 } }, { user: { age: 30, score: 800.5 } }], OPTIONS);
    assert.deepEqual(r.transitions, [{ from: 'APPROVE', to: 'error:INPUT_INVALID', count: 1 }]);
    assert.equal(r.errors, 1);
  });

  it('transitions most frequent first; at most 20 examples, each transition shown, in input order', () => {
    const inputs: unknown[] = [];
    for (let i = 0; i < 30; i++) inputs.push({ user: { age: 30, score: 660 } }); // REVIEW -> APPROVE
    inputs.push({ user: { age: 30, score: 100 } }); // no change (error both)
    const other = compileRuleset(rules(650, {}));
    const swapped = compileRuleset({
      ...(rules(650) as object),
      steps: { ...(rules(650) as { steps: object }).steps, minor: { type: 'terminal', result: { code: 'REFER' } } },
    });
    inputs.push({ user: { age: 12, score: 1 } }); // DECLINE -> REFER, last input
    const r = impact(current, swapped, inputs, OPTIONS);
    assert.equal(r.changed, 31);
    assert.deepEqual(r.transitions, [
      { from: 'REVIEW', to: 'APPROVE', count: 30 },
      { from: 'DECLINE', to: 'REFER', count: 1 },
    ]);
    assert.equal(r.examples.length, MAX_IMPACT_EXAMPLES);
    assert.deepEqual(r.examples.at(-1), { input: inputs.at(-1), from: 'DECLINE', to: 'REFER' });
    assert.equal(r.examples.filter((e) => e.to === 'APPROVE').length, MAX_IMPACT_EXAMPLES - 1);
    assert.equal(impact(current, other, inputs, OPTIONS).changed, 30);
  });

  it('the trace flag is ignored: impact runs untraced', () => {
    const r = impact(current, candidate, [{ user: { age: 30, score: 680 } }], { ...OPTIONS, trace: true });
    assert.equal(r.changed, 1);
    assert.equal(JSON.stringify(r).includes('trace'), false);
  });

  it('stops at the deadline and at the operations budget', () => {
    let now = 0;
    const clock = () => now++;
    const inputs = Array.from({ length: 200 }, () => ({ user: { age: 30, score: 680 } }));
    assert.throws(
      () => impact(current, candidate, inputs, { ...OPTIONS, clock }, { deadline: 1 }),
      (e: unknown) => e instanceof ImpactStopped && e.reason === 'deadline' && e.done > 0 && e.done < 200,
    );
    // `in` over a list costs one operation per element (expr/budget.ts): 4 a version, 8 an input.
    const tags = compileRuleset({
      config: { name: 'tags', entry_step: 'a' },
      steps: {
        a: { type: 'decision', branches: [{ condition: '"z" in tags', next_step: 'b' }], default_next: 'b' },
        b: { type: 'terminal', result: { code: 'B' } },
      },
    });
    const tagged = Array.from({ length: 200 }, () => ({ tags: ['a', 'b', 'c', 'd'] }));
    assert.throws(
      () => impact(tags, tags, tagged, OPTIONS, { maxOps: 80 }),
      (e: unknown) => e instanceof ImpactStopped && e.reason === 'ops' && e.done === 10,
    );
    assert.equal(impact(tags, tags, tagged, OPTIONS, { maxOps: 8 * 200 + 1 }).total, 200);
    assert.equal(impact(current, candidate, inputs, OPTIONS, { maxOps: 1e9, deadline: Infinity }).changed, 200);
  });
});
