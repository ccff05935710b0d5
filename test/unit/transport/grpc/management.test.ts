/**
 * The management RPCs (src/transport/grpc/management.ts) over a fake façade, without a network:
 * what reaches the façade (the HTTP body built from the request's fields), what comes back (the
 * answer's JSON texts, bounded by --max-response-bytes), a rejected promise mapped through the
 * catalog, and the parts that may be absent (data, tenants, debug view) answering NOT_FOUND with
 * HTTP's messages. The same answers over a real server: test/integration/grpc-route-parity.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import { ServiceError } from '../../../../src/service/errors.js';
import type { RuleServiceApi } from '../../../../src/service/types.js';
import { buildGrpcHandlers, type GrpcHandlerOptions } from '../../../../src/transport/grpc/handlers.js';
import { optionalJsonField } from '../../../../src/transport/grpc/management.js';
import { toGrpcStatus } from '../../../../src/transport/grpc/status.js';

/** Every façade call: method name and arguments after the context. */
const calls: Array<[string, ...unknown[]]> = [];

const fake = new Proxy(
  {},
  {
    get:
      (_t, method: string) =>
      (_ctx: unknown, ...args: unknown[]) => {
        calls.push([method, ...args]);
        switch (method) {
          case 'putRuleset':
            return Promise.resolve({ status: 'created', name: 'x' });
          case 'deleteRuleset':
            return Promise.reject(new ServiceError('NOT_FOUND', "ruleset 'ghost' not found"));
          case 'analysis':
            return { warnings: [{ kind: 'w', message: 'm'.repeat(args[0] === 'big' ? 5000 : 1) }] };
          case 'testRuleset':
          case 'draftTest':
            return { passed: 1, failed: 0, results: [{ name: 't', passed: true }], coverage: { steps: 1 } };
          case 'draftFilter':
          case 'filter':
            return { filter: 'a = 1' };
          case 'diff':
            return Promise.resolve({ changes: [], behavior: null });
          case 'setAuditSampleRate':
            return { sample_rate: 1, previous: 2 };
          case 'putShadow':
            return Promise.resolve({ status: 'created', name: args[0], candidate_version: '2', sample_rate: 5, since: 'T', warnings: [{ kind: 'w' }] });
          case 'getShadow':
            return {
              name: args[0],
              live_version: '1',
              candidate_version: '2',
              sample_rate: 5,
              since: 'T',
              counted_by: 'instance',
              executed: 3,
              agreed: 1,
              disagreed: 2,
              errors: 0,
              dropped: 0,
              transitions: [{ from: 'A', to: 'B', count: 2 }],
              examples: [{ input: { x: 1 }, from: 'A', to: 'B', at: 'T' }],
            };
          case 'promoteShadow':
            return Promise.resolve({ status: 'promoted', name: args[0], from_version: '1', to_version: '2' });
          default:
            return {};
        }
      },
  },
) as RuleServiceApi;

function call(method: string, request: object, options: Partial<GrpcHandlerOptions> = {}): Promise<{ err: any; res: any }> {
  const handlers = buildGrpcHandlers(fake, { multiTenancy: false, maxResponseBytes: 4000, ...options });
  const c = { request, metadata: new Metadata(), getPeer: () => '127.0.0.1:1' };
  return new Promise((resolve) => (handlers[method] as Function)(c, (err: any, res: any) => resolve({ err, res })));
}

describe('optionalJsonField', () => {
  it('empty or blank text is an absent member; anything else is parsed like every JSON field', () => {
    assert.equal(optionalJsonField('x_json', ''), undefined);
    assert.equal(optionalJsonField('x_json', '  \n'), undefined);
    assert.deepEqual(optionalJsonField('x_json', '[1]'), [1]);
    assert.throws(
      () => optionalJsonField('x_json', '{'),
      (e: ServiceError) => e.code === 'BAD_REQUEST' && /^x_json: malformed JSON/.test(e.message),
    );
  });
});

