/**
 * observe/tracing.ts in-process, against the OTLP test receiver: the endpoint forms of
 * `--otlp-endpoint`, W3C `traceparent` handling (valid, malformed, not sampled) and the
 * execution span's attributes.
 */
import assert from 'node:assert/strict';
import { defaultTextMapGetter } from '@opentelemetry/api';
import { after, before, describe, it } from 'node:test';
import { Tracing, tracesUrl } from '../../../src/observe/tracing.js';
import { startOtlpReceiver, type OtlpReceiver } from '../../helpers/otlp/receiver.js';

describe('tracesUrl', () => {
  it('appends /v1/traces to a base URL and keeps a full traces URL', () => {
    assert.equal(tracesUrl('http://collector:4318'), 'http://collector:4318/v1/traces');
    assert.equal(tracesUrl('http://collector:4318/'), 'http://collector:4318/v1/traces');
    assert.equal(tracesUrl('https://gw.example/otlp'), 'https://gw.example/otlp/v1/traces');
    assert.equal(tracesUrl('https://gw.example/otlp/'), 'https://gw.example/otlp/v1/traces');
    assert.equal(tracesUrl('http://collector:4318/v1/traces'), 'http://collector:4318/v1/traces');
    assert.equal(tracesUrl('http://127.0.0.1:9/custom/v1/traces'), 'http://127.0.0.1:9/custom/v1/traces');
  });
});

describe('Tracing', () => {
  let receiver: OtlpReceiver;
  let tracing: Tracing;

  before(async () => {
    receiver = await startOtlpReceiver();
    tracing = new Tracing({ endpoint: receiver.url, serviceName: 'unit', serviceVersion: '1.2.3', instanceId: 'svc-unit' });
  });

  after(async () => {
    await tracing?.shutdown();
    await receiver?.close();
  });

  it('a malformed traceparent is ignored: the request span starts a new trace', async () => {
    const req = tracing.startServerSpan('GET /x', { traceparent: '00-not-a-trace-01' }, defaultTextMapGetter, { 'http.request.method': 'GET' });
    const exec = tracing.startExecution(req.context, 'r', '1.0.0', 'default');
    exec.succeeded('OK', 1);
    req.span.end();
    await tracing.flush();
    const server = receiver.spans.find((s) => s.name === 'GET /x')!;
    assert.equal(server.parentSpanId, '');
    assert.match(server.traceId, /^[0-9a-f]{32}$/);
    const execution = receiver.spans.find((s) => s.name === 'execute r')!;
    assert.equal(execution.traceId, server.traceId);
    assert.equal(execution.parentSpanId, server.spanId);
    assert.deepEqual(execution.attributes, {
      'svc.ruleset.name': 'r',
      'svc.ruleset.version': '1.0.0',
      'svc.tenant': 'default',
      'svc.execution.result': 'success',
      'svc.execution.result_code': 'OK',
      'svc.execution.step_count': 1,
    });
    assert.equal(execution.resource['service.name'], 'unit');
    assert.equal(execution.resource['service.version'], '1.2.3');
    assert.equal(execution.resource['service.instance.id'], 'svc-unit');
    assert.equal(exec.traceId, server.traceId);
    assert.equal(exec.spanId, execution.spanId);
  });

  it('a caller that did not sample (flags 00) gets no exported spans, but the ids still follow its trace', async () => {
    const traceId = 'ab'.repeat(16);
    const req = tracing.startServerSpan('GET /quiet', { traceparent: `00-${traceId}-${'cd'.repeat(8)}-00` }, defaultTextMapGetter, {});
    const exec = tracing.startExecution(req.context, 'quiet', '1.0.0', 'default');
    assert.equal(exec.traceId, traceId);
    exec.succeeded('OK', 1);
    req.span.end();
    await tracing.flush();
    assert.equal(
      receiver.spans.some((s) => s.traceId === traceId),
      false,
    );
  });

  it('an execution without a parent context is a root span', async () => {
    const exec = tracing.startExecution(undefined, 'orphan', '1.0.0', 't1');
    exec.failed('TIMEOUT', 'execution timed out after 5 ms', 16);
    await tracing.flush();
    const span = receiver.spans.find((s) => s.name === 'execute orphan')!;
    assert.equal(span.parentSpanId, '');
    assert.equal(span.status.code, 2);
    assert.equal(span.status.message, 'execution timed out after 5 ms');
    assert.equal(span.attributes['error.type'], 'TIMEOUT');
    assert.equal(span.attributes['svc.tenant'], 't1');
    assert.equal(span.attributes['svc.execution.step_count'], 16);
  });
});
