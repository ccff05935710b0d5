/**
 * gRPC parity for the language additions (issue 19), against the real built server with a real
 * grpc-js client, each answer checked against the HTTP answer to the same request:
 * - `now` on ExecuteRequest, BatchExecuteRequest and EvalRequest (EXTENSIONS.md 3 "Dates and
 *   time"): the time now() returns; absent, the clock; an invalid value is INVALID_ARGUMENT
 *   BAD_REQUEST with HTTP's message;
 * - decision-table trace entries (EXTENSIONS.md 3 "Decision tables"): StepInfo's `table_match`
 *   oneof (`row`, `row_null`, `rows`), unset on steps that are not tables;
 * - INPUT_INVALID problems: trailing metadata `svc-problems` (JSON text, bounded, printable
 *   ASCII) with `svc-problems-omitted`, and `BatchItemError.problems_json`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_PROBLEMS_METADATA_BYTES, PROBLEMS_METADATA_KEY, PROBLEMS_OMITTED_METADATA_KEY } from '../../src/transport/grpc/status.js';
import { connect, Status, type GrpcOutcome, type TestClient } from '../helpers/grpc-client.js';
import { RENEWAL, ROUTING, TYPED, postRulesets } from '../helpers/grpc-fixtures.js';
import { http, startServer, type ServerProcess } from '../helpers/server-process.js';

const BAD_INPUT = { user: { age: 'ten', country: 7 } };

let server: ServerProcess;
let client: TestClient;

before(async () => {
  server = await startServer([]);
  await postRulesets(server.url, [RENEWAL, ROUTING, TYPED]);
  client = connect(server.grpcAddress);
});

after(async () => {
  client?.close();
  await server?.stop();
});

/** The failure of an outcome (asserts it failed). */
function failure(out: GrpcOutcome): Extract<GrpcOutcome, { ok: false }> {
  assert.equal(out.ok, false, `expected a failure, got ${JSON.stringify(out)}`);
  return out as Extract<GrpcOutcome, { ok: false }>;
}

/** The single text value of a trailing metadata key, or undefined. */
function trailer(out: Extract<GrpcOutcome, { ok: false }>, key: string): string | undefined {
  const v = out.trailers?.get(key) ?? [];
  assert.ok(v.length <= 1, `${key} appears ${v.length} times`);
  return typeof v[0] === 'string' ? v[0] : undefined;
}

/** A gRPC trace step in the HTTP trace entry's shape. */
function httpStep(s: any): Record<string, unknown> {
  const out: Record<string, unknown> = { id: s.id, name: s.name, duration_us: 0 };
  if (s.table_match === 'row') out['row'] = s.row;
  else if (s.table_match === 'row_null') out['row'] = null;
  else if (s.table_match === 'rows') out['rows'] = s.rows.indexes;
  return out;
}

const input = { user: { expires: '2026-12-10T00:00:00Z' } };