describe('svc-failures', () => {
  it('TESTS_FAILED carries its failures as JSON text in svc-failures (bounded like svc-problems)', () => {
    const failures = [{ name: 'adult', expected: { code: 'A' }, actual: { code: 'B' } }];
    const st = toGrpcStatus(new ServiceError('TESTS_FAILED', '1 of 1 tests failed: adult; nothing was stored', { failures }));
    assert.equal(st.code, status.FAILED_PRECONDITION);
    assert.deepEqual(JSON.parse(String(st.metadata!.get('svc-failures')[0])), failures);
    assert.deepEqual(st.metadata!.get('svc-problems'), []);
    const many = Array.from({ length: 200 }, (_, i) => ({ name: `test number ${i}`, expected: { code: 'A' }, actual: { code: 'B' } }));
    const big = toGrpcStatus(new ServiceError('TESTS_FAILED', 'm', { failures: many }));
    const kept = JSON.parse(String(big.metadata!.get('svc-failures')[0])) as unknown[];
    assert.ok(String(big.metadata!.get('svc-failures')[0]).length <= 4096);
    assert.equal(kept.length + Number(big.metadata!.get('svc-failures-omitted')[0]), 200);
  });
});

describe('management RPCs over a fake façade', () => {
  it('PutRuleset: the parsed document and the signature fields as header signature; no warnings is ""', async () => {
    calls.length = 0;
    const { res } = await call('PutRuleset', { ruleset_json: '{"config":{}}', signature: 'sig', public_key: 'pk' });
    assert.deepEqual(calls[0], ['putRuleset', { config: {} }, { signature: 'sig', publicKey: 'pk' }]);
    assert.deepEqual(res, { status: 'created', name: 'x', warnings_json: '' });
    calls.length = 0;
    await call('PutRuleset', { ruleset_json: '{}' });
    assert.deepEqual(calls[0], ['putRuleset', {}, {}], 'unset signature fields are absent headers');
  });

  it('a rejected façade promise is its catalog status', async () => {
    const { err } = await call('DeleteRuleset', { name: 'ghost' });
    assert.equal(err.code, status.NOT_FOUND);
    assert.deepEqual(err.metadata.get('svc-error-code'), ['NOT_FOUND']);
    assert.equal(err.details, "ruleset 'ghost' not found");
  });

  it('JSON texts of an answer are bounded by --max-response-bytes (RESOURCE_EXHAUSTED LIMIT_EXCEEDED)', async () => {
    assert.equal((await call('GetAnalysis', { name: 'small' })).res.warnings_json, '[{"kind":"w","message":"m"}]');
    const { err } = await call('GetAnalysis', { name: 'big' });
    assert.equal(err.code, status.RESOURCE_EXHAUSTED);
    assert.deepEqual(err.metadata.get('svc-error-code'), ['LIMIT_EXCEEDED']);
  });

  it('request members: empty *_json fields are absent members of the HTTP body', async () => {
    calls.length = 0;
    await call('TestRuleset', { name: 'r', tests_json: '' });
    await call('TestRuleset', { name: 'r', tests_json: '[{"name":"t"}]' });
    await call('Diff', { name: 'r', from_json: '"current"', to_json: '' });
    await call('DraftTest', { ruleset_json: '{"a":1}', tests_json: '' });
    await call('DraftFilter', { ruleset_json: '{"a":1}', request_json: '{"target_results":["X"],"ruleset":"ignored"}' });
    assert.deepEqual(calls, [
      ['testRuleset', 'r', {}],
      ['testRuleset', 'r', { tests: [{ name: 't' }] }],
      ['diff', 'r', { from: 'current' }],
      ['draftTest', { ruleset: { a: 1 } }],
      ['draftFilter', { target_results: ['X'], ruleset: { a: 1 } }],
    ]);
  });

  it('DraftFilter: request_json that is not an object is BAD_REQUEST before the façade', async () => {
    calls.length = 0;
    const { err } = await call('DraftFilter', { ruleset_json: '{}', request_json: '[1]' });
    assert.equal(err.code, status.INVALID_ARGUMENT);
    assert.match(err.details, /request_json must be the JSON text of an object/);
    assert.equal(calls.length, 0);
  });

  it('SetAuditSampleRate: an unset rate reaches the façade as undefined (which refuses it, as HTTP)', async () => {
    calls.length = 0;
    await call('SetAuditSampleRate', {});
    await call('SetAuditSampleRate', { sample_rate: 0 });
    assert.deepEqual(calls, [
      ['setAuditSampleRate', undefined],
      ['setAuditSampleRate', 0],
    ]);
  });

  it('shadow RPCs: the HTTP body of PutShadow (unset fields are absent members), the answers with their JSON texts', async () => {
    calls.length = 0;
    const put = await call('PutShadow', { name: 'r', candidate_json: '{"a":1}', sample_rate: 5 });
    await call('PutShadow', { name: 'r', candidate_json: '' });
    assert.deepEqual(put.res, { status: 'created', name: 'r', candidate_version: '2', sample_rate: 5, since: 'T', warnings_json: '[{"kind":"w"}]' });
    const get = await call('GetShadow', { name: 'r' });
    assert.equal(get.res.examples_json, '[{"input":{"x":1},"from":"A","to":"B","at":"T"}]');
    assert.deepEqual(get.res.transitions, [{ from: 'A', to: 'B', count: 2 }]);
    assert.equal(get.res.disagreed, 2);
    assert.deepEqual((await call('PromoteShadow', { name: 'r' })).res, {
      status: 'promoted',
      name: 'r',
      from_version: '1',
      to_version: '2',
      warnings_json: '',
    });
    assert.deepEqual((await call('DeleteShadow', { name: 'r' })).res, {});
    assert.deepEqual(calls, [
      ['putShadow', 'r', { candidate: { a: 1 }, sample_rate: 5 }],
      ['putShadow', 'r', {}],
      ['getShadow', 'r'],
      ['promoteShadow', 'r'],
      ['deleteShadow', 'r'],
    ]);
  });

  it('absent parts answer NOT_FOUND with the messages of their HTTP routes', async () => {
    for (const [method, request, message] of [
      ['ListData', {}, 'reference data is not available on this server'],
      ['GetTenant', { id: 'a' }, 'multi-tenancy is disabled'],
      ['DebugRuleset', { name: 'r' }, 'the debug view is off (start the server with --debug-mode)'],
    ] as const) {
      const { err } = await call(method, request);
      assert.equal(err.code, status.NOT_FOUND, method);
      assert.equal(err.details, message, method);
    }
  });

  it('present parts are called: data, tenants and the debug view', async () => {
    const data = { list: () => [{ name: 'zips', bytes: 9, version: 'v' }], getText: () => '{"a":1}', put: async () => ({}), delete: async () => {} };
    const tenants = {
      list: () => [{ id: 'default' }],
      get: (id: string) => ({ id }),
      create: async () => ({}),
      update: async () => ({}),
      delete: async () => {},
    };
    const options = { data, tenants, debugRuleset: (_ctx: unknown, name: string) => ({ name }) } as unknown as Partial<GrpcHandlerOptions>;
    assert.deepEqual((await call('ListData', {}, options)).res, { datasets: [{ name: 'zips', bytes: 9, version: 'v' }] });
    assert.deepEqual((await call('GetData', { name: 'zips' }, options)).res, { data_json: '{"a":1}' });
    assert.deepEqual((await call('GetTenant', { id: 'acme' }, options)).res, { tenant_json: '{"id":"acme"}' });
    assert.deepEqual((await call('DebugRuleset', { name: 'r' }, options)).res, { debug_json: '{"name":"r"}' });
  });
});
