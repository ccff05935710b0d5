/**
 * Decision tables through the real built server over HTTP (EXTENSIONS.md 3 "Decision tables"):
 * a table is stored, executed (the trace entry carries the matched row), filtered like the
 * decision it compiles to, and a bad cell is a 400 problem at `steps.t.rows[i].when[j]`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

const RULES = {
  config: { name: 'routing', entry_step: 'rate' },
  steps: {
    rate: {
      type: 'table',
      hit_policy: 'first',
      inputs: ['user.tier'],
      rows: [
        { when: ['"gold"'], set: { limit: '1000' } },
        { when: ['-'], set: { limit: '100' } },
      ],
      next_step: 't',
    },
    t: {
      type: 'table',
      inputs: ['user.age', 'user.country', 'order.amount'],
      rows: [
        { when: ['< 18', '-', '-'], next_step: 'deny' },
        { when: ['-', 'in ["US", "CA"]', '? <= $limit'], next_step: 'ok' },
      ],
      default_next: 'review',
    },
    ok: { type: 'terminal', result: { code: 'OK' } },
    deny: { type: 'terminal', result: { code: 'DENY' } },
    review: { type: 'terminal', result: { code: 'REVIEW' } },
  },
};

let server: ServerProcess;

before(async () => {
  server = await startServer([]);
  const res = await http(server.url, 'POST', '/api/v1/rulesets', RULES);
  assert.equal(res.status, 200, JSON.stringify(res.body));
});

after(async () => {
  await server?.stop();
});

describe('decision tables over HTTP', () => {
  it('executes routing and set rows; the trace carries each table row', async () => {
    const input = { user: { age: 40, country: 'US', tier: 'gold' }, order: { amount: 500 } };
    const res = await http(server.url, 'POST', '/api/v1/execute/routing', { input, trace: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.code, 'OK');
    assert.equal(res.body.trace.path, 'rate -> t -> ok');
    assert.deepEqual(
      res.body.trace.steps.map((s: { id: string; row?: unknown }) => [s.id, s.row]),
      [
        ['rate', 0],
        ['t', 1],
        ['ok', undefined],
      ],
    );
    const silver = await http(server.url, 'POST', '/api/v1/execute/routing', { input: { ...input, user: { ...input.user, tier: 'silver' } }, trace: true });
    assert.equal(silver.body.code, 'REVIEW', 'the silver limit is 100');
    assert.deepEqual(
      silver.body.trace.steps.map((s: { row?: unknown }) => s.row),
      [1, null, undefined],
    );
  });

  it('filters a table like the decision it compiles to, with the set values substituted', async () => {
    const res = await http(server.url, 'POST', '/api/v1/rulesets/routing/filter', {
      known_input: { user: { tier: 'gold', age: 30 } },
      target_results: ['OK'],
      field_mapping: { 'user.country': 'country', 'order.amount': 'amount' },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.filter, "(country IN ('US', 'CA') AND amount <= 1000)");
    assert.equal(res.body.exact, true);
  });

  it('a bad cell is a 400 problem at its row and column; nothing is stored', async () => {
    const bad = structuredClone(RULES) as any;
    bad.config.name = 'bad';
    bad.steps.t.rows[1].when[2] = '? <= ';
    const res = await http(server.url, 'POST', '/api/v1/rulesets', bad);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'BAD_REQUEST');
    assert.equal(res.body.problems.length, 1, JSON.stringify(res.body.problems));
    assert.equal(res.body.problems[0].path, 'steps.t.rows[1].when[2]');
    assert.match(res.body.problems[0].message, /the expression of '\? <= '/);
    assert.equal((await http(server.url, 'GET', '/api/v1/rulesets/bad')).status, 404);
  });
});
