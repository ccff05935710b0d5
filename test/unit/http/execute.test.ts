/** HTTP routes: POST /execute/:name and POST /execute/:name/batch (SPEC.md, DECISIONS.md 1 and 3). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ageRules, assertError, makeHarness, type Harness } from './harness.js';

/** A ruleset whose condition multiplies a string (type error at run time: 500). */
const typeErrorRules = {
  config: { name: 'typeerr', entry_step: 'check' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.name * 2 > 1', next_step: 'end' }], default_next: 'end' },
    end: { type: 'terminal', result: { code: 'END' } },
  },
};

/** No branch holds and there is no default_next: 500 naming the step. */
const deadEndRules = {
  config: { name: 'deadend', entry_step: 'pick' },
  steps: {
    pick: { type: 'decision', branches: [{ condition: 'x == 1', next_step: 'one' }] },
    one: { type: 'terminal', result: { code: 'ONE' } },
  },
};

/** field_missing strict: reading an absent path is a 500 naming the path. */
const strictRules = {
  config: { name: 'strict', entry_step: 'check', field_missing: 'strict' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'adult' }], default_next: 'minor' },
    adult: { type: 'terminal', result: { code: 'ADULT' }, output: { zip: 'user.address.zip' } },
    minor: { type: 'terminal', result: { code: 'MINOR' } },
  },
};

/** A cycle that never ends, with its own short timeout. */
function spinRules(name: string, timeoutMs: number): Record<string, unknown> {
  return {
    config: { name, entry_step: 'a', timeout_ms: timeoutMs },
    steps: {
      a: { type: 'decision', branches: [{ condition: 'true', next_step: 'b' }] },
      b: { type: 'action', actions: [{ action: 'set_variable', name: 'n', value: '1 + 1' }], next_step: 'a' },
    },
  };
}

/** Action + output expressions, to see output merging. */
const actionRules = {
  config: { name: 'pricing', entry_step: 'calc' },
  steps: {
    calc: { type: 'action', actions: [{ action: 'set_variable', name: 'total', value: 'price * qty' }], next_step: 'done' },
    done: { type: 'terminal', result: { code: 'PRICED', message: 'ok', currency: 'EUR' }, output: { total: '$total' } },
  },
};

