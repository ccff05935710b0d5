/** HTTP routes: POST /eval (DECISIONS.md 2) and POST /rulesets/:name/filter (SPEC.md "POST /rulesets/:name/filter"). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ageRules, assertError, makeHarness, type Harness } from './harness.js';

describe('POST /eval', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
  });
  after(() => h.close());

  it('answers {result, parsed} with the fully parenthesised prefix rendering', async () => {
    const r = await h.request('POST', '/api/v1/eval', {
      expression: 'user.age >= 18 && user.country in ["US", "CA"]',
      context: { user: { age: 20, country: 'CA' } },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { result: true, parsed: '(&& (>= user.age 18) (in user.country ["US", "CA"]))' });
  });

  it('results can be any JSON value', async () => {
    const cases: Array<[string, unknown]> = [
      ['1 + 2 * 3', 7],
      ['upper("ab")', 'AB'],
      ['[1, "x", null]', [1, 'x', null]],
      ['x', { deep: [1] }],
      ['null', null],
    ];
    for (const [expression, result] of cases) {
      const r = await h.request('POST', '/api/v1/eval', { expression, context: { x: { deep: [1] } } });
      assert.equal(r.status, 200, `${expression}: ${r.text}`);
      assert.deepEqual(r.body.result, result, expression);
      assert.equal(typeof r.body.parsed, 'string');
    }
  });

  it('a missing (or null) context means {}', async () => {
    const missing = await h.request('POST', '/api/v1/eval', { expression: 'is_null(a.b) && !exists(a)' });
    assert.equal(missing.status, 200, missing.text);
    assert.deepEqual(missing.body, { result: true, parsed: '(&& is_null(a.b) (! exists(a)))' });
    const nul = await h.request('POST', '/api/v1/eval', { expression: 'coalesce(a, 5)', context: null });
    assert.equal(nul.status, 200);
    assert.equal(nul.body.result, 5);
  });

  it('a parse error is 400 with the position', async () => {
    const body = assertError(await h.request('POST', '/api/v1/eval', { expression: '(a > 1', context: {} }), 400, 'BAD_REQUEST', /parse error/);
    assert.equal(body['position'], 6);
    const unknownFn = assertError(await h.request('POST', '/api/v1/eval', { expression: 'x + nofn(1)', context: {} }), 400, 'BAD_REQUEST', /nofn/);
    assert.equal(unknownFn['position'], 4);
  });

  it('a runtime error is 400 saying what failed', async () => {
    assertError(await h.request('POST', '/api/v1/eval', { expression: '"a" * 2', context: {} }), 400, 'BAD_REQUEST', /multiply/);
    assertError(await h.request('POST', '/api/v1/eval', { expression: '1 / 0', context: {} }), 400, 'BAD_REQUEST', /division by zero/);
  });

  it('wrong types are 400', async () => {
    assertError(await h.request('POST', '/api/v1/eval', { expression: 5 }), 400, 'BAD_REQUEST', /expression must be a string/);
    assertError(await h.request('POST', '/api/v1/eval', {}), 400, 'BAD_REQUEST', /expression/);
    assertError(await h.request('POST', '/api/v1/eval', { expression: 'a', context: [1] }), 400, 'BAD_REQUEST', /context/);
    assertError(await h.request('POST', '/api/v1/eval', { expression: 'a', context: 'x' }), 400, 'BAD_REQUEST', /context/);
    assertError(await h.request('POST', '/api/v1/eval', ['a']), 400, 'BAD_REQUEST');
  });

  it('an expression over 4096 characters is a 400 parse error', async () => {
    const expression = Array.from({ length: 1400 }, () => '1').join(' + ');
    assert.ok(expression.length > 4096);
    assertError(await h.request('POST', '/api/v1/eval', { expression, context: {} }), 400, 'BAD_REQUEST');
  });
});

describe('POST /rulesets/:name/filter', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness();
    await h.request('POST', '/api/v1/rulesets', ageRules('age'));
    await h.request('POST', '/api/v1/rulesets', {
      config: { name: 'arith', entry_step: 'check' },
      steps: {
        check: { type: 'decision', branches: [{ condition: 'price * 2 > 10', next_step: 'yes' }], default_next: 'no' },
        yes: { type: 'terminal', result: { code: 'YES' } },
        no: { type: 'terminal', result: { code: 'NO' } },
      },
    });
  });
  after(() => h.close());

  it('sql (default): the residual condition, with the mapped column', async () => {
    const r = await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: {}, target_results: ['ADULT'] });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, {
      format: 'sql',
      filter: 'user_age >= 18',
      always_matches: false,
      never_matches: false,
      truncated: false,
      unknown_fields: ['user.age'],
      exact: true,
    });
    const mapped = await h.request('POST', '/api/v1/rulesets/age/filter', {
      known_input: {},
      target_results: ['MINOR'],
      field_mapping: { 'user.age': 'age_years' },
    });
    assert.equal(mapped.body.filter, 'age_years < 18');
  });

  it('json and mongo formats', async () => {
    const json = await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: {}, target_results: ['ADULT'], format: 'json' });
    assert.deepEqual(json.body.filter, { type: 'ge', field: 'user_age', value: 18 });
    const mongo = await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: {}, target_results: ['ADULT'], format: 'mongo' });
    assert.deepEqual(mongo.body.filter, { user_age: { $gte: 18 } });
    assert.equal(mongo.body.format, 'mongo');
  });

  it('known input resolves to always_matches / never_matches', async () => {
    const always = await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: { user: { age: 30 } }, target_results: ['ADULT'] });
    assert.equal(always.body.always_matches, true);
    assert.equal(always.body.filter, 'TRUE');
    const never = await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: { user: { age: 3 } }, target_results: ['ADULT'] });
    assert.equal(never.body.never_matches, true);
    assert.equal(never.body.filter, null);
  });

  it('empty target_results is 400; missing known_input is 400; bad format is 400', async () => {
    assertError(await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: {}, target_results: [] }), 400, 'BAD_REQUEST', /target_results/);
    assertError(await h.request('POST', '/api/v1/rulesets/age/filter', { target_results: ['ADULT'] }), 400, 'BAD_REQUEST', /known_input/);
    assertError(
      await h.request('POST', '/api/v1/rulesets/age/filter', { known_input: {}, target_results: ['A'], format: 'xml' }),
      400,
      'BAD_REQUEST',
      /format/,
    );
    assertError(await h.request('POST', '/api/v1/rulesets/age/filter', [1]), 400, 'BAD_REQUEST');
  });

  it('unknown ruleset is 404', async () => {
    assertError(await h.request('POST', '/api/v1/rulesets/nope/filter', { known_input: {}, target_results: ['A'] }), 404, 'NOT_FOUND');
  });

  it('arithmetic in sql mode is 500 INTERNAL_ERROR', async () => {
    assertError(await h.request('POST', '/api/v1/rulesets/arith/filter', { known_input: {}, target_results: ['YES'] }), 500, 'INTERNAL_ERROR');
  });
});
