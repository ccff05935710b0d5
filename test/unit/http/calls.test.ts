/**
 * Call steps through the HTTP adapter (EXTENSIONS.md 3 "Calling another ruleset"): execute,
 * trace and batch; a callee's update takes effect for its callers at once; a call cycle is a 400
 * problem at create and at rollback; a missing callee is 500 CALL_FAILED naming it; tests at
 * create and the test route run calls; callees resolve in the caller's tenant only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeTenancyHarness, type TenancyHarness } from '../tenancy/harness.js';
import { assertError, makeHarness, type Harness } from './harness.js';

function risk(threshold: number, version = '1.0.0'): Record<string, unknown> {
  return {
    config: { name: 'risk', version, entry_step: 'size' },
    steps: {
      size: { type: 'decision', branches: [{ condition: `amount > ${threshold}`, next_step: 'high' }], default_next: 'low' },
      high: { type: 'terminal', result: { code: 'HIGH' } },
      low: { type: 'terminal', result: { code: 'LOW' } },
    },
  };
}

function loan(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    config: { name: 'loan', entry_step: 'ask' },
    steps: {
      ask: { type: 'call', ruleset: 'risk', input: { amount: 'order.amount' }, result: 'risk', next_step: 'decide' },
      decide: { type: 'decision', branches: [{ condition: '$risk.code == "HIGH"', next_step: 'no' }], default_next: 'yes' },
      no: { type: 'terminal', result: { code: 'REJECT' } },
      yes: { type: 'terminal', result: { code: 'APPROVE' } },
    },
    ...extra,
  };
}

const EXEC = '/api/v1/execute/loan';

describe('call steps over HTTP', () => {
  let h: Harness;
  before(async () => {
    h = await makeHarness({ rulesDir: true });
  });
  after(() => h.close());

  it('a caller may be created before its callee; executing it then is 500 CALL_FAILED naming the callee', async () => {
    assert.equal((await h.request('POST', '/api/v1/rulesets', loan())).status, 200);
    const r = await h.request('POST', EXEC, { input: { order: { amount: 5 } } });
    const body = assertError(r, 500, 'CALL_FAILED', /'risk' does not exist/);
    assert.equal(body['step'], 'ask');
  });

  it('executes through the callee; the trace names its steps <callee>/<step>; batch too', async () => {
    assert.equal((await h.request('POST', '/api/v1/rulesets', risk(1000))).status, 200);
    const r = await h.request('POST', EXEC, { input: { order: { amount: 5000 } }, trace: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.code, 'REJECT');
    assert.equal(r.body.trace.path, 'ask -> risk/size -> risk/high -> decide -> no');
    const batch = await h.request('POST', '/api/v1/execute/loan/batch', { inputs: [{ order: { amount: 5000 } }, { order: { amount: 1 } }] });
    assert.deepEqual(
      batch.body.results.map((x: { code: string }) => x.code),
      ['REJECT', 'APPROVE'],
    );
  });

  it("a callee's update takes effect for its callers at once", async () => {
    assert.equal((await h.request('POST', EXEC, { input: { order: { amount: 500 } } })).body.code, 'APPROVE');
    assert.equal((await h.request('POST', '/api/v1/rulesets', risk(100, '2.0.0'))).status, 200);
    assert.equal((await h.request('POST', EXEC, { input: { order: { amount: 500 } } })).body.code, 'REJECT');
  });

  it('a call cycle is a 400 problem at the call step, and nothing is stored', async () => {
    const cyclic = risk(100, '3.0.0');
    (cyclic['steps'] as Record<string, unknown>)['size'] = { type: 'call', ruleset: 'loan', result: 'l', next_step: 'high' };
    const r = await h.request('POST', '/api/v1/rulesets', cyclic);
    const body = assertError(r, 400, 'BAD_REQUEST');
    assert.deepEqual(body['problems'], [{ path: 'steps.size.ruleset', message: "calling 'loan' makes a call cycle: risk -> loan -> risk" }]);
    assert.equal((await h.request('GET', '/api/v1/rulesets/risk')).body.config.version, '2.0.0');
    // The draft validation reports it too.
    const draft = await h.request('POST', '/api/v1/draft/validate', { ruleset: cyclic });
    assert.equal(draft.body.valid, false);
    assert.deepEqual(draft.body.problems, body['problems']);
  });

  it('tests at create run the call; a failing one is 422 and the test route runs calls too', async () => {
    const tested = loan({
      tests: [{ name: 'big', input: { order: { amount: 101 } }, expect: { code: 'REJECT', path: 'ask -> risk/size -> risk/high -> decide -> no' } }],
    });
    assert.equal((await h.request('POST', '/api/v1/rulesets', tested)).status, 200);
    const run = await h.request('POST', '/api/v1/rulesets/loan/test', {});
    assert.equal(run.body.passed, 1, JSON.stringify(run.body));
    const wrong = loan({ tests: [{ name: 'big', input: { order: { amount: 101 } }, expect: { code: 'APPROVE' } }] });
    assertError(await h.request('POST', '/api/v1/rulesets', wrong), 422, 'TESTS_FAILED');
  });

  it('deleting the callee makes callers fail with CALL_FAILED; draft execute resolves calls like the stored one', async () => {
    const draft = await h.request('POST', '/api/v1/draft/execute', { ruleset: loan(), input: { order: { amount: 101 } } });
    assert.equal(draft.body.code, 'REJECT');
    assert.equal((await h.request('DELETE', '/api/v1/rulesets/risk')).status, 204);
    assertError(await h.request('POST', EXEC, { input: { order: { amount: 5 } } }), 500, 'CALL_FAILED');
  });
});

describe('call steps and tenants', () => {
  let t: TenancyHarness;
  before(async () => {
    t = await makeTenancyHarness();
    for (const id of ['alpha', 'beta']) assert.equal((await t.request('POST', '/api/v1/tenants', { id })).status, 201);
  });
  after(() => t.close());

  it("callees resolve in the caller's tenant only", async () => {
    assert.equal((await t.request('POST', '/api/v1/rulesets', loan(), 'alpha')).status, 200);
    assert.equal((await t.request('POST', '/api/v1/rulesets', risk(10), 'beta')).status, 200);
    const missing = await t.request('POST', EXEC, { input: { order: { amount: 50 } } }, 'alpha');
    assert.equal(missing.status, 500);
    assert.equal(missing.body.code, 'CALL_FAILED');
    assert.equal((await t.request('POST', '/api/v1/rulesets', risk(100), 'alpha')).status, 200);
    assert.equal((await t.request('POST', EXEC, { input: { order: { amount: 50 } } }, 'alpha')).body.code, 'APPROVE');
  });
});
