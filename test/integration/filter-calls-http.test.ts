/**
 * Filters through call steps on the real built server over HTTP (EXTENSIONS.md 3 "Calling
 * another ruleset", docs/filter-calls.md): the service expands the callee stored for the same
 * tenant, so a condition on `$risk` becomes a condition on the caller's columns; a callee's
 * update changes the caller's filter at once; a deleted callee ends the paths through the call
 * (the engine fails there with CALL_FAILED).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

const risk = (limit: number): unknown => ({
  config: { name: 'risk', entry_step: 'd' },
  steps: {
    d: { type: 'decision', branches: [{ condition: `amt > ${limit} && o.country != "US"`, next_step: 'high' }], default_next: 'low' },
    high: { type: 'terminal', result: { code: 'HIGH' }, output: { tier: 'if o.vip then "gold" else "std"' } },
    low: { type: 'terminal', result: { code: 'LOW' }, output: { tier: '"none"' } },
  },
});

const CHECKOUT = {
  config: { name: 'checkout', entry_step: 'c' },
  steps: {
    c: { type: 'call', ruleset: 'risk', input: { amt: 'order.total', o: 'customer' }, result: 'risk', next_step: 'd' },
    d: {
      type: 'decision',
      branches: [{ condition: '$risk.code == "HIGH" && $risk.output.tier == "gold"', next_step: 'review' }],
      default_next: 'ok',
    },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
    ok: { type: 'terminal', result: { code: 'OK' } },
  },
};

const FILTER = {
  known_input: {},
  target_results: ['REVIEW'],
  field_mapping: { 'order.total': 'total', 'customer.country': 'country', 'customer.vip': 'vip' },
};

let server: ServerProcess;

before(async () => {
  server = await startServer([]);
  for (const doc of [risk(1000), CHECKOUT]) {
    const res = await http(server.url, 'POST', '/api/v1/rulesets', doc);
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }
});

after(async () => {
  await server?.stop();
});

describe('filters through call steps over HTTP', () => {
  it('expands the stored callee: its conditions on the mapped input and its output become columns', async () => {
    const res = await http(server.url, 'POST', '/api/v1/rulesets/checkout/filter', FILTER);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.filter, "(total > 1000 AND country != 'US' AND vip IS TRUE)");
    assert.equal(res.body.exact, true);
    assert.deepEqual(res.body.unknown_fields, ['customer.country', 'customer.vip', 'order.total']);
    // The engine agrees on a row the filter selects.
    const run = await http(server.url, 'POST', '/api/v1/execute/checkout', { input: { order: { total: 2000 }, customer: { country: 'FR', vip: true } } });
    assert.equal(run.body.code, 'REVIEW', JSON.stringify(run.body));
  });

  it("folds the request's known input inside the callee", async () => {
    const res = await http(server.url, 'POST', '/api/v1/rulesets/checkout/filter', { ...FILTER, known_input: { customer: { country: 'US' } } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.never_matches, true);
  });

  it("a callee's update changes the caller's filter at once", async () => {
    const put = await http(server.url, 'POST', '/api/v1/rulesets', risk(50));
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const res = await http(server.url, 'POST', '/api/v1/rulesets/checkout/filter', FILTER);
    assert.equal(res.body.filter, "(total > 50 AND country != 'US' AND vip IS TRUE)");
  });

  it('a deleted callee: no row can reach a target through the call (never_matches, exact)', async () => {
    const del = await http(server.url, 'DELETE', '/api/v1/rulesets/risk');
    assert.equal(del.status, 204, JSON.stringify(del.body));
    const res = await http(server.url, 'POST', '/api/v1/rulesets/checkout/filter', FILTER);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.never_matches, true);
    assert.equal(res.body.exact, true);
    const run = await http(server.url, 'POST', '/api/v1/execute/checkout', { input: { order: { total: 2000 } } });
    assert.equal(run.status, 500, JSON.stringify(run.body));
    assert.match(JSON.stringify(run.body), /CALL_FAILED/);
  });
});
