/**
 * HTTP and gRPC are two thin adapters over one façade, so the same operation must give the
 * same answer on both. One server, one table of operations; each row runs over HTTP and over
 * gRPC, the gRPC answer is turned into the HTTP shape (JSON texts parsed, uint64 strings to
 * numbers, "" description to null, a trace step's table_match to `row` / `rows`, a batch item's
 * problems_json to `problems`), durations are zeroed, and the two are compared. Errors compare
 * the catalog code, the message, the HTTP and gRPC statuses of that code, and the `problems`
 * (trailing metadata `svc-problems` on gRPC).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ERROR_CATALOG, type ErrorCode } from '../../src/service/errors.js';
import { connect, type GrpcOutcome, type TestClient } from '../helpers/grpc-client.js';
import { BROKEN, LOAN, RENEWAL, ROUTING, TYPED, counter, postRulesets } from '../helpers/grpc-fixtures.js';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

type Shape = (v: any) => unknown;

interface Row {
  name: string;
  http: [method: string, path: string, body?: unknown];
  grpc: [method: string, request: object];
  /** gRPC answer → HTTP shape (success rows). */
  shape?: Shape;
  /** The messages differ by design (e.g. which field held the malformed JSON). */
  codeOnly?: boolean;
}

const approve = { user: { age: 30, country: 'US' } };
const reject = { user: { age: 9, country: 'US' } };

/** A StepInfo in the HTTP trace entry's shape: the table_match oneof is `row` (null for row_null) or `rows`. */
const stepShape: Shape = ({ table_match: which, row, row_null: _rowNull, rows, ...s }) => ({
  ...s,
  duration_us: Number(s.duration_us),
  ...(which === 'row' ? { row } : which === 'row_null' ? { row: null } : which === 'rows' ? { rows: rows.indexes } : {}),
});

const execShape: Shape = (r) => ({
  code: r.code,
  message: r.message,
  output: JSON.parse(r.output_json),
  duration_us: Number(r.duration_us),
  ...(r.trace ? { trace: { path: r.trace.path, steps: r.trace.steps.map(stepShape) } } : {}),
});

const batchShape: Shape = (r) => ({
  results: r.results.map((i: any) =>
    i.outcome === 'result'
      ? execShape(i.result)
      : { error: i.error.error, code: i.error.code, ...(i.error.problems_json === '' ? {} : { problems: JSON.parse(i.error.problems_json) }) },
  ),
  summary: { ...r.summary, total_duration_us: Number(r.summary.total_duration_us) },
});

const renewal = { user: { expires: '2026-12-10T00:00:00Z' } };
const gold = { user: { tier: 'gold', age: 70, country: 'US' } };
const nobody = { user: { tier: 'bronze', age: 9, country: 'DE' } };
const badInput = { user: { age: 'ten', country: 7 } };

