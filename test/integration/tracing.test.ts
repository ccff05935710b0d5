/**
 * Trace export from the real built server to a real OTLP/HTTP receiver in this
 * process (test/helpers/otlp: node:http + protobufjs decoding of the protobuf bodies): span
 * names, attributes (ruleset, result code, step count), parent ids (caller `traceparent` →
 * request span → execution span) over HTTP and gRPC, the audit line's `trace_id`, the flush at
 * shutdown, and nothing sent without `--otlp-endpoint`.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type TestClient } from '../helpers/grpc-client.js';
import { waitFor } from './http-support.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp/receiver.js';
import { http, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';

const SERVER = 2;
const INTERNAL = 1;
const ERROR = 2;
const UNSET = 0;

/** decision → action → terminal: 3 steps on the ADULT path, 2 on MINOR. */
const AGE = {
  config: { name: 'age', version: '1.2.0', entry_step: 'check' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'grant' }], default_next: 'minor' },
    grant: { type: 'action', actions: [{ action: 'set_variable', name: 'tier', value: '"full"' }], next_step: 'adult' },
    adult: { type: 'terminal', result: { code: 'ADULT', message: 'grown up' }, output: { tier: '$tier' } },
    minor: { type: 'terminal', result: { code: 'MINOR', message: 'too young' } },
  },
};

/** Fails at its second step (division by zero). */
const BROKEN = {
  config: { name: 'broken', version: '1.0.0', entry_step: 'first' },
  steps: {
    first: { type: 'decision', branches: [{ condition: 'true', next_step: 'second' }] },
    second: { type: 'decision', branches: [{ condition: 'x / 0 > 1', next_step: 'done' }], default_next: 'done' },
    done: { type: 'terminal', result: { code: 'DONE' } },
  },
};

