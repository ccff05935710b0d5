/**
 * The façade's observability hooks (metrics, audit, spans), with recording fakes for the ports: execution
 * spans through `ServiceTracer` (parent, ruleset, result code, step count, failures), the audit
 * line's `trace_id`/`span_id`, metrics unchanged on the traced path, compilation observed on the
 * sync path, and `debugRuleset`.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { ServiceError } from '../../../src/service/errors.js';
import type { ExecutionSpan, ServiceMetrics, ServiceTracer } from '../../../src/service/ports.js';
import { RuleService } from '../../../src/service/rule-service.js';
import type { CallContext } from '../../../src/service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { MemoryStore } from '../../../src/store/index.js';
import { silentLogger } from '../../../src/observe/index.js';

const AGE = {
  config: { name: 'age', version: '3.0.0', entry_step: 'check' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'tag' }], default_next: 'minor' },
    tag: { type: 'action', actions: [{ action: 'set_variable', name: 'x', value: '1 / user.zero' }], next_step: 'adult' },
    adult: { type: 'terminal', result: { code: 'ADULT' } },
    minor: { type: 'terminal', result: { code: 'MINOR' } },
  },
};

interface SpanRecord {
  parent: unknown;
  ruleset: string;
  version: string;
  tenant: string;
  ended?: { ok: true; code: string; steps: number } | { ok: false; code: string; message: string; steps: number };
}

/** A tracer that records every span. */
function recordingTracer(): ServiceTracer & { spans: SpanRecord[] } {
  const spans: SpanRecord[] = [];
  return {
    spans,
    startExecution(parent, ruleset, version, tenant): ExecutionSpan {
      const rec: SpanRecord = { parent, ruleset, version, tenant };
      spans.push(rec);
      const n = spans.length;
      return {
        traceId: `trace-${n}`,
        spanId: `span-${n}`,
        succeeded: (code, steps) => void (rec.ended = { ok: true, code, steps }),
        failed: (code, message, steps) => void (rec.ended = { ok: false, code, message, steps }),
      };
    },
  };
}

function recordingMetrics(): ServiceMetrics & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    recordExecution: (r, _s, ok, code) => void calls.push(`exec ${r} ${ok} ${code ?? ''}`.trim()),
    recordEval: () => {},
    observeCompilation: (r) => void calls.push(`compile ${r}`),
    activeInc: () => void calls.push('inc'),
    activeDec: () => void calls.push('dec'),
    forgetRuleset: () => {},
  };
}