const ROWS: Row[] = [
  {
    name: 'list rulesets',
    http: ['GET', '/api/v1/rulesets'],
    grpc: ['ListRuleSets', {}],
    shape: (r) => r.rulesets.map((x: any) => ({ ...x, description: x.description === '' ? null : x.description })),
  },
  { name: 'get a ruleset', http: ['GET', '/api/v1/rulesets/loan'], grpc: ['GetRuleSet', { name: 'loan' }], shape: (r) => JSON.parse(r.ruleset_json) },
  { name: 'get an unknown ruleset', http: ['GET', '/api/v1/rulesets/ghost'], grpc: ['GetRuleSet', { name: 'ghost' }] },
  {
    name: 'execute',
    http: ['POST', '/api/v1/execute/loan', { input: approve }],
    grpc: ['Execute', { name: 'loan', input_json: JSON.stringify(approve) }],
    shape: execShape,
  },
  {
    name: 'execute with trace',
    http: ['POST', '/api/v1/execute/loan', { input: reject, trace: true }],
    grpc: ['Execute', { name: 'loan', input_json: JSON.stringify(reject), trace: true }],
    shape: execShape,
  },
  { name: 'execute an unknown ruleset', http: ['POST', '/api/v1/execute/ghost', { input: {} }], grpc: ['Execute', { name: 'ghost', input_json: '{}' }] },
  {
    name: 'execute with an invalid name',
    http: ['POST', '/api/v1/execute/bad%20name!', { input: {} }],
    grpc: ['Execute', { name: 'bad name!', input_json: '{}' }],
  },
  {
    name: 'execute with an input that is not an object',
    http: ['POST', '/api/v1/execute/loan', { input: [1, 2] }],
    grpc: ['Execute', { name: 'loan', input_json: '[1,2]' }],
  },
  {
    name: 'execute with malformed JSON',
    http: ['POST', '/api/v1/execute/loan', '{"input": {'],
    grpc: ['Execute', { name: 'loan', input_json: '{' }],
    codeOnly: true,
  },
  {
    name: 'execution error',
    http: ['POST', '/api/v1/execute/broken', { input: { name: 'x' } }],
    grpc: ['Execute', { name: 'broken', input_json: '{"name":"x"}' }],
  },
  {
    name: 'execution timeout',
    http: ['POST', '/api/v1/execute/slowpoke', { input: { limit: 1e8 } }],
    grpc: ['Execute', { name: 'slowpoke', input_json: '{"limit":100000000}' }],
  },
  {
    name: 'eval',
    http: ['POST', '/api/v1/eval', { expression: 'upper(a.b) + "!"', context: { a: { b: 'hi' } } }],
    grpc: ['Eval', { expression: 'upper(a.b) + "!"', context_json: '{"a":{"b":"hi"}}' }],
    shape: (r) => ({ result: JSON.parse(r.result_json), parsed: r.parsed }),
  },
  {
    name: 'eval without a context',
    http: ['POST', '/api/v1/eval', { expression: '[1, 2] == [1, 2]' }],
    grpc: ['Eval', { expression: '[1, 2] == [1, 2]' }],
    shape: (r) => ({ result: JSON.parse(r.result_json), parsed: r.parsed }),
  },
  { name: 'eval parse error', http: ['POST', '/api/v1/eval', { expression: '(a', context: {} }], grpc: ['Eval', { expression: '(a', context_json: '{}' }] },
  {
    name: 'eval run-time error',
    http: ['POST', '/api/v1/eval', { expression: '1 / 0', context: {} }],
    grpc: ['Eval', { expression: '1 / 0', context_json: '{}' }],
  },
  {
    name: 'batch',
    http: ['POST', '/api/v1/execute/loan/batch', { inputs: [approve, 'x', reject], trace: true }],
    grpc: ['BatchExecute', { name: 'loan', inputs_json: [JSON.stringify(approve), '"x"', JSON.stringify(reject)], trace: true }],
    shape: batchShape,
  },
  {
    name: 'execute with now',
    http: ['POST', '/api/v1/execute/renewal', { input: renewal, now: '2026-11-24T01:00:00+01:00' }],
    grpc: ['Execute', { name: 'renewal', input_json: JSON.stringify(renewal), now: '2026-11-24T01:00:00+01:00' }],
    shape: execShape,
  },
  {
    name: 'execute with an invalid now',
    http: ['POST', '/api/v1/execute/renewal', { input: renewal, now: '2026-02-30' }],
    grpc: ['Execute', { name: 'renewal', input_json: JSON.stringify(renewal), now: '2026-02-30' }],
  },
  {
    name: 'batch with now',
    http: ['POST', '/api/v1/execute/renewal/batch', { inputs: [renewal, { user: { expires: '2027-06-01' } }], now: '2026-11-24' }],
    grpc: ['BatchExecute', { name: 'renewal', inputs_json: [JSON.stringify(renewal), '{"user":{"expires":"2027-06-01"}}'], now: '2026-11-24' }],
    shape: batchShape,
  },
  {
    name: 'eval with now',
    http: ['POST', '/api/v1/eval', { expression: 'date_add(now(), 1, "days")', now: '2026-02-28T12:00:00Z' }],
    grpc: ['Eval', { expression: 'date_add(now(), 1, "days")', now: '2026-02-28T12:00:00Z' }],
    shape: (r) => ({ result: JSON.parse(r.result_json), parsed: r.parsed }),
  },
  {
    name: 'eval with an invalid now',
    http: ['POST', '/api/v1/eval', { expression: 'now()', now: 'yesterday' }],
    grpc: ['Eval', { expression: 'now()', now: 'yesterday' }],
  },
  {
    name: 'execute a table ruleset traced (rows matched)',
    http: ['POST', '/api/v1/execute/routing', { input: gold, trace: true }],
    grpc: ['Execute', { name: 'routing', input_json: JSON.stringify(gold), trace: true }],
    shape: execShape,
  },
  {
    name: 'execute a table ruleset traced (no row matched)',
    http: ['POST', '/api/v1/execute/routing', { input: nobody, trace: true }],
    grpc: ['Execute', { name: 'routing', input_json: JSON.stringify(nobody), trace: true }],
    shape: execShape,
  },
  {
    name: 'batch of a table ruleset traced',
    http: ['POST', '/api/v1/execute/routing/batch', { inputs: [gold, nobody], trace: true }],
    grpc: ['BatchExecute', { name: 'routing', inputs_json: [JSON.stringify(gold), JSON.stringify(nobody)], trace: true }],
    shape: batchShape,
  },
  {
    name: 'execute with an invalid input (input_schema)',
    http: ['POST', '/api/v1/execute/typed', { input: badInput }],
    grpc: ['Execute', { name: 'typed', input_json: JSON.stringify(badInput) }],
  },
  {
    name: 'batch with an invalid input (input_schema)',
    http: ['POST', '/api/v1/execute/typed/batch', { inputs: [{ user: { age: 30 } }, badInput] }],
    grpc: ['BatchExecute', { name: 'typed', inputs_json: ['{"user":{"age":30}}', JSON.stringify(badInput)] }],
    shape: batchShape,
  },
  { name: 'empty batch', http: ['POST', '/api/v1/execute/loan/batch', { inputs: [] }], grpc: ['BatchExecute', { name: 'loan', inputs_json: [] }] },
  {
    name: 'health',
    http: ['GET', '/health'],
    grpc: ['Health', {}],
    shape: (r) => ({ status: r.status, version: r.version, uptime_seconds: Number(r.uptime_seconds), rules_count: r.rules_count }),
  },
];

