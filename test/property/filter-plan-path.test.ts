/**
 * The planner's paths (src/filter/plan-path.ts) against simplify.ts `conjoin`: adding the same
 * conditions one by one must give the same conditions in the same order (or the same dead end),
 * with ids for every field and key and with the ids used up (the scanning fallback); and a path
 * that two branches extend stays as it was (the planner shares prefixes).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { EMPTY_PLAN_PATH, PathIds, conjoinPlan, type PlanPath } from '../../src/filter/plan-path.js';
import { and, negate, or, type Literal, type Pred } from '../../src/filter/predicate.js';
import { conjoin, type Path } from '../../src/filter/simplify.js';

const FIELDS = ['a', 'b', 'c', 'd'];
const VALUES = [0, 1, 2, 3, 'x', 'y', null, true];

const field = fc.constantFrom(...FIELDS);
const value = fc.constantFrom(...VALUES);
const num = fc.constantFrom(0, 1, 2, 3);

const literal: fc.Arbitrary<Literal> = fc.oneof(
  fc.record({ type: fc.constantFrom('eq' as const, 'ne' as const), field, value }),
  fc.record({ type: fc.constantFrom('lt' as const, 'le' as const, 'gt' as const, 'ge' as const), field, value: num }),
  fc.record({ type: fc.constantFrom('in' as const, 'not_in' as const), field, values: fc.uniqueArray(value, { minLength: 2, maxLength: 3 }) }),
  fc.record({ type: fc.constantFrom('is_null' as const, 'not_null' as const, 'truthy' as const, 'falsy' as const), field }),
  fc.record({ type: fc.constant('starts_with' as const), field, value: fc.constantFrom('x', 'y') }),
);

/** A condition as the planner adds them: literals (or their negations), disjunctions, conjunctions, unsupported ones. */
const condition: fc.Arbitrary<Pred> = fc.oneof(
  { weight: 5, arbitrary: literal },
  { weight: 2, arbitrary: literal.map((l) => negate(l)) },
  { weight: 3, arbitrary: fc.array(literal, { minLength: 2, maxLength: 3 }).map((ls) => or(ls)) },
  { weight: 1, arbitrary: fc.array(literal, { minLength: 2, maxLength: 3 }).map((ls) => and(ls)) },
  { weight: 1, arbitrary: fc.array(literal, { minLength: 2, maxLength: 3 }).map((ls) => negate(and(ls))) },
  { weight: 1, arbitrary: fc.constantFrom<Pred>({ type: 'unsupported', reason: 'u1' }, { type: 'unsupported', reason: 'u2', negated: true }) },
);

/** Ids with every one of the 64 given away: each condition takes the scanning fallback. */
function usedUp(): PathIds {
  const ids = new PathIds();
  for (let i = 0; i < 64; i++) {
    ids.field(`other-field-${i}`);
    ids.key(`other-key-${i}`);
  }
  return ids;
}

/** Adds the conditions one by one both ways, comparing after each. */
function same(conditions: readonly Pred[], ids: PathIds): void {
  let path: Path | null = [];
  let plan: PlanPath | null = EMPTY_PLAN_PATH;
  for (const [i, c] of conditions.entries()) {
    path = conjoin(path, c);
    plan = conjoinPlan(plan, c, ids);
    if (path === null) {
      assert.equal(plan, null, `step ${i}: conjoin ends the path, conjoinPlan does not`);
      return;
    }
    assert.ok(plan !== null, `step ${i}: conjoinPlan ends the path, conjoin does not`);
    assert.deepEqual(plan.items, path, `step ${i}`);
  }
}

test('conjoinPlan adds conditions exactly as conjoin does (with ids, and with the ids used up)', () => {
  fc.assert(
    fc.property(fc.array(condition, { minLength: 1, maxLength: 30 }), (conditions) => {
      same(conditions, new PathIds());
      same(conditions, usedUp());
    }),
    { numRuns: 3000 },
  );
});

test('a path extended by two branches stays as it was (prefixes are shared)', () => {
  fc.assert(
    fc.property(fc.array(condition, { minLength: 0, maxLength: 15 }), condition, condition, (prefix, x, y) => {
      const ids = new PathIds();
      let plan: PlanPath | null = EMPTY_PLAN_PATH;
      for (const c of prefix) if (plan !== null) plan = conjoinPlan(plan, c, ids);
      if (plan === null) return;
      const before = [...plan.items];
      const bits = [plan.lo, plan.hi, plan.jlo, plan.jhi];
      const left = conjoinPlan(plan, x, ids);
      const right = conjoinPlan(plan, y, ids);
      assert.deepEqual(plan.items, before);
      assert.deepEqual([plan.lo, plan.hi, plan.jlo, plan.jhi], bits);
      // Each branch is what conjoin gives on the shared prefix.
      assert.deepEqual(left?.items ?? null, conjoin(before, x));
      assert.deepEqual(right?.items ?? null, conjoin(before, y));
    }),
    { numRuns: 3000 },
  );
});