async function makeService(tracer?: ServiceTracer) {
  const audit: Array<Record<string, unknown>> = [];
  const metrics = recordingMetrics();
  const service = new RuleService(
    {
      version: '0.0.0-test',
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 100,
      maxBatchSize: 10,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    {
      store: new MemoryStore(),
      metrics,
      audit: { write: (event, fields) => void audit.push({ event, ...fields }) },
      sampler: { rate: 100, shouldSample: () => true },
      logger: silentLogger(),
      clock: () => performance.now(),
      now: Date.now,
      ...(tracer ? { tracer } : {}),
    },
  );
  await service.putRuleset({ tenant: 'default', sourceIp: null, transport: 'internal' }, AGE);
  return { service, audit, metrics };
}

const PARENT = { opaque: 'request span context' };
const ctx: CallContext = { tenant: 'default', sourceIp: '192.0.2.1', transport: 'http', traceContext: PARENT };

test('an execution span is a child of the call context, with ruleset, version, tenant, code and step count', async () => {
  const tracer = recordingTracer();
  const { service } = await makeService(tracer);
  assert.equal(service.execute(ctx, 'age', { user: { age: 5 } }, false).code, 'MINOR');
  assert.equal(service.execute(ctx, 'age', { user: { age: 5 } }, true).code, 'MINOR');
  assert.deepEqual(tracer.spans, [
    { parent: PARENT, ruleset: 'age', version: '3.0.0', tenant: 'default', ended: { ok: true, code: 'MINOR', steps: 2 } },
    { parent: PARENT, ruleset: 'age', version: '3.0.0', tenant: 'default', ended: { ok: true, code: 'MINOR', steps: 2 } },
  ]);
});

test('a failed execution ends its span as failed with the catalog code and the steps so far, and still throws', async () => {
  const tracer = recordingTracer();
  const { service, metrics } = await makeService(tracer);
  metrics.calls.length = 0;
  assert.throws(
    () => service.execute(ctx, 'age', { user: { age: 30, zero: 0 } }, false),
    (err: unknown) => {
      assert.ok(err instanceof ServiceError);
      assert.equal(err.code, 'INTERNAL_ERROR');
      return true;
    },
  );
  const ended = tracer.spans[0]?.ended;
  assert.ok(ended && !ended.ok);
  assert.equal(ended.code, 'INTERNAL_ERROR');
  assert.match(ended.message, /division by zero|tag/);
  assert.equal(ended.steps, 2);
  assert.deepEqual(metrics.calls, ['inc', 'dec', 'exec age false']);
});

test('with a tracer the audit line names trace_id and span_id; metrics are recorded as without one', async () => {
  const { service, audit, metrics } = await makeService(recordingTracer());
  metrics.calls.length = 0;
  service.execute(ctx, 'age', { user: { age: 5 } }, false);
  const line = audit.find((l) => l['event'] === 'rule_executed');
  assert.deepEqual(line, {
    event: 'rule_executed',
    rule_name: 'age',
    duration_us: line?.['duration_us'],
    result: 'success',
    source_ip: '192.0.2.1',
    trace_id: 'trace-1',
    span_id: 'span-1',
  });
  assert.deepEqual(metrics.calls, ['inc', 'dec', 'exec age true MINOR']);
});

test('a batch makes one span per item, each under the same parent', async () => {
  const tracer = recordingTracer();
  const { service } = await makeService(tracer);
  const res = service.executeBatch(ctx, 'age', [{ user: { age: 1 } }, { user: { age: 2 } }, { user: { age: 3 } }], false);
  assert.equal(res.summary.success, 3);
  assert.equal(tracer.spans.length, 3);
  assert.ok(tracer.spans.every((s) => s.parent === PARENT && s.ended?.ok));
});

test('compilation is observed on the sync path (applyChange) as on API writes', async () => {
  const { service, metrics } = await makeService();
  assert.deepEqual(
    metrics.calls.filter((c) => c.startsWith('compile')),
    ['compile age'],
  );
  assert.equal(
    await service.applyChange({ kind: 'ruleset.put', tenant: 'default', doc: { ...AGE, config: { ...AGE.config, name: 'synced' } } }, 'sync', false),
    'applied',
  );
  assert.deepEqual(
    metrics.calls.filter((c) => c.startsWith('compile')),
    ['compile age', 'compile synced'],
  );
});

test('debugRuleset renders the conditions of a stored ruleset; an unknown name is NOT_FOUND', async () => {
  const { service } = await makeService();
  const view = service.debugRuleset(ctx, 'age');
  assert.equal(view.name, 'age');
  assert.equal(view.version, '3.0.0');
  assert.deepEqual(view.steps[0], {
    id: 'check',
    name: 'check',
    type: 'decision',
    branches: [{ condition: 'user.age >= 18', parsed: '(>= user.age 18)', next_step: 'tag' }],
    default_next: 'minor',
  });
  assert.deepEqual(view.steps[1], {
    id: 'tag',
    name: 'tag',
    type: 'action',
    actions: [{ action: 'set_variable', name: 'x', value: '1 / user.zero', parsed: '(/ 1 user.zero)' }],
    next_step: 'adult',
  });
  assert.throws(
    () => service.debugRuleset(ctx, 'nope'),
    (err: unknown) => err instanceof ServiceError && err.code === 'NOT_FOUND',
  );
});
