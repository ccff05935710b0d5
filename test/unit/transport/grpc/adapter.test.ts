/**
 * The gRPC adapter without a network: JSON field decoding, message encoding, the status
 * mapping of every catalog code, the handlers over a fake façade (CallContext: tenant, source
 * IP, transport), and the proto as SPEC.md gives it. The management RPCs and the health
 * service have their own files (./management.test.ts, ./health.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import { ERROR_CATALOG, ServiceError, toServiceError, type ErrorCode } from '../../../../src/service/errors.js';
import type { CallContext, RuleServiceApi } from '../../../../src/service/types.js';
import { nowFn, nowState } from '../../../../src/expr/dates.js';
import { encodeBatch, encodeExecuteResult, encodeList, encodeSteps, parseJsonField } from '../../../../src/transport/grpc/codec.js';
import { buildGrpcHandlers, sourceIpOf, tenantOf } from '../../../../src/transport/grpc/handlers.js';
import { loadRulesPackage, SERVICE_NAME } from '../../../../src/transport/grpc/proto.js';
import {
  ERROR_CODE_METADATA_KEY,
  PROBLEMS_METADATA_KEY,
  PROBLEMS_OMITTED_METADATA_KEY,
  problemsMetadataText,
  toGrpcStatus,
} from '../../../../src/transport/grpc/status.js';
import { INVALID_NOW_MESSAGE } from '../../../../src/transport/request-now.js';

describe('parseJsonField', () => {
  it('parses JSON text', () => {
    assert.deepEqual(parseJsonField('input_json', '{"a":[1,null]}'), { a: [1, null] });
  });
  it('empty text: the given default, or BAD_REQUEST "<field> is required"', () => {
    assert.deepEqual(parseJsonField('context_json', '  ', {}), {});
    assert.throws(
      () => parseJsonField('input_json', ''),
      (e: ServiceError) => e.code === 'BAD_REQUEST' && /^input_json is required/.test(e.message),
    );
  });
  it('malformed JSON, deep nesting and __proto__ keys are BAD_REQUEST naming the field', () => {
    assert.throws(
      () => parseJsonField('input_json', '{"a":'),
      (e: ServiceError) => e.code === 'BAD_REQUEST' && /^input_json: malformed JSON/.test(e.message),
    );
    assert.throws(
      () => parseJsonField('x_json', '['.repeat(600) + ']'.repeat(600)),
      (e: ServiceError) => /^x_json is nested deeper than 512 levels/.test(e.message),
    );
    assert.throws(
      () => parseJsonField('x_json', '{"__proto__":{}}'),
      (e: ServiceError) => /^x_json contains a forbidden key/.test(e.message),
    );
  });
});

describe('encoding', () => {
  it('ExecuteResponse: output as JSON text, trace only when present', () => {
    assert.deepEqual(encodeExecuteResult({ code: 'A', message: 'm', output: { x: [1] }, duration_us: 7 }), {
      code: 'A',
      message: 'm',
      output_json: '{"x":[1]}',
      duration_us: 7,
    });
    const traced = encodeExecuteResult({
      code: 'A',
      message: '',
      output: {},
      duration_us: 1,
      trace: { path: 'a', steps: [{ id: 'a', name: 'A', duration_us: 1 }] },
    });
    assert.deepEqual(traced.trace, { path: 'a', steps: [{ id: 'a', name: 'A', duration_us: 1 }] });
  });
  it('RuleSetInfo: a null description is ""', () => {
    assert.deepEqual(encodeList([{ name: 'n', version: '1', description: null }]), { rulesets: [{ name: 'n', version: '1', description: '' }] });
    assert.throws(
      () => encodeList([{ name: 'n', version: '1', description: 'd'.repeat(100) }], 50),
      (e: ServiceError) => e.code === 'LIMIT_EXCEEDED',
    );
  });
  it('BatchItem errors carry the catalog code and its gRPC status', () => {
    const out = encodeBatch({
      results: [
        { error: 'late', code: 'TIMEOUT' },
        { code: 'OK', message: '', output: {}, duration_us: 2 },
      ],
      summary: { total: 2, success: 1, failed: 1, total_duration_us: 5 },
    });
    assert.deepEqual(out.results[0], { error: { error: 'late', code: 'TIMEOUT', status: status.DEADLINE_EXCEEDED } });
    assert.equal('result' in out.results[1]! && out.results[1].result.output_json, '{}');
  });
  it('an INPUT_INVALID BatchItem error carries problems_json, counted in the answer bound', () => {
    const problems = [{ path: 'user.age', message: 'must be integer' }];
    const batch = { results: [{ error: 'bad input', code: 'INPUT_INVALID', problems }], summary: { total: 1, success: 0, failed: 1, total_duration_us: 0 } };
    assert.deepEqual(encodeBatch(batch).results[0], {
      error: { error: 'bad input', code: 'INPUT_INVALID', status: status.INVALID_ARGUMENT, problems_json: JSON.stringify(problems) },
    });
    assert.throws(
      () => encodeBatch(batch, 'bad input'.length + 10),
      (e: ServiceError) => e.code === 'LIMIT_EXCEEDED',
    );
  });
  it('StepInfo: table entries become the table_match oneof; a trace without tables goes out as it is', () => {
    const plain = [
      { id: 'a', name: 'A', duration_us: 1 },
      { id: 'b', name: 'B', duration_us: 2 },
    ];
    assert.equal(encodeSteps(plain), plain);
    assert.deepEqual(
      encodeSteps([
        { id: 'a', name: 'A', duration_us: 1 },
        { id: 't', name: 'T', duration_us: 2, row: 0 },
        { id: 'u', name: 'U', duration_us: 3, row: null },
        { id: 'c', name: 'C', duration_us: 4, rows: [] },
        { id: 'd', name: 'D', duration_us: 5, rows: [1, 3] },
        { id: 'z', name: 'Z', duration_us: 6 },
      ]),
      [
        { id: 'a', name: 'A', duration_us: 1 },
        { id: 't', name: 'T', duration_us: 2, row: 0 },
        { id: 'u', name: 'U', duration_us: 3, row_null: true },
        { id: 'c', name: 'C', duration_us: 4, rows: { indexes: [] } },
        { id: 'd', name: 'D', duration_us: 5, rows: { indexes: [1, 3] } },
        { id: 'z', name: 'Z', duration_us: 6 },
      ],
    );
  });
  it('StepInfo table entries survive the wire: the oneof member names which', () => {
    const method = (loadRulesPackage()[SERVICE_NAME] as any).Execute;
    const msg = encodeExecuteResult({
      code: 'A',
      message: '',
      output: {},
      duration_us: 1,
      trace: {
        path: 't -> u -> c -> z',
        steps: [
          { id: 't', name: '', duration_us: 1, row: 0 },
          { id: 'u', name: '', duration_us: 1, row: null },
          { id: 'c', name: '', duration_us: 1, rows: [] },
          { id: 'z', name: '', duration_us: 1 },
        ],
      },
    });
    const back = method.responseDeserialize(method.responseSerialize(msg));
    assert.deepEqual(
      back.trace.steps.map((s: any) => [s.table_match, s.row, s.row_null, s.rows]),
      [
        ['row', 0, undefined, undefined],
        ['row_null', undefined, true, undefined],
        ['rows', undefined, undefined, { indexes: [] }],
        [undefined, undefined, undefined, undefined],
      ],
    );
  });
});

describe('status mapping (DECISIONS.md 5)', () => {
  const expected: Record<string, number> = {
    NOT_FOUND: status.NOT_FOUND,
    BAD_REQUEST: status.INVALID_ARGUMENT,
    INTERNAL_ERROR: status.INTERNAL,
    TIMEOUT: status.DEADLINE_EXCEEDED,
    READ_ONLY: status.FAILED_PRECONDITION,
    RATE_LIMITED: status.RESOURCE_EXHAUSTED,
    NOT_READY: status.UNAVAILABLE,
  };
  for (const [code, grpc] of Object.entries(expected)) {
    it(`${code} → ${status[grpc]}, details = message, metadata svc-error-code = ${code}`, () => {
      const s = toGrpcStatus(new ServiceError(code as ErrorCode, `msg of ${code}`));
      assert.equal(s.code, grpc);
      assert.equal(s.details, `msg of ${code}`);
      assert.deepEqual(s.metadata.get(ERROR_CODE_METADATA_KEY), [code]);
    });
  }
  it('every catalog code maps to its catalog gRPC status', () => {
    for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) assert.equal(toGrpcStatus(new ServiceError(code, 'x')).code, ERROR_CATALOG[code].grpc);
  });
  it('an error with problems carries them as JSON text in svc-problems; others have none', () => {
    const problems = [
      { path: 'user.age', message: 'must be integer' },
      { path: 'größe', message: 'is not allowed' },
    ];
    const s = toGrpcStatus(new ServiceError('INPUT_INVALID', 'input does not match', { problems }));
    assert.equal(s.code, status.INVALID_ARGUMENT);
    const [text] = s.metadata.get(PROBLEMS_METADATA_KEY);
    assert.equal(text, '[{"path":"user.age","message":"must be integer"},{"path":"gr\\u00f6\\u00dfe","message":"is not allowed"}]');
    assert.deepEqual(JSON.parse(text as string), problems);
    assert.deepEqual(s.metadata.get(PROBLEMS_OMITTED_METADATA_KEY), []);
    assert.deepEqual(toGrpcStatus(new ServiceError('NOT_FOUND', 'x')).metadata.get(PROBLEMS_METADATA_KEY), []);
    assert.deepEqual(toGrpcStatus(new ServiceError('TIMEOUT', 'x', { timeout_ms: 5 })).metadata.get(PROBLEMS_METADATA_KEY), []);
  });
  it('svc-problems keeps the first problems that fit its bound; svc-problems-omitted counts the rest', () => {
    const problems = Array.from({ length: 5 }, (_, i) => ({ path: `f${i}`, message: 'x'.repeat(10) }));
    const one = JSON.stringify(problems[0]).length;
    assert.deepEqual(problemsMetadataText(problems, 2 + one * 2 + 1), { text: JSON.stringify(problems.slice(0, 2)), omitted: 3 });
    assert.deepEqual(problemsMetadataText(problems, 2 + one * 5 + 4), { text: JSON.stringify(problems), omitted: 0 });
    assert.deepEqual(problemsMetadataText(problems, 10), { text: '[]', omitted: 5 });
    assert.deepEqual(problemsMetadataText([]), { text: '[]', omitted: 0 });
    const many = Array.from({ length: 1000 }, (_, i) => ({ path: `field_${i}`, message: 'is not allowed (additionalProperties is false)' }));
    const s = toGrpcStatus(new ServiceError('INPUT_INVALID', 'm', { problems: many }));
    const text = s.metadata.get(PROBLEMS_METADATA_KEY)[0] as string;
    assert.ok(text.length <= 4096 && text.length > 4000, String(text.length));
    const kept = (JSON.parse(text) as unknown[]).length;
    assert.deepEqual(s.metadata.get(PROBLEMS_OMITTED_METADATA_KEY), [String(1000 - kept)]);
    // Control characters and DEL are escaped too: the value stays legal metadata.
    const odd = problemsMetadataText([{ path: 'a\u007fb\n', message: '\ud83d\ude00' }]).text;
    assert.match(odd, /^[\x20-\x7e]+$/);
    assert.deepEqual(JSON.parse(odd), [{ path: 'a\u007fb\n', message: '\ud83d\ude00' }]);
  });
  it('anything that is not a ServiceError is INTERNAL', () => {
    const s = toGrpcStatus(new TypeError('boom'));
    assert.equal(s.code, status.INTERNAL);
    assert.match(s.details, /boom/);
  });
});

describe('handlers over a fake façade', () => {
  const seen: CallContext[] = [];
  const fake = {
    execute(ctx: CallContext, name: string, input: unknown, trace: boolean) {
      seen.push(ctx);
      if (name === 'reader') throw new ServiceError('READ_ONLY', 'read_only');
      if (name === 'bug') throw new Error('unexpected');
      if (name === 'wrapped') throw toServiceError(new RangeError('Invalid string length'));
      if (name === 'big') return { code: 'C', message: '', output: { s: 'x'.repeat(5000) }, duration_us: 0 };
      return { code: 'C', message: JSON.stringify(input), output: {}, duration_us: trace ? 1 : 0 };
    },
  } as unknown as RuleServiceApi;

  function callExecute(multiTenancy: boolean, request: object, peer: string, md: Record<string, string> = {}, maxResponseBytes = 4000) {
    const errors: unknown[] = [];
    const handlers = buildGrpcHandlers(fake, { multiTenancy, maxResponseBytes, logger: { error: (o) => errors.push(o) } });
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(md)) metadata.set(k, v);
    const call = { request, metadata, getPeer: () => peer };
    return new Promise<{ err: any; res: any; errors: unknown[] }>((resolve) => {
      (handlers['Execute'] as Function)(call, (err: any, res: any) => resolve({ err, res, errors }));
    });
  }

  it('passes tenant, source IP and transport grpc', async () => {
    const { res } = await callExecute(true, { name: 'x', input_json: '{"a":1}', trace: true }, '10.0.0.7:5050', { 'x-tenant-id': 'acme' });
    assert.equal(res.message, '{"a":1}');
    assert.equal(res.duration_us, 1);
    const ctx = seen.at(-1)!;
    assert.deepEqual({ tenant: ctx.tenant, sourceIp: ctx.sourceIp, transport: ctx.transport }, { tenant: 'acme', sourceIp: '10.0.0.7', transport: 'grpc' });
  });
  it('ignores x-tenant-id without multi-tenancy', async () => {
    await callExecute(false, { name: 'x', input_json: '{}', trace: false }, '127.0.0.1:1', { 'x-tenant-id': 'acme' });
    assert.equal(seen.at(-1)!.tenant, 'default');
  });
  it('READ_ONLY from the façade is FAILED_PRECONDITION', async () => {
    const { err } = await callExecute(false, { name: 'reader', input_json: '{}', trace: false }, 'unknown');
    assert.equal(err.code, status.FAILED_PRECONDITION);
    assert.equal(err.details, 'read_only');
  });
  it('an unexpected error is INTERNAL and is logged', async () => {
    const { err, errors } = await callExecute(false, { name: 'bug', input_json: '{}', trace: false }, 'unknown');
    assert.equal(err.code, status.INTERNAL);
    assert.equal(errors.length, 1);
  });
  it('an unexpected error wrapped by the façade is logged with its stack; the caller gets no stack', async () => {
    const { err, errors } = await callExecute(false, { name: 'wrapped', input_json: '{}', trace: false }, 'unknown');
    assert.equal(err.code, status.INTERNAL);
    assert.equal(err.details, 'internal error: Invalid string length');
    assert.equal(errors.length, 1);
    const line = errors[0] as { err: string; stack: string };
    assert.equal(line.err, 'Invalid string length');
    assert.match(line.stack, /^RangeError: Invalid string length\n\s+at /);
  });
  it('an answer over --max-response-bytes is RESOURCE_EXHAUSTED LIMIT_EXCEEDED, not logged', async () => {
    const { err, errors } = await callExecute(false, { name: 'big', input_json: '{}', trace: false }, 'unknown');
    assert.equal(err.code, status.RESOURCE_EXHAUSTED);
    assert.deepEqual(err.metadata.get(ERROR_CODE_METADATA_KEY), ['LIMIT_EXCEEDED']);
    assert.match(err.details, /exceeds --max-response-bytes \(4000\)/);
    assert.equal(errors.length, 0);
    const { res } = await callExecute(false, { name: 'big', input_json: '{}', trace: false }, 'unknown', {}, 10_000);
    assert.equal(res.output_json.length, 5008);
  });
  it('bad input_json never reaches the façade', async () => {
    const before = seen.length;
    const { err } = await callExecute(false, { name: 'x', input_json: 'nope', trace: false }, 'unknown');
    assert.equal(err.code, status.INVALID_ARGUMENT);
    assert.equal(seen.length, before);
  });
});

describe('now on Execute, BatchExecute and Eval (EXTENSIONS.md 3 "Dates and time")', () => {
  const seenNow: string[] = [];
  const fake = {
    execute(_ctx: CallContext, _name: string, _input: unknown, _trace: boolean) {
      seenNow.push(nowFn());
      return { code: 'C', message: '', output: {}, duration_us: 0 };
    },
    executeBatch() {
      seenNow.push(nowFn());
      return { results: [], summary: { total: 0, success: 0, failed: 0, total_duration_us: 0 } };
    },
    evaluate() {
      seenNow.push(nowFn());
      return { result: null, parsed: '' };
    },
  } as unknown as RuleServiceApi;
  const handlers = buildGrpcHandlers(fake, { multiTenancy: false });
  const call = (method: string, request: object) =>
    new Promise<{ err: any; res: any }>((resolve) => {
      (handlers[method] as Function)({ request, metadata: new Metadata(), getPeer: () => 'unknown' }, (err: any, res: any) => resolve({ err, res }));
    });
  const requests: Record<string, object> = {
    Execute: { name: 'x', input_json: '{}', trace: false },
    BatchExecute: { name: 'x', inputs_json: ['{}'], trace: false },
    Eval: { expression: '1', context_json: '' },
  };
  for (const [method, request] of Object.entries(requests)) {
    it(`${method}: the façade runs at the canonical \`now\`, which is cleared afterwards; absent: the clock`, async () => {
      const { err } = await call(method, { ...request, now: '2026-11-24T01:00:00+01:00' });
      assert.equal(err, null);
      assert.equal(seenNow.at(-1), '2026-11-24T00:00:00.000Z');
      assert.equal(nowState.request, null);
      await call(method, request);
      assert.ok(Math.abs(Date.parse(seenNow.at(-1)!) - Date.now()) < 5000, seenNow.at(-1));
    });
    it(`${method}: an invalid \`now\` is BAD_REQUEST and never reaches the façade`, async () => {
      const before = seenNow.length;
      const { err } = await call(method, { ...request, now: '2026-13-01' });
      assert.equal(err.code, status.INVALID_ARGUMENT);
      assert.equal(err.details, INVALID_NOW_MESSAGE);
      assert.deepEqual(err.metadata.get(ERROR_CODE_METADATA_KEY), ['BAD_REQUEST']);
      assert.equal(seenNow.length, before);
      assert.equal(nowState.request, null);
    });
  }
});

describe('Eval context_json (docs/decisions.md "gRPC context_json")', () => {
  const contexts: unknown[] = [];
  const fake = {
    evaluate(_ctx: CallContext, expression: string, context: unknown) {
      contexts.push(context);
      return { result: expression.length, parsed: expression };
    },
  } as unknown as RuleServiceApi;
  const handlers = buildGrpcHandlers(fake, { multiTenancy: false, maxResponseBytes: 100 });
  const callEval = (request: object) =>
    new Promise<{ err: any; res: any }>((resolve) => {
      (handlers['Eval'] as Function)({ request, metadata: new Metadata(), getPeer: () => 'unknown' }, (err: any, res: any) => resolve({ err, res }));
    });
  it('empty or blank context_json is a missing context ({}); "null" is passed on as null, which the façade reads as {} like HTTP', async () => {
    for (const text of ['', ' ', '\n\t ']) {
      const { err } = await callEval({ expression: '1', context_json: text });
      assert.equal(err, null);
      assert.deepEqual(contexts.at(-1), {});
    }
    const { err } = await callEval({ expression: '1', context_json: 'null' });
    assert.equal(err, null);
    assert.equal(contexts.at(-1), null);
  });
  it("a non-object context_json is the façade's BAD_REQUEST; a malformed one never reaches it", async () => {
    const before = contexts.length;
    const { err } = await callEval({ expression: '1', context_json: '{' });
    assert.equal(err.code, status.INVALID_ARGUMENT);
    assert.equal(contexts.length, before);
  });
  it('an eval answer over the bound is LIMIT_EXCEEDED', async () => {
    const { err } = await callEval({ expression: 'x'.repeat(200), context_json: '' });
    assert.equal(err.code, status.RESOURCE_EXHAUSTED);
  });
});

describe('call context helpers', () => {
  it('sourceIpOf strips the port, keeps IPv6, and gives null on a Unix socket', () => {
    assert.equal(sourceIpOf('127.0.0.1:40000'), '127.0.0.1');
    assert.equal(sourceIpOf('::1:40000'), '::1');
    assert.equal(sourceIpOf('::ffff:10.1.2.3:8'), '::ffff:10.1.2.3');
    assert.equal(sourceIpOf('[::1]:40000'), '::1');
    assert.equal(sourceIpOf('unknown'), null);
  });
  it('tenantOf reads x-tenant-id, default when absent or empty', () => {
    const md = new Metadata();
    assert.equal(tenantOf(md), 'default');
    md.set('x-tenant-id', '');
    assert.equal(tenantOf(md), 'default');
    md.set('x-tenant-id', 't1');
    assert.equal(tenantOf(md), 't1');
  });
});

describe('proto/rules.proto matches SPEC.md "gRPC interface"', () => {
  const pkg = loadRulesPackage() as Record<string, any>;
  const fields = (msg: string) =>
    Object.fromEntries(
      (pkg[`rules.${msg}`].type.field as any[]).map((f) => [
        f.number,
        `${f.name} ${f.label === 'LABEL_REPEATED' ? 'repeated ' : ''}${f.typeName ? f.typeName : f.type.replace('TYPE_', '').toLowerCase()}`,
      ]),
    );
  const SPEC: Record<string, Record<number, string>> = {
    ExecuteRequest: { 1: 'name string', 2: 'input_json string', 3: 'trace bool' },
    ExecuteResponse: { 1: 'code string', 2: 'message string', 3: 'output_json string', 4: 'duration_us uint64', 5: 'trace TraceInfo' },
    TraceInfo: { 1: 'path string', 2: 'steps repeated StepInfo' },
    StepInfo: { 1: 'id string', 2: 'name string', 3: 'duration_us uint64' },
    ListRuleSetsRequest: {},
    ListRuleSetsResponse: { 1: 'rulesets repeated RuleSetInfo' },
    RuleSetInfo: { 1: 'name string', 2: 'version string', 3: 'description string' },
    GetRuleSetRequest: { 1: 'name string' },
    GetRuleSetResponse: { 1: 'ruleset_json string' },
    HealthRequest: {},
    HealthResponse: { 1: 'status string', 2: 'version string', 3: 'uptime_seconds uint64', 4: 'rules_count int32' },
    EvalRequest: { 1: 'expression string', 2: 'context_json string' },
    EvalResponse: { 1: 'result_json string', 2: 'parsed string' },
  };
  // Additions to spec'd messages (issue 19): new field numbers above the spec'd ones, which stay
  // exactly as SPEC.md gives them (wire compatibility with clients built from the spec).
  const ADDITIONS: Record<string, Record<number, string>> = {
    ExecuteRequest: { 4: 'now string' },
    StepInfo: { 4: 'row uint32', 5: 'row_null bool', 6: 'rows TableRows' },
    EvalRequest: { 3: 'now string' },
  };
  for (const [msg, want] of Object.entries(SPEC)) {
    it(msg, () => assert.deepEqual(fields(msg), { ...want, ...ADDITIONS[msg] }));
  }
  it('additions take numbers above every spec field; `now` has presence, the table fields are one oneof', () => {
    for (const [msg, added] of Object.entries(ADDITIONS)) {
      const top = Math.max(...Object.keys(SPEC[msg]!).map(Number));
      for (const n of Object.keys(added)) assert.ok(Number(n) > top, `${msg} field ${n}`);
    }
    const oneofs = (msg: string) => (pkg[`rules.${msg}`].type.oneofDecl as any[]).map((o) => o.name);
    const svc = pkg[SERVICE_NAME];
    for (const [msg, method] of [
      ['ExecuteRequest', 'Execute'],
      ['EvalRequest', 'Eval'],
      ['BatchExecuteRequest', 'BatchExecute'],
    ] as const) {
      // `optional` (proto3 presence: a synthetic oneof): an unset `now` decodes as undefined, a set "" as "".
      assert.deepEqual(oneofs(msg), ['_now'], msg);
      const m = svc[method];
      assert.equal(m.requestDeserialize(m.requestSerialize({})).now, undefined, msg);
      assert.equal(m.requestDeserialize(m.requestSerialize({ now: '' })).now, '', msg);
    }
    assert.deepEqual(oneofs('StepInfo'), ['table_match']);
    assert.deepEqual(fields('TableRows'), { 1: 'indexes repeated uint32' });
    assert.deepEqual(fields('BatchExecuteRequest'), { 1: 'name string', 2: 'inputs_json repeated string', 3: 'trace bool', 4: 'now string' });
    assert.deepEqual(fields('BatchItemError'), { 1: 'error string', 2: 'code string', 3: 'status int32', 4: 'problems_json string' });
  });
  it('service rules.RuleService has the five spec methods plus the additions, all unary', () => {
    const svc = pkg[SERVICE_NAME];
    for (const m of ['Execute', 'ListRuleSets', 'GetRuleSet', 'Health', 'Eval', 'BatchExecute', 'PutRuleset', 'DraftExecute', 'PutData', 'CreateTenant']) {
      assert.ok(Object.hasOwn(svc, m), m);
    }
    for (const m of Object.values<any>(svc)) assert.equal(m.requestStream || m.responseStream, false);
    assert.equal(svc.Execute.path, '/rules.RuleService/Execute');
    assert.equal(svc.Execute.requestType.type.name, 'ExecuteRequest');
    assert.equal(svc.ListRuleSets.responseType.type.name, 'ListRuleSetsResponse');
  });
});
