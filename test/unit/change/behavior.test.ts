/**
 * The behavioural diff (src/change/behavior.ts, EXTENSIONS.md 4) on small hand-written pairs of
 * versions, with the regions each must give: from and to codes, the predicate tree, the SQL, and
 * a witness that really gives those codes on the two versions.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { behaviouralDiff, type BehaviouralDiff } from '../../../src/change/index.js';
import type { JsonValue } from '../../../src/expr/ast.js';
import { ExecutionError, compileRuleset, execute, type CompiledRuleset } from '../../../src/ruleset/index.js';

type Steps = Record<string, unknown>;

function ruleset(steps: Steps, extra: Record<string, unknown> = {}): CompiledRuleset {
  const first = Object.keys(steps)[0]!;
  return compileRuleset({ config: { name: 'golden', entry_step: first, ...extra }, steps });
}

const terminal = (code: string): unknown => ({ type: 'terminal', result: { code, message: code } });
const decide = (branches: [string, string][], defaultNext?: string): unknown => ({
  type: 'decision',
  branches: branches.map(([condition, next_step]) => ({ condition, next_step })),
  ...(defaultNext === undefined ? {} : { default_next: defaultNext }),
});

function codeOf(c: CompiledRuleset, input: JsonValue): string | null {
  try {
    return execute(c, input, { clock: () => 0, timeoutMs: 0, maxSteps: 1000 }).code;
  } catch (err) {
    if (err instanceof ExecutionError) return null;
    throw err;
  }
}

/** The regions as `from->to: sql`, and every witness checked on both versions. */
function summary(from: CompiledRuleset, to: CompiledRuleset, d: BehaviouralDiff): string[] {
  for (const r of d.regions) {
    if (r.witness === null) continue;
    assert.deepEqual([codeOf(from, r.witness), codeOf(to, r.witness)], [r.from_code, r.to_code], `witness ${JSON.stringify(r.witness)}`);
  }
  return d.regions.map((r) => `${r.from_code}->${r.to_code}: ${r.sql}`);
}

test('a raised threshold: one region, the band between the old and the new bound', () => {
  const v = (limit: number): CompiledRuleset =>
    ruleset({ check: decide([[`user.age < ${limit}`, 'no']], 'yes'), no: terminal('REJECTED'), yes: terminal('APPROVED') });
  const [from, to] = [v(18), v(21)];
  const d = behaviouralDiff(from, to);
  assert.deepEqual(summary(from, to, d), ['APPROVED->REJECTED: (user_age >= 18 AND user_age < 21)']);
  assert.deepEqual(d.regions[0]!.condition, {
    type: 'and',
    conditions: [
      { type: 'ge', field: 'user.age', value: 18 },
      { type: 'lt', field: 'user.age', value: 21 },
    ],
  });
  assert.ok(d.regions[0]!.witness !== null);
  assert.deepEqual({ equivalent: d.equivalent, exact: d.exact, truncated: d.truncated }, { equivalent: false, exact: true, truncated: false });
});

test('swapped targets: both directions, each its own region', () => {
  const from = ruleset({ s: decide([['vip', 'a']], 'b'), a: terminal('A'), b: terminal('B') });
  const to = ruleset({ s: decide([['vip', 'b']], 'a'), a: terminal('A'), b: terminal('B') });
  const d = behaviouralDiff(from, to);
  assert.deepEqual(summary(from, to, d), ['A->B: vip IS TRUE', 'B->A: vip IS NOT TRUE']);
  assert.deepEqual(d.regions[0]!.condition, { type: 'not_in', field: 'vip', values: [null, false, 0, ''] });
  assert.ok(d.regions.every((r) => r.witness !== null));
});

test('reordered overlapping branches: the overlap changes hands, the rest does not', () => {
  const from = ruleset({
    s: decide(
      [
        ['x > 10', 'a'],
        ['x > 5', 'b'],
      ],
      'c',
    ),
    a: terminal('A'),
    b: terminal('B'),
    c: terminal('C'),
  });
  const to = ruleset({
    s: decide(
      [
        ['x > 5', 'b'],
        ['x > 10', 'a'],
      ],
      'c',
    ),
    a: terminal('A'),
    b: terminal('B'),
    c: terminal('C'),
  });
  const d = behaviouralDiff(from, to);
  assert.deepEqual(summary(from, to, d), ['A->B: x > 10']);
  assert.equal(d.exact, true);
});

test('renamed steps and reordered disjoint branches: equivalent', () => {
  const from = ruleset({
    s: decide(
      [
        ['country == "US"', 'a'],
        ['country in ["CA", "MX"]', 'b'],
      ],
      'c',
    ),
    a: terminal('A'),
    b: terminal('B'),
    c: terminal('C'),
  });
  const to = ruleset({
    start: decide(
      [
        ['country in ["CA", "MX"]', 'other'],
        ['country == "US"', 'first'],
      ],
      'rest',
    ),
    first: terminal('A'),
    other: terminal('B'),
    rest: terminal('C'),
  });
  assert.deepEqual(behaviouralDiff(from, to), { equivalent: true, exact: true, truncated: false, regions: [] });
});