describe('execute routes', () => {
  let h: Harness;
  before(async () => {
    // NOTE: max steps is huge so that only the per-ruleset timeout can end the spin rule.
    h = await makeHarness({ maxSteps: 1_000_000_000, maxBatchSize: 5 });
    for (const doc of [ageRules('age'), typeErrorRules, deadEndRules, strictRules, spinRules('spin', 20), actionRules]) {
      const r = await h.request('POST', '/api/v1/rulesets', doc);
      assert.equal(r.status, 200, r.text);
    }
  });
  after(() => h.close());

  it('executes: {code, message, output, duration_us}, no trace unless asked', async () => {
    const r = await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 30 } } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['code', 'duration_us', 'message', 'output']);
    assert.equal(r.body.code, 'ADULT');
    assert.equal(r.body.message, 'grown up');
    assert.deepEqual(r.body.output, { tier: 'full' });
    assert.ok(Number.isInteger(r.body.duration_us) && r.body.duration_us >= 0);
    const minor = await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 3 } }, trace: false });
    assert.equal(minor.body.code, 'MINOR');
    assert.deepEqual(minor.body.output, {});
    assert.equal('trace' in minor.body, false);
  });

  it('trace: true adds {path, steps[{id, name, duration_us}]} in visit order', async () => {
    const r = await h.request('POST', '/api/v1/execute/age', { input: { user: { age: 30 } }, trace: true });
    assert.equal(r.status, 200);
    assert.equal(r.body.trace.path, 'check -> adult');
    assert.deepEqual(
      r.body.trace.steps.map((s: { id: string; name: string }) => [s.id, s.name]),
      [
        ['check', 'Check age'],
        ['adult', 'adult'],
      ],
    );
    for (const s of r.body.trace.steps) assert.ok(Number.isInteger(s.duration_us) && s.duration_us >= 0);
  });

  it('action variables and step output expressions reach the output', async () => {
    const r = await h.request('POST', '/api/v1/execute/pricing', { input: { price: 2.5, qty: 4 } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.output, { currency: 'EUR', total: 10 });
  });

  it('unknown ruleset is 404 NOT_FOUND', async () => {
    assertError(await h.request('POST', '/api/v1/execute/nope', { input: {} }), 404, 'NOT_FOUND', /nope/);
  });

  it('missing input, non-object input, non-boolean trace are 400', async () => {
    assertError(await h.request('POST', '/api/v1/execute/age', {}), 400, 'BAD_REQUEST', /input/);
    assertError(await h.request('POST', '/api/v1/execute/age', { input: [1] }), 400, 'BAD_REQUEST', /input/);
    assertError(await h.request('POST', '/api/v1/execute/age', { input: 'x' }), 400, 'BAD_REQUEST', /input/);
    assertError(await h.request('POST', '/api/v1/execute/age', { input: null }), 400, 'BAD_REQUEST', /input/);
    assertError(await h.request('POST', '/api/v1/execute/age', { input: {}, trace: 'yes' }), 400, 'BAD_REQUEST', /trace/);
    assertError(await h.request('POST', '/api/v1/execute/age', [{ input: {} }]), 400, 'BAD_REQUEST');
  });

  it('a type error during execution is 500 INTERNAL_ERROR saying what failed', async () => {
    assertError(await h.request('POST', '/api/v1/execute/typeerr', { input: { user: { name: 'bob' } } }), 500, 'INTERNAL_ERROR', /\*|number|type/i);
  });

  it('no branch true and no default_next is 500 naming the step', async () => {
    assertError(await h.request('POST', '/api/v1/execute/deadend', { input: { x: 2 } }), 500, 'INTERNAL_ERROR', /pick/);
  });

  it('strict field_missing: an absent path is 500 naming the path; present paths run', async () => {
    assertError(await h.request('POST', '/api/v1/execute/strict', { input: { user: {} } }), 500, 'INTERNAL_ERROR', /user\.age/);
    assertError(await h.request('POST', '/api/v1/execute/strict', { input: { user: { age: 20 } } }), 500, 'INTERNAL_ERROR', /user\.address\.zip/);
    const ok = await h.request('POST', '/api/v1/execute/strict', { input: { user: { age: 20, address: { zip: '1000' } } } });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.body.output, { zip: '1000' });
  });

  it('a runaway cycle past the per-ruleset timeout_ms is 500 TIMEOUT with timeout_ms', async () => {
    const r = await h.request('POST', '/api/v1/execute/spin', { input: {} });
    const body = assertError(r, 500, 'TIMEOUT');
    assert.deepEqual(body, { error: 'execution timed out after 20 ms', code: 'TIMEOUT', timeout_ms: 20 });
  });

  it('the step limit ends a runaway cycle with a 500', async () => {
    const small = await makeHarness({ maxSteps: 50, executionTimeoutMs: 0 });
    try {
      assert.equal((await small.request('POST', '/api/v1/rulesets', spinRules('spin', 0))).status, 200);
      assertError(await small.request('POST', '/api/v1/execute/spin', { input: {} }), 500, 'INTERNAL_ERROR', /step limit of 50/);
    } finally {
      await small.close();
    }
  });

  describe('batch', () => {
    it('results in input order, a failed item {error, code} in place, summary', async () => {
      const r = await h.request('POST', '/api/v1/execute/age/batch', {
        inputs: [{ user: { age: 40 } }, 'not an object', { user: { age: 1 } }],
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.results.length, 3);
      assert.equal(r.body.results[0].code, 'ADULT');
      assert.deepEqual(Object.keys(r.body.results[1]).sort(), ['code', 'error']);
      assert.equal(r.body.results[1].code, 'BAD_REQUEST');
      assert.match(r.body.results[1].error, /inputs\[1\]/);
      assert.equal(r.body.results[2].code, 'MINOR');
      assert.equal('trace' in r.body.results[0], false);
      const { summary } = r.body;
      assert.deepEqual(Object.keys(summary).sort(), ['failed', 'success', 'total', 'total_duration_us']);
      assert.equal(summary.total, 3);
      assert.equal(summary.success, 2);
      assert.equal(summary.failed, 1);
      assert.ok(Number.isInteger(summary.total_duration_us) && summary.total_duration_us >= 0);
    });

    it('execution errors stay in place with their code (INTERNAL_ERROR, TIMEOUT)', async () => {
      const r = await h.request('POST', '/api/v1/execute/strict/batch', { inputs: [{ user: {} }, { user: { age: 1 } }] });
      assert.equal(r.status, 200);
      assert.equal(r.body.results[0].code, 'INTERNAL_ERROR');
      assert.match(r.body.results[0].error, /user\.age/);
      assert.equal(r.body.results[1].code, 'MINOR');
      const t = await h.request('POST', '/api/v1/execute/spin/batch', { inputs: [{}] });
      assert.equal(t.status, 200);
      assert.equal(t.body.results[0].code, 'TIMEOUT');
      assert.deepEqual(t.body.summary.failed, 1);
    });

    it('trace: true traces every item', async () => {
      const r = await h.request('POST', '/api/v1/execute/age/batch', { inputs: [{ user: { age: 40 } }, { user: { age: 2 } }], trace: true });
      assert.equal(r.body.results[0].trace.path, 'check -> adult');
      assert.equal(r.body.results[1].trace.path, 'check -> minor');
    });

    it('empty inputs, missing inputs, non-array inputs are 400', async () => {
      assertError(await h.request('POST', '/api/v1/execute/age/batch', { inputs: [] }), 400, 'BAD_REQUEST', /empty/);
      assertError(await h.request('POST', '/api/v1/execute/age/batch', {}), 400, 'BAD_REQUEST', /inputs/);
      assertError(await h.request('POST', '/api/v1/execute/age/batch', { inputs: {} }), 400, 'BAD_REQUEST', /inputs/);
    });

    it('more inputs than --max-batch-size is 400; exactly the limit runs', async () => {
      const inputs = (n: number) => Array.from({ length: n }, (_, i) => ({ user: { age: i * 10 } }));
      assertError(await h.request('POST', '/api/v1/execute/age/batch', { inputs: inputs(6) }), 400, 'BAD_REQUEST', /limit is 5/);
      const r = await h.request('POST', '/api/v1/execute/age/batch', { inputs: inputs(5) });
      assert.equal(r.status, 200);
      assert.deepEqual(
        r.body.results.map((x: { code: string }) => x.code),
        ['MINOR', 'MINOR', 'ADULT', 'ADULT', 'ADULT'],
      );
    });

    it('unknown ruleset is 404', async () => {
      assertError(await h.request('POST', '/api/v1/execute/nope/batch', { inputs: [{}] }), 404, 'NOT_FOUND');
    });
  });
});