/** HTTP `/health` carries more than HealthResponse; keep the common fields. */
function httpShape(row: Row, body: any): unknown {
  if (row.grpc[0] !== 'Health') return body;
  return { status: body.status, version: body.version, uptime_seconds: body.uptime_seconds, rules_count: body.storage.rules_count };
}

/** Zeroes timing fields at any depth. */
function normalise(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalise);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, ['duration_us', 'total_duration_us', 'uptime_seconds'].includes(k) ? 0 : normalise(x)]));
  }
  return v;
}

let server: ServerProcess;
let client: TestClient;

before(async () => {
  server = await startServer(['--max-steps', '1000000000']);
  await postRulesets(server.url, [LOAN, BROKEN, counter('slowpoke', 5), RENEWAL, ROUTING, TYPED]);
  client = connect(server.grpcAddress);
});

after(async () => {
  client?.close();
  await server?.stop();
});

describe('the same operations over HTTP and gRPC give the same answers', () => {
  const seen = new Set<string>();
  for (const row of ROWS) {
    it(row.name, async () => {
      const [verb, path, body] = row.http;
      const h = await http(server.url, verb, path, body);
      const g: GrpcOutcome = await client.call(row.grpc[0], row.grpc[1]);
      seen.add(h.status === 200 ? `${row.grpc[0]}:OK` : String(h.body?.code));
      if (h.status === 200) {
        assert.ok(g.ok, `gRPC failed where HTTP answered 200: ${g.ok ? '' : g.details}`);
        assert.ok(row.shape, 'a success row needs a shape');
        assert.deepEqual(normalise(row.shape(g.value)), normalise(httpShape(row, h.body)));
        return;
      }
      assert.equal(g.ok, false, `gRPC succeeded where HTTP answered ${h.status}`);
      if (g.ok) return;
      const code = h.body.code as ErrorCode;
      assert.equal(ERROR_CATALOG[code].http, h.status);
      assert.equal(g.svcCode, code);
      assert.equal(g.code, ERROR_CATALOG[code].grpc);
      if (!row.codeOnly) assert.equal(g.details, h.body.error);
      // The problems of the HTTP body (INPUT_INVALID) are the JSON text of metadata svc-problems.
      const problems = g.trailers?.get('svc-problems')[0];
      if (h.body.problems === undefined) assert.equal(problems, undefined);
      else assert.deepEqual(JSON.parse(String(problems)), h.body.problems);
    });
  }

  it('covers success and every error status a client can reach', () => {
    // A guard on the table itself: list, get, execute (both trace modes), eval, batch, health,
    // and errors NOT_FOUND, BAD_REQUEST, INPUT_INVALID, INTERNAL_ERROR, TIMEOUT.
    for (const m of ['ListRuleSets', 'GetRuleSet', 'Execute', 'Eval', 'BatchExecute', 'Health']) assert.ok(seen.has(`${m}:OK`), m);
    for (const code of ['NOT_FOUND', 'BAD_REQUEST', 'INPUT_INVALID', 'INTERNAL_ERROR', 'TIMEOUT']) assert.ok(seen.has(code), code);
  });
});