test('a changed terminal code behind two conditions: the paths to it, merged', () => {
  const steps = (code: string): Steps => ({
    s: decide([['amount > 1000 && tier != "gold"', 'review']], 't'),
    t: decide([['starts_with(email, "test@")', 'review']], 'ok'),
    review: terminal(code),
    ok: terminal('OK'),
  });
  const [from, to] = [ruleset(steps('REVIEW')), ruleset(steps('DECLINE'))];
  const d = behaviouralDiff(from, to);
  assert.deepEqual(summary(from, to, d), ["REVIEW->DECLINE: (amount > 1000 AND tier != 'gold') OR (email LIKE 'test@%' ESCAPE '!')"]);
});

test('variables: a changed set_variable value moves the band it decides', () => {
  const steps = (limit: number): Steps => ({
    set: { type: 'action', actions: [{ action: 'set_variable', name: 'limit', value: String(limit) }], next_step: 'd' },
    d: decide([['amount > $limit', 'high']], 'low'),
    high: terminal('HIGH'),
    low: terminal('LOW'),
  });
  const [from, to] = [ruleset(steps(100)), ruleset(steps(200))];
  const d = behaviouralDiff(from, to);
  assert.deepEqual(summary(from, to, d), ['HIGH->LOW: (amount > 100 AND amount <= 200)']);
  assert.equal(d.exact, true);
});

test('failures are in no region (docs/decisions.md): removing a default is not a change of code', () => {
  const from = ruleset({ s: decide([['x > 5', 'a']], 'b'), a: terminal('A'), b: terminal('B') });
  const to = ruleset({ s: decide([['x > 5', 'a']]), a: terminal('A'), b: terminal('B') });
  assert.deepEqual(behaviouralDiff(from, to), { equivalent: true, exact: true, truncated: false, regions: [] });
  // A division that fails on 0 in the new version: x = 0 gives A then fails, so it is not in the A->B region.
  const divided = ruleset({ s: decide([['100 / x >= 1 || x > 5', 'a']], 'b'), a: terminal('A'), b: terminal('B') });
  const d = behaviouralDiff(from, divided);
  for (const r of d.regions) assert.ok(r.witness === null || (r.witness as { x?: unknown }).x !== 0);
  assert.equal(codeOf(divided, { x: 0 }), null);
});

test('a condition no format can write: the regions are supersets (exact false), no witness where the versions agree', () => {
  const from = ruleset({ s: decide([['a * 2 > 10', 'yes']], 'no'), yes: terminal('YES'), no: terminal('NO') });
  const to = ruleset({ s: decide([['a > 5', 'yes']], 'no'), yes: terminal('YES'), no: terminal('NO') });
  const d = behaviouralDiff(from, to);
  assert.equal(d.exact, false);
  assert.equal(d.equivalent, false);
  assert.ok(d.regions.length > 0);
  assert.ok(d.regions.every((r) => r.witness === null));
});

test('limits: max_paths and max_regions truncate (not equivalent, not exact)', () => {
  const from = ruleset({
    s: decide(
      [
        ['x > 10', 'a'],
        ['y > 10', 'a'],
      ],
      'b',
    ),
    a: terminal('A'),
    b: terminal('B'),
  });
  const to = ruleset({
    s: decide(
      [
        ['x > 10', 'b'],
        ['y > 10', 'a'],
      ],
      'a',
    ),
    a: terminal('A'),
    b: terminal('B'),
  });
  const full = behaviouralDiff(from, to);
  assert.deepEqual(
    full.regions.map((r) => `${r.from_code}->${r.to_code}`),
    ['A->B', 'B->A'],
  );
  assert.equal(full.truncated, false);
  for (const options of [{ maxPaths: 1 }, { maxRegions: 1 }, { maxPairs: 1 }]) {
    const d = behaviouralDiff(from, to, options);
    assert.deepEqual(
      { equivalent: d.equivalent, exact: d.exact, truncated: d.truncated },
      { equivalent: false, exact: false, truncated: true },
      JSON.stringify(options),
    );
  }
});

test('now(): the time comes from the option, the same for both walks and the witness runs', () => {
  const v = (day: string): CompiledRuleset =>
    ruleset({ s: decide([[`now() >= "${day}" && x > 1`, 'late']], 'early'), late: terminal('LATE'), early: terminal('EARLY') });
  const [from, to] = [v('2026-01-01T00:00:00Z'), v('2026-06-01T00:00:00Z')];
  const march = behaviouralDiff(from, to, { now: '2026-03-01T00:00:00Z' });
  assert.deepEqual(
    march.regions.map((r) => [r.from_code, r.to_code, r.sql, r.witness]),
    [['LATE', 'EARLY', 'x > 1', { x: 2 }]],
  );
  assert.equal(behaviouralDiff(from, to, { now: '2026-07-01T00:00:00Z' }).equivalent, true);
});

