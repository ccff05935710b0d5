/**
 * `config.input_schema` (EXTENSIONS.md 2 "Input schema") through the real built server, over
 * HTTP (the hot dispatcher and fastify) and gRPC: a create with a path not in the schema is 400
 * with the problem at the expression, INPUT_INVALID (400 / INVALID_ARGUMENT) with every problem
 * on execute, a batch item carrying it in place, a filter's `known_input` checked only for the
 * fields given, `input_validation: "off"`, and `GET /api/v1/rulesets/:name/schema` (the
 * schema, or the inferred one).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, Status, type TestClient } from '../helpers/grpc-client.js';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

const SCHEMA = {
  type: 'object',
  properties: {
    user: { type: 'object', properties: { age: { type: 'integer', minimum: 0 }, country: { type: 'string' } }, required: ['age'] },
    order: { type: 'object', properties: { amount: { type: 'number' } } },
  },
  required: ['user'],
};

function gate(name: string, config: Record<string, unknown> = {}, condition = 'user.age >= 18'): Record<string, unknown> {
  return {
    config: { name, entry_step: 'check', ...config },
    steps: {
      check: { type: 'decision', branches: [{ condition, next_step: 'ok' }], default_next: 'no' },
      ok: { type: 'terminal', result: { code: 'ADULT' } },
      no: { type: 'terminal', result: { code: 'MINOR' } },
    },
  };
}

const BAD_INPUT = { user: { age: 'ten', country: 7 } };
const BAD_PROBLEMS = [
  { path: 'user.age', message: 'must be integer' },
  { path: 'user.country', message: 'must be string' },
];

let server: ServerProcess;
let client: TestClient;

before(async () => {
  server = await startServer([]);
  for (const doc of [
    gate('typed', { input_schema: SCHEMA }),
    gate('typed-off', { input_schema: SCHEMA, input_validation: 'off' }),
    gate('untyped', {}, 'user.age >= 18 && user.country in ["US", "CA"] && order.amount > 0'),
    gate('tiered', {
      input_schema: { type: 'object', properties: { user: { type: 'object', properties: { age: { type: 'integer' }, tier: { const: { level: 1 } } } } } },
    }),
  ]) {
    const res = await http(server.url, 'POST', '/api/v1/rulesets', doc);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['name', 'status'], 'a clean create answer stays {status, name}');
  }
  client = connect(server.grpcAddress);
});

after(async () => {
  client?.close();
  await server?.stop();
});

describe('input_schema over HTTP', () => {
  it('create: a path not in the schema is 400 with the problem at the expression and the nearest path', async () => {
    const res = await http(server.url, 'POST', '/api/v1/rulesets', gate('typo', { input_schema: SCHEMA }, 'usr.age >= 18'));
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    assert.deepEqual(res.body.problems, [
      { path: 'steps.check.branches[0].condition', message: "field 'usr.age' is not in input_schema (did you mean 'user.age'?)" },
    ]);
    assert.equal((await http(server.url, 'GET', '/api/v1/rulesets/typo')).status, 404, 'nothing stored');
  });

  it('create: an invalid schema and a literal of another type are 400 problems', async () => {
    const bad = await http(server.url, 'POST', '/api/v1/rulesets', gate('bad-schema', { input_schema: { type: 'objet' } }));
    assert.equal(bad.status, 400);
    assert.equal(bad.body.problems[0].path, 'config.input_schema');
    assert.match(bad.body.problems[0].message, /^invalid JSON Schema: /);
    const mismatch = await http(server.url, 'POST', '/api/v1/rulesets', gate('mismatch', { input_schema: SCHEMA }, 'user.age >= "18"'));
    assert.equal(mismatch.status, 400);
    assert.deepEqual(mismatch.body.problems, [
      { path: 'steps.check.branches[0].condition', message: `field 'user.age' is integer in input_schema but is compared with "18" (a string)` },
    ]);
  });

  it('execute: a valid input runs; an invalid one is 400 INPUT_INVALID listing every problem (hot path and fastify alike)', async () => {
    const ok = await http(server.url, 'POST', '/api/v1/execute/typed', { input: { user: { age: 30 } } });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.code, 'ADULT');
    for (const path of ['/api/v1/execute/typed', '/api/v1/execute/typed?via=fastify']) {
      const res = await http(server.url, 'POST', path, { input: BAD_INPUT });
      assert.equal(res.status, 400, path);
      assert.equal(res.body.code, 'INPUT_INVALID');
      assert.deepEqual(res.body.problems, BAD_PROBLEMS);
      assert.equal(res.body.error, 'input does not match config.input_schema: user.age: must be integer; user.country: must be string');
    }
    const missing = await http(server.url, 'POST', '/api/v1/execute/typed', { input: {} });
    assert.deepEqual(missing.body.problems, [{ path: 'user', message: 'is required' }]);
  });

  it('execute: an input object with an own toString key against an object const is 400 INPUT_INVALID, not a crash', async () => {
    for (const path of ['/api/v1/execute/tiered', '/api/v1/execute/tiered?via=fastify']) {
      const res = await http(server.url, 'POST', path, { input: { user: { age: 30, tier: { toString: 1 } } } });
      assert.equal(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'INPUT_INVALID');
      assert.deepEqual(res.body.problems, [{ path: 'user.tier', message: 'must be {"level":1}' }]);
    }
    const ok = await http(server.url, 'POST', '/api/v1/execute/tiered', { input: { user: { age: 30, tier: { level: 1 } } } });
    assert.equal(ok.body.code, 'ADULT');
  });

  it('execute: input_validation off, or no schema, runs the input as before', async () => {
    const off = await http(server.url, 'POST', '/api/v1/execute/typed-off', { input: { user: { age: 30, country: 7 } } });
    assert.equal(off.status, 200);
    assert.equal(off.body.code, 'ADULT');
    const untyped = await http(server.url, 'POST', '/api/v1/execute/untyped', { input: BAD_INPUT });
    assert.equal(untyped.status, 200);
  });

  it('batch: an invalid input is an INPUT_INVALID item in place with its problems; the others run', async () => {
    const res = await http(server.url, 'POST', '/api/v1/execute/typed/batch', { inputs: [{ user: { age: 30 } }, BAD_INPUT, { user: { age: 3 } }] });
    assert.equal(res.status, 200);
    assert.equal(res.body.results[0].code, 'ADULT');
    assert.deepEqual(res.body.results[1], {
      error: 'input does not match config.input_schema: user.age: must be integer; user.country: must be string',
      code: 'INPUT_INVALID',
      problems: BAD_PROBLEMS,
    });
    assert.equal(res.body.results[2].code, 'MINOR');
    assert.deepEqual({ ...res.body.summary, total_duration_us: 0 }, { total: 3, success: 2, failed: 1, total_duration_us: 0 });
  });

  it('filter: known_input is validated for the fields given only', async () => {
    const partial = await http(server.url, 'POST', '/api/v1/rulesets/typed/filter', { known_input: { user: {} }, target_results: ['ADULT'] });
    assert.equal(partial.status, 200, JSON.stringify(partial.body));
    const none = await http(server.url, 'POST', '/api/v1/rulesets/typed/filter', { known_input: {}, target_results: ['ADULT'] });
    assert.equal(none.status, 200);
    const wrong = await http(server.url, 'POST', '/api/v1/rulesets/typed/filter', { known_input: { user: { age: -1 } }, target_results: ['ADULT'] });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.code, 'INPUT_INVALID');
    assert.deepEqual(wrong.body.problems, [{ path: 'user.age', message: 'must be >= 0' }]);
    assert.match(wrong.body.error, /^known_input does not match config\.input_schema: user\.age: must be >= 0$/);
    const off = await http(server.url, 'POST', '/api/v1/rulesets/typed-off/filter', { known_input: { user: { age: -1 } }, target_results: ['ADULT'] });
    assert.equal(off.status, 200, 'input_validation off: known_input is not validated either');
  });

  it('GET /schema: the schema as written, or an inferred one marked inferred', async () => {
    const own = await http(server.url, 'GET', '/api/v1/rulesets/typed/schema');
    assert.equal(own.status, 200);
    assert.deepEqual(own.body, { name: 'typed', version: '1.0.0', inferred: false, input_validation: 'reject', schema: SCHEMA });
    const off = await http(server.url, 'GET', '/api/v1/rulesets/typed-off/schema');
    assert.equal(off.body.input_validation, 'off');
    const inferred = await http(server.url, 'GET', '/api/v1/rulesets/untyped/schema');
    assert.equal(inferred.status, 200);
    assert.deepEqual(inferred.body, {
      name: 'untyped',
      version: '1.0.0',
      inferred: true,
      input_validation: 'off',
      schema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: {
          order: { type: 'object', properties: { amount: { type: 'number' } } },
          user: { type: 'object', properties: { age: { type: 'number' }, country: { type: 'string' } } },
        },
      },
    });
    const missing = await http(server.url, 'GET', '/api/v1/rulesets/nope/schema');
    assert.equal(missing.status, 404);
  });

  it('the inferred schema, posted back as input_schema, is accepted', async () => {
    const inferred = await http(server.url, 'GET', '/api/v1/rulesets/untyped/schema');
    const doc = gate('untyped', { input_schema: inferred.body.schema }, 'user.age >= 18 && user.country in ["US", "CA"] && order.amount > 0');
    const res = await http(server.url, 'POST', '/api/v1/rulesets', doc);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const now = await http(server.url, 'GET', '/api/v1/rulesets/untyped/schema');
    assert.equal(now.body.inferred, false);
  });
});

describe('input_schema over gRPC', () => {
  it('Execute: INVALID_ARGUMENT with svc-error-code INPUT_INVALID, the problems in the details and in svc-problems', async () => {
    const out = await client.call('Execute', { name: 'typed', input_json: JSON.stringify(BAD_INPUT) });
    assert.equal(out.ok, false);
    if (out.ok) return;
    assert.equal(out.code, Status.INVALID_ARGUMENT);
    assert.equal(out.svcCode, 'INPUT_INVALID');
    assert.equal(out.details, 'input does not match config.input_schema: user.age: must be integer; user.country: must be string');
    assert.deepEqual(JSON.parse(String(out.trailers?.get('svc-problems')[0])), BAD_PROBLEMS);
    const ok = await client.ok('Execute', { name: 'typed', input_json: '{"user":{"age":30}}' });
    assert.equal(ok.code, 'ADULT');
  });

  it('BatchExecute: the invalid input is an INPUT_INVALID item in place, with its problems as JSON text', async () => {
    const res = await client.ok('BatchExecute', { name: 'typed', inputs_json: ['{"user":{"age":3}}', JSON.stringify(BAD_INPUT)] });
    assert.deepEqual(
      res.results.map((r: any) => r.outcome),
      ['result', 'error'],
    );
    assert.equal(res.results[0].result.code, 'MINOR');
    assert.deepEqual(res.results[1].error, {
      error: 'input does not match config.input_schema: user.age: must be integer; user.country: must be string',
      code: 'INPUT_INVALID',
      status: Status.INVALID_ARGUMENT,
      problems_json: JSON.stringify(BAD_PROBLEMS),
    });
  });
});
