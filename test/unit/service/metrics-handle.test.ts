/**
 * The runner keeps each record's metrics handle on the record (bench/NOTES.md "Many rulesets"):
 * the exported series must stay what they were when the handle was looked up by name per
 * execution. Real `Metrics` (its /metrics text), real `RuleService` on a `MemoryStore`.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { Metrics, silentLogger } from '../../../src/observe/index.js';
import { RuleService } from '../../../src/service/rule-service.js';
import type { CallContext } from '../../../src/service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { MemoryStore } from '../../../src/store/index.js';
import type { RuleStore } from '../../../src/store/index.js';

const ctx: CallContext = { tenant: 'default', sourceIp: null, transport: 'internal' };

function ageRuleset(version: string, adultCode = 'ADULT') {
  return {
    config: { name: 'age', version, entry_step: 'check' },
    steps: {
      check: {
        type: 'decision',
        branches: [
          { condition: 'user.fail == true', next_step: 'boom' },
          { condition: 'user.age >= 18', next_step: 'adult' },
        ],
        default_next: 'minor',
      },
      boom: { type: 'action', actions: [{ action: 'set_variable', name: 'x', value: '1 / user.zero' }], next_step: 'adult' },
      adult: { type: 'terminal', result: { code: adultCode } },
      minor: { type: 'terminal', result: { code: 'MINOR' } },
    },
  };
}

function makeService(store: RuleStore, metrics: Metrics): RuleService {
  return new RuleService(
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
      store,
      metrics,
      audit: { write: () => {} },
      sampler: { rate: 0, shouldSample: () => false },
      logger: silentLogger(),
      clock: () => performance.now(),
      now: Date.now,
    },
  );
}

/** The value of one sample line of the /metrics text (undefined when absent). */
async function sample(metrics: Metrics, line: string): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

test('executions, failures and terminal codes are exported per ruleset, across an update', async () => {
  const metrics = new Metrics({ version: 't' });
  const service = makeService(new MemoryStore(), metrics);
  await service.putRuleset(ctx, ageRuleset('1.0.0'));
  service.execute(ctx, 'age', { user: { age: 30 } }, false);
  service.execute(ctx, 'age', { user: { age: 3 } }, false);
  service.execute(ctx, 'age', { user: { age: 40 } }, true);
  // An update is a new record: its executions go on in the same series.
  await service.putRuleset(ctx, ageRuleset('1.1.0'));
  service.execute(ctx, 'age', { user: { age: 50 } }, false);
  assert.equal(await sample(metrics, 'svc_executions_total{ruleset="age",result="success"}'), 4);
  assert.equal(await sample(metrics, 'svc_terminal_results_total{ruleset="age",code="ADULT"}'), 3);
  assert.equal(await sample(metrics, 'svc_terminal_results_total{ruleset="age",code="MINOR"}'), 1);
  assert.equal(await sample(metrics, 'svc_execution_duration_seconds_count{ruleset="age"}'), 4);
  // A division by zero fails the execution: counted as an error, no terminal code.
  assert.throws(() => service.execute(ctx, 'age', { user: { fail: true, zero: 0 } }, false));
  assert.equal(await sample(metrics, 'svc_executions_total{ruleset="age",result="error"}'), 1);
});

test('a deleted then re-created ruleset is counted again in the exported series', async () => {
  const metrics = new Metrics({ version: 't' });
  const service = makeService(new MemoryStore(), metrics);
  await service.putRuleset(ctx, ageRuleset('1.0.0'));
  service.execute(ctx, 'age', { user: { age: 30 } }, false);
  await service.deleteRuleset(ctx, 'age');
  assert.equal(await sample(metrics, 'svc_executions_total{ruleset="age",result="success"}'), undefined);
  await service.putRuleset(ctx, ageRuleset('2.0.0', 'GROWN'));
  service.execute(ctx, 'age', { user: { age: 30 } }, false);
  service.execute(ctx, 'age', { user: { age: 31 } }, false);
  assert.equal(await sample(metrics, 'svc_executions_total{ruleset="age",result="success"}'), 2);
  assert.equal(await sample(metrics, 'svc_terminal_results_total{ruleset="age",code="GROWN"}'), 2);
  assert.equal(await sample(metrics, 'svc_terminal_results_total{ruleset="age",code="ADULT"}'), undefined);
});

test('one stored record executed by two services counts in each service own metrics', async () => {
  const store = new MemoryStore();
  const first = new Metrics({ version: 't' });
  const second = new Metrics({ version: 't' });
  const a = makeService(store, first);
  const b = makeService(store, second);
  await a.putRuleset(ctx, ageRuleset('1.0.0'));
  a.execute(ctx, 'age', { user: { age: 30 } }, false);
  b.execute(ctx, 'age', { user: { age: 30 } }, false);
  b.execute(ctx, 'age', { user: { age: 30 } }, false);
  a.execute(ctx, 'age', { user: { age: 30 } }, false);
  assert.equal(await sample(first, 'svc_executions_total{ruleset="age",result="success"}'), 2);
  assert.equal(await sample(second, 'svc_executions_total{ruleset="age",result="success"}'), 2);
});