describe('now over gRPC', () => {
  it('Execute reads `now`, canonicalised, in every expression, as HTTP does', async () => {
    const res = await client.ok('Execute', { name: 'renewal', input_json: JSON.stringify(input), now: '2026-11-24T01:00:00+01:00' });
    assert.equal(res.code, 'DUE');
    assert.deepEqual(JSON.parse(res.output_json), { at: '2026-11-24T00:00:00.000Z', left: 16, weekday: 2 });
    const viaHttp = await http(server.url, 'POST', '/api/v1/execute/renewal', { input, now: '2026-11-24T01:00:00+01:00' });
    assert.deepEqual(JSON.parse(res.output_json), viaHttp.body.output);
    const later = await client.ok('Execute', { name: 'renewal', input_json: JSON.stringify(input), now: '2026-10-01', trace: true });
    assert.equal(later.code, 'FINE');
    assert.deepEqual(JSON.parse(later.output_json), { at: '2026-10-01T00:00:00.000Z' });
  });

  it('Execute without `now` reads the clock, also right after a call that set one', async () => {
    await client.ok('Execute', { name: 'renewal', input_json: JSON.stringify(input), now: '2001-01-01' });
    const before = Date.now();
    const res = await client.ok('Execute', { name: 'renewal', input_json: '{"user":{"expires":"9999-01-01"}}' });
    const after = Date.now();
    const at = Date.parse(JSON.parse(res.output_json).at as string);
    assert.ok(at >= before - 1000 && at <= after + 1000, `now() ${new Date(at).toISOString()} is the server's clock`);
  });

  it('BatchExecute runs every item at `now`', async () => {
    const inputs = [input, { user: { expires: '2027-06-01' } }];
    const res = await client.ok('BatchExecute', { name: 'renewal', inputs_json: inputs.map((x) => JSON.stringify(x)), now: '2026-11-24' });
    assert.deepEqual(
      res.results.map((r: any) => [r.result.code, JSON.parse(r.result.output_json)]),
      [
        ['DUE', { at: '2026-11-24T00:00:00.000Z', left: 16, weekday: 2 }],
        ['FINE', { at: '2026-11-24T00:00:00.000Z' }],
      ],
    );
    const viaHttp = await http(server.url, 'POST', '/api/v1/execute/renewal/batch', { inputs, now: '2026-11-24' });
    assert.deepEqual(
      res.results.map((r: any) => JSON.parse(r.result.output_json)),
      viaHttp.body.results.map((r: any) => r.output),
    );
  });

  it('Eval reads `now`; without it, the clock', async () => {
    const res = await client.ok('Eval', { expression: 'date_add(now(), 1, "days")', context_json: '', now: '2026-02-28T12:00:00Z' });
    assert.equal(JSON.parse(res.result_json), '2026-03-01T12:00:00.000Z');
    const clock = await client.ok('Eval', { expression: 'now()' });
    assert.ok(Math.abs(Date.parse(JSON.parse(clock.result_json)) - Date.now()) < 5000, clock.result_json);
  });

  for (const bad of ['2026-02-30', 'yesterday', '']) {
    it(`an invalid now ${JSON.stringify(bad)} is INVALID_ARGUMENT BAD_REQUEST with HTTP's message, on Execute, BatchExecute and Eval`, async () => {
      const h = await http(server.url, 'POST', '/api/v1/execute/renewal', { input, now: bad });
      assert.equal(h.status, 400);
      const calls: [string, object][] = [
        ['Execute', { name: 'renewal', input_json: JSON.stringify(input), now: bad }],
        ['BatchExecute', { name: 'renewal', inputs_json: [JSON.stringify(input)], now: bad }],
        ['Eval', { expression: 'now()', now: bad }],
      ];
      for (const [method, req] of calls) {
        const out = failure(await client.call(method, req));
        assert.equal(out.code, Status.INVALID_ARGUMENT, method);
        assert.equal(out.svcCode, 'BAD_REQUEST', method);
        assert.equal(out.details, h.body.error, method);
      }
    });
  }
});

describe('decision tables in the gRPC trace', () => {
  const cases: [string, object, string, unknown[]][] = [
    [
      'rows matched in every table',
      { user: { tier: 'gold', age: 70, country: 'US' } },
      'OK',
      [
        ['rate', 'row', 0],
        ['tags', 'rows', { indexes: [0, 1] }],
        ['route', 'row', 1],
        ['ok', undefined, undefined],
      ],
    ],
    [
      'no row matched: row_null, and an empty rows list',
      { user: { tier: 'bronze', age: 9, country: 'DE' } },
      'REVIEW',
      [
        ['rate', 'row_null', true],
        ['tags', 'rows', { indexes: [] }],
        ['route', 'row_null', true],
        ['review', undefined, undefined],
      ],
    ],
    [
      'row 0 and a single collected row',
      { user: { tier: 'silver', age: 30, country: 'FR' } },
      'REVIEW',
      [
        ['rate', 'row', 1],
        ['tags', 'rows', { indexes: [0] }],
        ['route', 'row', 0],
        ['review', undefined, undefined],
      ],
    ],
  ];
  for (const [name, x, code, steps] of cases) {
    it(`Execute: ${name}; the same entries as the HTTP trace`, async () => {
      const res = await client.ok('Execute', { name: 'routing', input_json: JSON.stringify(x), trace: true });
      assert.equal(res.code, code);
      assert.deepEqual(
        res.trace.steps.map((s: any) => [s.id, s.table_match, s.table_match === undefined ? undefined : s[s.table_match]]),
        steps,
      );
      for (const s of res.trace.steps) {
        const set = ['row', 'row_null', 'rows'].filter((k) => s[k] !== undefined && s[k] !== null);
        assert.deepEqual(set, s.table_match === undefined ? [] : [s.table_match], `only the oneof member is set on ${s.id}`);
      }
      const h = await http(server.url, 'POST', '/api/v1/execute/routing', { input: x, trace: true });
      assert.deepEqual(
        res.trace.steps.map(httpStep),
        h.body.trace.steps.map((s: any) => ({ ...s, duration_us: 0 })),
      );
    });
  }

  it('BatchExecute traces carry the table entries too', async () => {
    const xs = cases.map((c) => c[1]);
    const res = await client.ok('BatchExecute', { name: 'routing', inputs_json: xs.map((x) => JSON.stringify(x)), trace: true });
    const h = await http(server.url, 'POST', '/api/v1/execute/routing/batch', { inputs: xs, trace: true });
    assert.deepEqual(
      res.results.map((r: any) => r.result.trace.steps.map(httpStep)),
      h.body.results.map((r: any) => r.trace.steps.map((s: any) => ({ ...s, duration_us: 0 }))),
    );
    assert.equal(res.results[1].result.trace.steps[0].row_null, true);
  });
});

