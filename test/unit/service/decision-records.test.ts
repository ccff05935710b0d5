/**
 * Decision records on the façade's execution path (src/service/decision-recorder.ts and the
 * runner): a recorded execution hands the sink its entry (ruleset, version, input, code, output,
 * visited path, principal) while the answer stays the untraced one unless a trace was asked;
 * sampling; batch ids `B.i` with `decisionId()` naming the batch; failed executions recorded
 * with their catalog code; without the log, no `decisionId` at all.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { silentLogger } from '../../../src/observe/index.js';
import { NO_METRICS, type DecisionEntry } from '../../../src/service/ports.js';
import { RuleService } from '../../../src/service/rule-service.js';
import type { CallContext } from '../../../src/service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { MemoryStore } from '../../../src/store/index.js';

const AGE = {
  config: { name: 'age', version: '3.0.0', entry_step: 'check' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'adult' }], default_next: 'minor' },
    adult: { type: 'terminal', result: { code: 'ADULT' }, output: { years: 'user.age' } },
    minor: { type: 'terminal', result: { code: 'MINOR' } },
  },
};
const STRICT = {
  config: { name: 'strict', entry_step: 'check', field_missing: 'strict' },
  steps: {
    check: { type: 'decision', branches: [{ condition: 'user.age >= 18', next_step: 'ok' }], default_next: 'ok' },
    ok: { type: 'terminal', result: { code: 'OK' } },
  },
};

const ctx: CallContext = { tenant: 'default', sourceIp: null, transport: 'http', principal: 'key-7' };

async function makeService(decisions: { sampleRate: number; random?: () => number } | null) {
  const entries: DecisionEntry[] = [];
  const service = new RuleService(
    {
      version: 't',
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 100,
      maxBatchSize: 10,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    {
      store: new MemoryStore(),
      metrics: NO_METRICS,
      audit: { write: () => {} },
      sampler: { rate: 0, shouldSample: () => false },
      logger: silentLogger(),
      clock: () => performance.now(),
      now: () => 1_700_000_000_000,
      ...(decisions
        ? { decisions: { sink: { push: (e: DecisionEntry) => void entries.push(e) }, idPrefix: 'px-', now: () => 1_700_000_000_000, ...decisions } }
        : {}),
    },
  );
  await service.putRuleset(ctx, AGE);
  await service.putRuleset(ctx, STRICT);
  return { service, entries };
}

test('a recorded execution hands over its entry, with the visited path, and answers without a trace', async () => {
  const { service, entries } = await makeService({ sampleRate: 100 });
  const input = { user: { age: 30 } };
  const result = service.execute(ctx, 'age', input, false);
  assert.deepEqual(Object.keys(result), ['code', 'message', 'output', 'duration_us']);
  assert.equal(service.decisionId?.(), 'px-0');
  assert.equal(entries.length, 1);
  const e = entries[0]!;
  assert.equal(e.id, 'px-0');
  assert.equal(e.at, 1_700_000_000_000);
  assert.deepEqual(
    [e.tenant, e.ruleset, e.version, e.code, e.path, e.principal, e.error],
    ['default', 'age', '3.0.0', 'ADULT', 'check -> adult', 'key-7', null],
  );
  assert.equal(e.input, input, 'the entry holds the input itself (the writer masks a copy)');
  assert.deepEqual(e.output, { years: 30 });
  assert.equal(e.durationUs, result.duration_us);
});

test('a recorded execution asked for its trace answers it; ids count up', async () => {
  const { service, entries } = await makeService({ sampleRate: 100 });
  service.execute(ctx, 'age', { user: { age: 1 } }, false);
  const traced = service.execute(ctx, 'age', { user: { age: 1 } }, true);
  assert.equal(traced.trace?.path, 'check -> minor');
  assert.deepEqual(
    traced.trace?.steps.map((st) => st.id),
    ['check', 'minor'],
    'the asked-for trace keeps its steps (not the path-only trace of a record)',
  );
  assert.equal(service.decisionId?.(), 'px-1');
  assert.deepEqual(
    entries.map((e) => [e.id, e.path]),
    [
      ['px-0', 'check -> minor'],
      ['px-1', 'check -> minor'],
    ],
  );
});

test('sampling: rate 0 records nothing and the id is null; a partial rate follows the random source', async () => {
  const none = await makeService({ sampleRate: 0 });
  none.service.execute(ctx, 'age', { user: { age: 30 } }, false);
  assert.equal(none.entries.length, 0);
  assert.equal(none.service.decisionId?.(), null);

  const draws = [0.1, 0.9, 0.2];
  const some = await makeService({ sampleRate: 50, random: () => draws.shift() ?? 0.99 });
  for (let i = 0; i < 3; i++) some.service.execute(ctx, 'age', { user: { age: i } }, false);
  assert.deepEqual(
    some.entries.map((e) => (e.input as { user: { age: number } }).user.age),
    [0, 2],
  );
  assert.equal(some.service.decisionId?.(), 'px-1', 'the last execution was recorded');
  some.service.execute(ctx, 'age', { user: { age: 9 } }, false);
  assert.equal(some.service.decisionId?.(), null, 'an execution not recorded has no id');
});

test('a batch has one id B; its recorded items are B.i; items that are not objects are not recorded', async () => {
  const { service, entries } = await makeService({ sampleRate: 100 });
  const answer = service.executeBatch(ctx, 'age', [{ user: { age: 30 } }, 5, { user: { age: 2 } }], false);
  assert.equal(answer.summary.failed, 1);
  assert.ok(answer.results.every((r) => !('trace' in r)));
  assert.equal(service.decisionId?.(), 'px-0');
  assert.deepEqual(
    entries.map((e) => [e.id, e.code]),
    [
      ['px-0.0', 'ADULT'],
      ['px-0.2', 'MINOR'],
    ],
  );
  service.execute(ctx, 'age', { user: { age: 30 } }, false);
  assert.equal(service.decisionId?.(), 'px-1');
});

test('a failed execution is recorded with its catalog code and still throws', async () => {
  const { service, entries } = await makeService({ sampleRate: 100 });
  assert.throws(() => service.execute(ctx, 'strict', {}, false), { code: 'INTERNAL_ERROR' });
  assert.equal(entries.length, 1);
  assert.deepEqual(
    [entries[0]!.code, entries[0]!.output, entries[0]!.path, entries[0]!.durationUs, entries[0]!.error],
    [null, null, null, null, { code: 'INTERNAL_ERROR' }],
  );
});

test('without the decision log the façade has no decisionId', async () => {
  const { service } = await makeService(null);
  service.execute(ctx, 'age', { user: { age: 30 } }, false);
  assert.equal(service.decisionId, undefined);
});
