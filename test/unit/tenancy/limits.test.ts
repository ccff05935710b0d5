/**
 * Per-tenant limits through the façade and the HTTP adapter, in process, on a manual clock:
 * `qps_limit`/`burst` (429 RATE_LIMITED on execute, batch per input, eval, filter),
 * `max_rulesets` (400 on one more, updates allowed) and `execution_timeout_ms`
 * (ruleset > tenant > server).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { codeRules, loopRules, makeTenancyHarness, type TenancyHarness } from './harness.js';

describe('rate limit (qps_limit, burst) on a manual clock', () => {
  let h: TenancyHarness;
  before(async () => {
    h = await makeTenancyHarness();
    await h.request('POST', '/api/v1/tenants', { id: 'slow', qps_limit: 1, burst: 3 });
    await h.request('POST', '/api/v1/tenants', { id: 'free' });
    for (const t of ['slow', 'free']) await h.request('POST', '/api/v1/rulesets', codeRules('r', 'OK'), t);
  });
  after(() => h.close());

  test('burst executions pass, the next is 429 RATE_LIMITED; one second later one more passes', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'slow')).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    const limited = await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'slow');
    assert.equal(limited.body.code, 'RATE_LIMITED');
    assert.match(limited.body.error, /tenant 'slow' exceeded its rate limit \(1 requests\/s, burst 3\)/);
    assert.equal(limited.body.retry_after_ms, 1000);
    h.advance(1000);
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'slow')).status, 200);
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'slow')).status, 429);
  });

  test('eval and filter count too; reads and management do not; other tenants are not affected', async () => {
    h.advance(10_000); // full again: 3 tokens
    assert.equal((await h.request('POST', '/api/v1/eval', { expression: '1', context: {} }, 'slow')).status, 200);
    assert.equal((await h.request('POST', '/api/v1/rulesets/r/filter', { known_input: {}, target_results: ['OK'] }, 'slow')).status, 200);
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'slow')).status, 200);
    assert.equal((await h.request('POST', '/api/v1/eval', { expression: '1', context: {} }, 'slow')).status, 429);
    assert.equal((await h.request('POST', '/api/v1/rulesets/r/filter', { known_input: {}, target_results: ['OK'] }, 'slow')).status, 429);
    assert.equal((await h.request('GET', '/api/v1/rulesets/r', undefined, 'slow')).status, 200);
    assert.equal((await h.request('GET', '/api/v1/rulesets', undefined, 'slow')).status, 200);
    for (let i = 0; i < 20; i++) assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'free')).status, 200);
  });

  test('a batch costs one token per input: all or nothing; larger than the burst says to split it', async () => {
    h.advance(10_000);
    const three = await h.request('POST', '/api/v1/execute/r/batch', { inputs: [{ x: 1 }, { x: 2 }, { x: 3 }] }, 'slow');
    assert.equal(three.status, 200);
    assert.equal(three.body.summary.success, 3);
    assert.equal((await h.request('POST', '/api/v1/execute/r/batch', { inputs: [{ x: 1 }] }, 'slow')).status, 429);
    h.advance(10_000);
    const four = await h.request('POST', '/api/v1/execute/r/batch', { inputs: [{}, {}, {}, {}] }, 'slow');
    assert.equal(four.status, 429);
    assert.match(four.body.error, /a batch of 4 inputs is larger than tenant 'slow' burst/);
    assert.equal(four.body.retry_after_ms, null);
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'slow')).status, 200, 'the refused batch took nothing');
  });

  test('a limit set later by PUT applies at once; removing it lifts it', async () => {
    await h.request('PUT', '/api/v1/tenants/free', { qps_limit: 1 });
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'free')).status, 200);
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'free')).status, 429);
    await h.request('PUT', '/api/v1/tenants/free', {});
    assert.equal((await h.request('POST', '/api/v1/execute/r', { input: { x: 1 } }, 'free')).status, 200);
  });
});

describe('max_rulesets', () => {
  test('creating one more is 400 with a clear message; updating an existing one is allowed', async () => {
    const h = await makeTenancyHarness();
    try {
      await h.request('POST', '/api/v1/tenants', { id: 'small', max_rulesets: 2 });
      assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('a', 'A'), 'small')).status, 200);
      assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('b', 'B'), 'small')).status, 200);
      const third = await h.request('POST', '/api/v1/rulesets', codeRules('c', 'C'), 'small');
      assert.equal(third.status, 400);
      assert.equal(third.body.code, 'BAD_REQUEST');
      assert.equal(third.body.error, "tenant 'small' already holds 2 rulesets, its max_rulesets limit is 2: delete a ruleset or raise the limit");
      assert.equal(third.body.max_rulesets, 2);
      assert.equal((await h.request('GET', '/api/v1/rulesets/c', undefined, 'small')).status, 404);
      const update = await h.request('POST', '/api/v1/rulesets', codeRules('b', 'B2', '2.0.0'), 'small');
      assert.equal(update.status, 200);
      assert.equal(update.body.status, 'updated');
      // Another tenant and default are not limited by it.
      for (const name of ['a', 'b', 'c']) assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules(name, 'D'))).status, 200);
      await h.request('DELETE', '/api/v1/rulesets/a', undefined, 'small');
      assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('c', 'C'), 'small')).status, 200);
      await h.request('PUT', '/api/v1/tenants/small', { max_rulesets: 0 });
      assert.equal((await h.request('POST', '/api/v1/rulesets', codeRules('d', 'D'), 'small')).status, 400);
    } finally {
      await h.close();
    }
  });
});

describe('max_rulesets under concurrent creates', () => {
  // The limit is checked under the store's write lock: creates in flight together cannot pass
  // the check each on the same count and overshoot the limit (memory store and file store).
  for (const rulesDir of [false, true]) {
    test(`${rulesDir ? 'file' : 'memory'} store: 6 concurrent creates with max_rulesets 2 store exactly 2`, async () => {
      const h = await makeTenancyHarness(rulesDir ? { rulesDir: true } : {});
      try {
        await h.request('POST', '/api/v1/tenants', { id: 'small', max_rulesets: 2 });
        const names = ['a', 'b', 'c', 'd', 'e', 'f'];
        const answers = await Promise.all(names.map((n) => h.request('POST', '/api/v1/rulesets', codeRules(n, 'X'), 'small')));
        const created = answers.filter((a) => a.status === 200);
        const refused = answers.filter((a) => a.status === 400);
        assert.equal(created.length, 2, JSON.stringify(answers.map((a) => a.status)));
        assert.equal(refused.length, 4);
        for (const r of refused)
          assert.equal(r.body.error, "tenant 'small' already holds 2 rulesets, its max_rulesets limit is 2: delete a ruleset or raise the limit");
        const listed = await h.request('GET', '/api/v1/rulesets', undefined, 'small');
        assert.equal(listed.body.length, 2);
        // Concurrent writes of one existing name are updates: never refused by the limit.
        const stored = listed.body.map((r: { name: string }) => r.name) as string[];
        const updates = await Promise.all(
          stored.flatMap((n) => [1, 2, 3].map((v) => h.request('POST', '/api/v1/rulesets', codeRules(n, 'Y', `${v}.0.0`), 'small'))),
        );
        assert.deepEqual(
          updates.map((u) => u.status),
          [200, 200, 200, 200, 200, 200],
        );
      } finally {
        await h.close();
      }
    });
  }
});

describe('a ruleset create racing its tenant delete', () => {
  // The delete's "owns no rulesets" check and the create's "tenant exists" check run under the
  // store's write lock: one of the two wins whole, and no ruleset outlives its tenant.
  for (const rulesDir of [false, true]) {
    test(`${rulesDir ? 'file' : 'memory'} store: either the create wins (delete 409) or the delete wins (create 404), 20 times`, async () => {
      const h = await makeTenancyHarness(rulesDir ? { rulesDir: true } : {});
      try {
        for (let i = 0; i < 20; i++) {
          const id = `t${i}`;
          assert.equal((await h.request('POST', '/api/v1/tenants', { id })).status, 201);
          const [put, del] = await Promise.all([h.request('POST', '/api/v1/rulesets', codeRules('r', 'X'), id), h.request('DELETE', `/api/v1/tenants/${id}`)]);
          const outcome = `${put.status}/${del.status}`;
          assert.ok(outcome === '200/409' || outcome === '404/204', `create/delete answered ${outcome}`);
          const tenantExists = (await h.request('GET', `/api/v1/tenants/${id}`)).status === 200;
          const held = h.store.list(id).length;
          assert.equal(tenantExists, outcome === '200/409');
          assert.equal(held, tenantExists ? 1 : 0, `${held} rulesets stored for ${tenantExists ? 'a live' : 'a deleted'} tenant`);
          if (h.rulesDir !== null) assert.equal(existsSync(join(h.rulesDir, 'tenants', id, 'r.json')), tenantExists);
        }
      } finally {
        await h.close();
      }
    });
  }
});

describe('execution timeout: ruleset > tenant > server', () => {
  let h: TenancyHarness;
  before(async () => {
    // Every clock read moves 1 ms: the engine checks the timeout every 16 steps, so a looping
    // ruleset times out at a deterministic step and reports the timeout that applied.
    h = await makeTenancyHarness({ executionTimeoutMs: 40, maxSteps: 1_000_000 });
    await h.request('POST', '/api/v1/tenants', { id: 'quick', execution_timeout_ms: 7 });
    await h.request('POST', '/api/v1/tenants', { id: 'unbounded', execution_timeout_ms: 0 });
    for (const t of ['quick', 'unbounded', 'default']) {
      await h.request('POST', '/api/v1/rulesets', loopRules('loop'), t);
      await h.request('POST', '/api/v1/rulesets', loopRules('own', { timeout_ms: 3 }), t);
    }
    h.setTick(1);
  });
  after(() => h.close());

  const run = async (tenant: string, name: string) => (await h.request('POST', `/api/v1/execute/${name}`, { input: {} }, tenant)).body;

  test('a tenant timeout replaces the server default', async () => {
    const body = await run('quick', 'loop');
    assert.equal(body.code, 'TIMEOUT');
    assert.equal(body.timeout_ms, 7);
    assert.equal(body.error, 'execution timed out after 7 ms');
  });

  test('the default tenant (no tenant timeout) keeps the server default', async () => {
    assert.equal((await run('default', 'loop')).timeout_ms, 40);
  });

  test('a ruleset timeout_ms wins over the tenant', async () => {
    assert.equal((await run('quick', 'own')).timeout_ms, 3);
    assert.equal((await run('unbounded', 'own')).timeout_ms, 3);
  });

  test('a tenant timeout of 0 disables it (the step limit ends the loop instead)', async () => {
    const body = await run('unbounded', 'loop');
    assert.equal(body.code, 'INTERNAL_ERROR');
    assert.match(body.error, /step limit of 1000000 exceeded/);
  });
});
