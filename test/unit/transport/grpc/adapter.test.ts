/**
 * The gRPC adapter without a network: JSON field decoding, message encoding, the status
 * mapping of every catalog code (FAILED_PRECONDITION for READ_ONLY cannot be reached over
 * gRPC, which has no write RPC, so it is checked here), the handlers over a fake façade
 * (CallContext: tenant, source IP, transport), and the proto as SPEC.md gives it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import { ERROR_CATALOG, ServiceError, toServiceError, type ErrorCode } from '../../../../src/service/errors.js';
import type { CallContext, RuleServiceApi } from '../../../../src/service/types.js';
import { encodeBatch, encodeExecuteResult, encodeList, parseJsonField } from '../../../../src/transport/grpc/codec.js';
import { buildGrpcHandlers, sourceIpOf, tenantOf } from '../../../../src/transport/grpc/handlers.js';
import { loadRulesPackage, SERVICE_NAME } from '../../../../src/transport/grpc/proto.js';
import { ERROR_CODE_METADATA_KEY, toGrpcStatus } from '../../../../src/transport/grpc/status.js';

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
  for (const [msg, want] of Object.entries(SPEC)) {
    it(msg, () => assert.deepEqual(fields(msg), want));
  }
  it('service rules.RuleService has the five spec methods plus BatchExecute, all unary', () => {
    const svc = pkg[SERVICE_NAME];
    assert.deepEqual(Object.keys(svc).sort(), ['BatchExecute', 'Eval', 'Execute', 'GetRuleSet', 'Health', 'ListRuleSets']);
    for (const m of Object.values<any>(svc)) assert.equal(m.requestStream || m.responseStream, false);
    assert.equal(svc.Execute.path, '/rules.RuleService/Execute');
    assert.equal(svc.Execute.requestType.type.name, 'ExecuteRequest');
    assert.equal(svc.ListRuleSets.responseType.type.name, 'ListRuleSetsResponse');
  });
});