/** A fresh W3C caller context: trace id, parent span id and the `traceparent` value (sampled). */
function caller(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function rulesDir(): { path: string; remove: () => void } {
  const dir = tempDir('svc-trace-');
  writeFileSync(join(dir.path, 'age.json'), JSON.stringify(AGE));
  writeFileSync(join(dir.path, 'broken.json'), JSON.stringify(BROKEN));
  return dir;
}

const inTrace = (traceId: string) => (s: ReceivedSpan) => s.traceId === traceId;

describe('with --otlp-endpoint', () => {
  let receiver: OtlpReceiver;
  let server: ServerProcess;
  let client: TestClient;
  let dir: { path: string; remove: () => void };

  before(async () => {
    receiver = await startOtlpReceiver();
    dir = rulesDir();
    server = await startServer(
      ['--otlp-endpoint', receiver.url, '--service-name', 'svc-trace-test', '--rules-dir', dir.path, '--audit-sample-rate', '100'],
      // Export every 100 ms instead of every 5 s, so spans arrive while the server runs.
      { env: { OTEL_BSP_SCHEDULE_DELAY: '100' } },
    );
    client = connect(server.grpcAddress);
  });

  after(async () => {
    client?.close();
    await server?.stop();
    await receiver?.close();
    dir?.remove();
  });

  it('HTTP: the request span joins the caller trace; the execution span is its child with ruleset, code and step count', async () => {
    const c = caller();
    const res = await http(server.url, 'POST', '/api/v1/execute/age', { input: { user: { age: 30 } } }, { traceparent: c.traceparent });
    assert.equal(res.status, 200);
    assert.equal(res.body.code, 'ADULT');
    await receiver.waitFor((spans) => spans.filter(inTrace(c.traceId)).length >= 2, 'request and execution spans');

    const spans = receiver.spans.filter(inTrace(c.traceId));
    const request = spans.find((s) => s.kind === SERVER);
    const execution = spans.find((s) => s.kind === INTERNAL);
    assert.ok(request && execution, JSON.stringify(spans));
    assert.equal(request.name, 'POST /api/v1/execute/:name');
    assert.equal(request.parentSpanId, c.spanId, 'the request span is a child of the caller span');
    assert.equal(request.attributes['http.request.method'], 'POST');
    assert.equal(request.attributes['http.route'], '/api/v1/execute/:name');
    assert.equal(request.attributes['url.path'], '/api/v1/execute/age');
    assert.equal(request.attributes['http.response.status_code'], 200);
    assert.equal(request.status.code, UNSET);

    assert.equal(execution.name, 'execute age');
    assert.equal(execution.parentSpanId, request.spanId, 'the execution span is a child of the request span');
    assert.equal(execution.attributes['svc.ruleset.name'], 'age');
    assert.equal(execution.attributes['svc.ruleset.version'], '1.2.0');
    assert.equal(execution.attributes['svc.execution.result'], 'success');
    assert.equal(execution.attributes['svc.execution.result_code'], 'ADULT');
    assert.equal(execution.attributes['svc.execution.step_count'], 3);
    assert.equal(execution.status.code, UNSET);

    assert.equal(execution.resource['service.name'], 'svc-trace-test');
    assert.equal(typeof execution.resource['service.version'], 'string');
    assert.ok(
      receiver.contentTypes.every((t) => t === 'application/x-protobuf'),
      receiver.contentTypes.join(),
    );
    assert.deepEqual(receiver.rejected, []);
  });

  it('the sampled audit line of the execution carries its trace_id and span_id (execution trace requested)', async () => {
    const c = caller();
    const res = await http(server.url, 'POST', '/api/v1/execute/age', { input: { user: { age: 10 } }, trace: true }, { traceparent: c.traceparent });
    assert.equal(res.body.trace.steps.length, 2);
    await receiver.waitFor((spans) => spans.some((s) => inTrace(c.traceId)(s) && s.kind === INTERNAL), 'execution span');
    const execution = receiver.spans.find((s) => inTrace(c.traceId)(s) && s.kind === INTERNAL)!;
    assert.equal(execution.attributes['svc.execution.result_code'], 'MINOR');
    assert.equal(execution.attributes['svc.execution.step_count'], 2, 'also with the execution trace requested');
    await waitFor(() => server.stdout.some((l) => l['event'] === 'rule_executed' && l['trace_id'] === c.traceId), 'an audit line with the trace id');
    const line = server.stdout.find((l) => l['event'] === 'rule_executed' && l['trace_id'] === c.traceId)!;
    assert.equal(line['span_id'], execution.spanId);
    assert.equal(line['rule_name'], 'age');
  });

  it('HTTP: a failed execution marks both spans as errors; the step count says where it failed', async () => {
    const c = caller();
    const res = await http(server.url, 'POST', '/api/v1/execute/broken', { input: { x: 1 } }, { traceparent: c.traceparent });
    assert.equal(res.status, 500);
    await receiver.waitFor((spans) => spans.filter(inTrace(c.traceId)).length >= 2, 'request and execution spans');
    const spans = receiver.spans.filter(inTrace(c.traceId));
    const request = spans.find((s) => s.kind === SERVER)!;
    const execution = spans.find((s) => s.kind === INTERNAL)!;
    assert.equal(execution.parentSpanId, request.spanId);
    assert.equal(execution.attributes['svc.execution.result'], 'error');
    assert.equal(execution.attributes['error.type'], 'INTERNAL_ERROR');
    assert.equal(execution.attributes['svc.execution.step_count'], 2);
    assert.equal(execution.attributes['svc.execution.result_code'], undefined);
    assert.equal(execution.status.code, ERROR);
    assert.match(execution.status.message, /division by zero|second/);
    assert.equal(request.attributes['http.response.status_code'], 500);
    assert.equal(request.status.code, ERROR);
  });

  it('HTTP: without traceparent the request span starts a new trace; a batch makes one execution span per item', async () => {
    const res = await http(server.url, 'POST', '/api/v1/execute/age/batch', { inputs: [{ user: { age: 40 } }, { user: { age: 3 } }] });
    assert.equal(res.status, 200);
    await receiver.waitFor((spans) => spans.some((s) => s.name === 'POST /api/v1/execute/:name/batch'), 'the batch request span');
    const request = receiver.spans.find((s) => s.name === 'POST /api/v1/execute/:name/batch')!;
    assert.equal(request.parentSpanId, '', 'a root span');
    await receiver.waitFor((spans) => spans.filter((s) => s.parentSpanId === request.spanId).length === 2, 'two execution spans');
    const codes = receiver.spans.filter((s) => s.parentSpanId === request.spanId).map((s) => s.attributes['svc.execution.result_code']);
    assert.deepEqual(codes.sort(), ['ADULT', 'MINOR']);
  });

  it('HTTP: an unknown route is named by its method only; 404 is not a span error', async () => {
    const c = caller();
    const res = await http(server.url, 'GET', '/nowhere', undefined, { traceparent: c.traceparent });
    assert.equal(res.status, 404);
    await receiver.waitFor((spans) => spans.some(inTrace(c.traceId)), 'the request span');
    const request = receiver.spans.find(inTrace(c.traceId))!;
    assert.equal(request.name, 'GET');
    assert.equal(request.attributes['http.route'], undefined);
    assert.equal(request.attributes['http.response.status_code'], 404);
    assert.equal(request.status.code, UNSET);
  });

  it('gRPC: the call span joins the traceparent of the metadata; the execution span is its child', async () => {
    const c = caller();
    const res = await client.ok('Execute', { name: 'age', input_json: JSON.stringify({ user: { age: 50 } }) }, { traceparent: c.traceparent });
    assert.equal(res.code, 'ADULT');
    await receiver.waitFor((spans) => spans.filter(inTrace(c.traceId)).length >= 2, 'call and execution spans');
    const spans = receiver.spans.filter(inTrace(c.traceId));
    const call = spans.find((s) => s.kind === SERVER)!;
    const execution = spans.find((s) => s.kind === INTERNAL)!;
    assert.equal(call.name, 'rules.RuleService/Execute');
    assert.equal(call.parentSpanId, c.spanId);
    assert.equal(call.attributes['rpc.system'], 'grpc');
    assert.equal(call.attributes['rpc.service'], 'rules.RuleService');
    assert.equal(call.attributes['rpc.method'], 'Execute');
    assert.equal(call.attributes['rpc.grpc.status_code'], 0);
    assert.equal(call.status.code, UNSET);
    assert.equal(execution.parentSpanId, call.spanId);
    assert.equal(execution.attributes['svc.ruleset.name'], 'age');
    assert.equal(execution.attributes['svc.execution.result_code'], 'ADULT');
    assert.equal(execution.attributes['svc.execution.step_count'], 3);
  });

  it('gRPC: status codes are recorded; INTERNAL is a span error, NOT_FOUND is not', async () => {
    const missing = caller();
    const failing = caller();
    const notFound = await client.call('Execute', { name: 'nope', input_json: '{}' }, { traceparent: missing.traceparent });
    const internal = await client.call('Execute', { name: 'broken', input_json: '{"x": 1}' }, { traceparent: failing.traceparent });
    assert.equal(notFound.ok, false);
    assert.equal(internal.ok, false);
    await receiver.waitFor((spans) => spans.some(inTrace(missing.traceId)) && spans.filter(inTrace(failing.traceId)).length >= 2, 'spans of both calls');
    const nf = receiver.spans.find(inTrace(missing.traceId))!;
    assert.equal(nf.attributes['rpc.grpc.status_code'], 5);
    assert.equal(nf.status.code, UNSET);
    const spans = receiver.spans.filter(inTrace(failing.traceId));
    const call = spans.find((s) => s.kind === SERVER)!;
    const execution = spans.find((s) => s.kind === INTERNAL)!;
    assert.equal(call.attributes['rpc.grpc.status_code'], 13);
    assert.equal(call.status.code, ERROR);
    assert.equal(execution.parentSpanId, call.spanId);
    assert.equal(execution.status.code, ERROR);
  });
});

describe('shutdown', () => {
  it('spans still buffered are exported before the server exits', async () => {
    const receiver = await startOtlpReceiver();
    const dir = rulesDir();
    // A batch delay of 10 minutes: only the shutdown flush can deliver these spans.
    const server = await startServer(['--otlp-endpoint', `${receiver.url}/v1/traces`, '--rules-dir', dir.path, '--disable-grpc'], {
      env: { OTEL_BSP_SCHEDULE_DELAY: '600000' },
    });
    try {
      const c = caller();
      const res = await http(server.url, 'POST', '/api/v1/execute/age', { input: { user: { age: 30 } } }, { traceparent: c.traceparent });
      assert.equal(res.status, 200);
      assert.equal(receiver.exports(), 0, 'nothing exported yet');
      assert.equal(await server.stop('SIGTERM'), 0);
      const spans = receiver.spans.filter(inTrace(c.traceId));
      assert.deepEqual(spans.map((s) => s.name).sort(), ['POST /api/v1/execute/:name', 'execute age']);
      assert.equal(spans[0]!.resource['service.name'], 'svc-server', 'the default service name');
    } finally {
      await server.stop('SIGKILL');
      await receiver.close();
      dir.remove();
    }
  });
});

describe('without --otlp-endpoint', () => {
  it('sends nothing, even with the standard OTEL_EXPORTER_OTLP_* variables pointing at a receiver', async () => {
    const receiver = await startOtlpReceiver();
    const dir = rulesDir();
    const server = await startServer(['--rules-dir', dir.path, '--audit-sample-rate', '100'], {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
    });
    const client = connect(server.grpcAddress);
    try {
      const c = caller();
      assert.equal((await http(server.url, 'POST', '/api/v1/execute/age', { input: { user: { age: 30 } } }, { traceparent: c.traceparent })).status, 200);
      assert.equal((await client.ok('Execute', { name: 'age', input_json: '{"user": {"age": 1}}' }, { traceparent: c.traceparent })).code, 'MINOR');
      await waitFor(() => server.stdout.filter((l) => l['event'] === 'rule_executed').length === 2, 'two rule_executed audit lines');
      client.close();
      assert.equal(await server.stop('SIGTERM'), 0);
      assert.equal(receiver.exports(), 0);
      assert.deepEqual(receiver.rejected, []);
      assert.equal(
        server.logs.some((l) => l['msg'] === 'trace export on'),
        false,
      );
      const executed = server.stdout.filter((l) => l['event'] === 'rule_executed');
      assert.equal(executed.length, 2);
      assert.ok(
        executed.every((l) => !('trace_id' in l) && !('span_id' in l)),
        'no trace fields in audit lines',
      );
    } finally {
      client.close();
      await server.stop('SIGKILL');
      await receiver.close();
      dir.remove();
    }
  });
});