test('reference data: opaque by default (exact false), folded when a snapshot is given', () => {
  const v = (limit: string): CompiledRuleset => ruleset({ s: decide([[`amount > ${limit}`, 'high']], 'low'), high: terminal('HIGH'), low: terminal('LOW') });
  const [from, to] = [v('@limits.max'), v('100')];
  assert.equal(behaviouralDiff(from, to).exact, false);
  const d = behaviouralDiff(from, to, { data: new Map([['limits', { max: 50 }]]) });
  assert.deepEqual(
    d.regions.map((r) => `${r.from_code}->${r.to_code}: ${r.sql}`),
    ['HIGH->LOW: (amount > 50 AND amount <= 100)'],
  );
  assert.equal(d.exact, true);
});

test('identical long rulesets are equivalent: a contradiction behind many disjunctions is found (unit propagation)', () => {
  // Every path past stage i carries the disjunction `!(x_i > 1) || !(y_i < 2)`; the path to D at
  // the first stage carries `t > 360 || t < 6`, which the last stage's `t <= 360 && t > 240`
  // contradicts only once each part is conjoined (the literals were rewritten by the reduction).
  const steps: Steps = { first: decide([['t > 360 || t < 6', 'd']], 's0') };
  for (let i = 0; i < 16; i++) steps[`s${i}`] = decide([[`x${i} > 1 && y${i} < 2`, 'r']], i === 15 ? 'last' : `s${i + 1}`);
  steps['last'] = decide([['t > 240', 'r2']], 'ok');
  Object.assign(steps, { d: terminal('D'), r: terminal('R'), r2: terminal('R2'), ok: terminal('OK') });
  const d = behaviouralDiff(ruleset(steps), ruleset(structuredClone(steps)));
  assert.deepEqual(d, { equivalent: true, exact: true, truncated: false, regions: [] });
});

test('call steps: both versions expand the callee (the tenant resolver), and witnesses run it', () => {
  const risk = compileRuleset({
    config: { name: 'risk', entry_step: 's' },
    steps: {
      s: { type: 'decision', branches: [{ condition: 'amount > 1000', next_step: 'high' }], default_next: 'low' },
      high: { type: 'terminal', result: { code: 'HIGH' } },
      low: { type: 'terminal', result: { code: 'LOW' } },
    },
  });
  const caller = (onHigh: string) =>
    compileRuleset({
      config: { name: 'loan', entry_step: 'ask' },
      steps: {
        ask: { type: 'call', ruleset: 'risk', input: { amount: 'order.amount' }, result: 'r', next_step: 'd' },
        d: { type: 'decision', branches: [{ condition: '$r.code == "HIGH"', next_step: onHigh }], default_next: 'ok' },
        ok: { type: 'terminal', result: { code: 'OK' } },
        review: { type: 'terminal', result: { code: 'REVIEW' } },
        no: { type: 'terminal', result: { code: 'NO' } },
      },
    });
  const calls = (name: string) => (name === 'risk' ? risk : undefined);
  const d = behaviouralDiff(caller('review'), caller('no'), { calls });
  assert.equal(d.equivalent, false);
  assert.equal(d.exact, true);
  assert.deepEqual(
    d.regions.map((r) => [r.from_code, r.to_code, r.sql]),
    [['REVIEW', 'NO', 'order_amount > 1000']],
  );
  assert.ok(((d.regions[0]!.witness as { order: { amount: number } }).order.amount ?? 0) > 1000);
  // Without the resolver every path through the call ends (the engine fails there): no region.
  assert.equal(behaviouralDiff(caller('review'), caller('no')).regions.length, 0);
});

test('versions with the same steps and deciding settings are exactly equivalent, though their paths are approximate', () => {
  // A date function makes the planner's paths approximate: without the shortcut the diff of a
  // version with itself answered `exact: false`.
  const doc = (version: string, tests: unknown[]): Record<string, unknown> => ({
    config: { name: 'dated', version, entry_step: 'd', metadata: { owner: version } },
    steps: {
      d: { type: 'decision', branches: [{ condition: 'date_diff(loan.start, now(), "days") > 30', next_step: 'late' }], default_next: 'ok' },
      late: { type: 'terminal', result: { code: 'LATE' } },
      ok: { type: 'terminal', result: { code: 'OK' } },
    },
    tests,
  });
  const a = compileRuleset(doc('1.0.0', []));
  const b = compileRuleset(doc('1.1.0', [{ name: 't', input: { loan: { start: '2026-01-01' } }, expect: { code: 'LATE' } }]));
  assert.deepEqual(behaviouralDiff(a, a, { now: '2026-11-24' }), { equivalent: true, exact: true, truncated: false, regions: [] });
  assert.deepEqual(behaviouralDiff(a, b, { now: '2026-11-24' }), { equivalent: true, exact: true, truncated: false, regions: [] });
  // A deciding setting differs: the planner's answer again.
  const strict = compileRuleset({ ...doc('1.0.0', []), config: { name: 'dated', entry_step: 'd', field_missing: 'strict' } });
  assert.notDeepEqual(behaviouralDiff(a, strict, { now: '2026-11-24' }), { equivalent: true, exact: true, truncated: false, regions: [] });
});