describe('INPUT_INVALID problems over gRPC', () => {
  it('Execute: trailing metadata svc-problems holds the problems as JSON text, equal to HTTP `problems`', async () => {
    const out = failure(await client.call('Execute', { name: 'typed', input_json: JSON.stringify(BAD_INPUT) }));
    assert.equal(out.code, Status.INVALID_ARGUMENT);
    assert.equal(out.svcCode, 'INPUT_INVALID');
    const h = await http(server.url, 'POST', '/api/v1/execute/typed', { input: BAD_INPUT });
    assert.equal(h.status, 400);
    assert.deepEqual(JSON.parse(trailer(out, PROBLEMS_METADATA_KEY) ?? 'null'), h.body.problems);
    assert.deepEqual(h.body.problems, [
      { path: 'user.age', message: 'must be integer' },
      { path: 'user.country', message: 'must be string' },
    ]);
    assert.equal(out.details, h.body.error);
    assert.equal(trailer(out, PROBLEMS_OMITTED_METADATA_KEY), undefined);
  });

  it('characters outside printable ASCII travel as JSON escapes and parse back to the same text', async () => {
    const x = { user: { age: 30 }, 'größe ✓': 1 };
    const out = failure(await client.call('Execute', { name: 'typed', input_json: JSON.stringify(x) }));
    const text = trailer(out, PROBLEMS_METADATA_KEY) ?? '';
    assert.match(text, /^[\x20-\x7e]+$/);
    const h = await http(server.url, 'POST', '/api/v1/execute/typed', { input: x });
    assert.deepEqual(JSON.parse(text), h.body.problems);
    assert.ok(JSON.stringify(h.body.problems).includes('größe ✓'), JSON.stringify(h.body.problems));
  });

  it('many problems: svc-problems keeps the first that fit its bound, svc-problems-omitted counts the rest', async () => {
    const x: Record<string, unknown> = { user: { age: 30 } };
    for (let i = 0; i < 300; i++) x[`extra_field_${i}`] = i;
    const out = failure(await client.call('Execute', { name: 'typed', input_json: JSON.stringify(x) }));
    assert.equal(out.svcCode, 'INPUT_INVALID');
    const h = await http(server.url, 'POST', '/api/v1/execute/typed', { input: x });
    assert.equal(h.body.problems.length, 300);
    const text = trailer(out, PROBLEMS_METADATA_KEY) ?? '';
    assert.ok(text.length <= MAX_PROBLEMS_METADATA_BYTES, `${text.length} bytes`);
    const kept = JSON.parse(text) as unknown[];
    assert.ok(kept.length > 10 && kept.length < 300, `${kept.length} kept`);
    assert.deepEqual(kept, h.body.problems.slice(0, kept.length));
    assert.equal(trailer(out, PROBLEMS_OMITTED_METADATA_KEY), String(300 - kept.length));
  });

  it('errors without problems carry no svc-problems', async () => {
    const out = failure(await client.call('Execute', { name: 'ghost', input_json: '{}' }));
    assert.equal(out.svcCode, 'NOT_FOUND');
    assert.equal(trailer(out, PROBLEMS_METADATA_KEY), undefined);
    const bad = failure(await client.call('Execute', { name: 'renewal', input_json: '[1]' }));
    assert.equal(bad.svcCode, 'BAD_REQUEST');
    assert.equal(trailer(bad, PROBLEMS_METADATA_KEY), undefined);
  });

  it('BatchExecute: an INPUT_INVALID item has problems_json equal to the HTTP item `problems`; other items ""', async () => {
    const inputs = [{ user: { age: 3 } }, BAD_INPUT, 'x'];
    const res = await client.ok('BatchExecute', { name: 'typed', inputs_json: inputs.map((x) => JSON.stringify(x)) });
    const h = await http(server.url, 'POST', '/api/v1/execute/typed/batch', { inputs });
    assert.equal(res.results[0].result.code, 'MINOR');
    assert.equal(res.results[1].error.code, 'INPUT_INVALID');
    assert.equal(res.results[1].error.status, Status.INVALID_ARGUMENT);
    assert.deepEqual(JSON.parse(res.results[1].error.problems_json), h.body.results[1].problems);
    assert.equal(h.body.results[1].problems.length, 2);
    assert.equal(res.results[2].error.code, 'BAD_REQUEST');
    assert.equal(res.results[2].error.problems_json, '');
    assert.equal(h.body.results[2].problems, undefined);
  });
});
