/**
 * Batch clock reuse (src/service/batch-clock.ts): a batch reads the clock once per
 * item (plus its start and end) instead of twice, each item's duration_us is the time from the
 * previous reading to its own end, and nothing carries over to a later single execution.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '../../../src/observe/index.js';
import { ReusableClock } from '../../../src/service/batch-clock.js';
import { NO_METRICS } from '../../../src/service/ports.js';
import { RuleService } from '../../../src/service/rule-service.js';
import type { CallContext } from '../../../src/service/types.js';
import { DISABLED_SIGNATURE_POLICY } from '../../../src/signing/index.js';
import { MemoryStore } from '../../../src/store/index.js';

const RULESET = {
  config: { name: 'b', version: '1', entry_step: 'd' },
  steps: {
    d: { type: 'decision', branches: [{ condition: 'x > 1', next_step: 'HI' }], default_next: 'LO' },
    HI: { type: 'terminal', result: { code: 'HI' } },
    LO: { type: 'terminal', result: { code: 'LO' } },
  },
};
const ctx: CallContext = { tenant: 'default', sourceIp: null, transport: 'internal' };

/** A fake clock: every read advances 1 ms and is counted. */
function fakeClock(): { read: () => number; reads: number } {
  const c = { reads: 0, read: () => ++c.reads };
  return c;
}

async function service(clock: () => number): Promise<RuleService> {
  const s = new RuleService(
    {
      version: 't',
      role: 'standalone',
      writerAddr: null,
      executionTimeoutMs: 5000,
      maxSteps: 100,
      maxBatchSize: 100,
      signature: { ...DISABLED_SIGNATURE_POLICY },
    },
    {
      store: new MemoryStore(),
      metrics: NO_METRICS,
      audit: { write: () => {} },
      sampler: { rate: 0, shouldSample: () => false },
      logger: silentLogger(),
      clock,
      now: Date.now,
    },
  );
  await s.putRuleset(ctx, RULESET);
  return s;
}

test('ReusableClock returns the previous reading exactly once after reuseNext()', () => {
  const c = fakeClock();
  const clock = new ReusableClock(c.read);
  assert.equal(clock.read(), 1);
  clock.reuseNext();
  assert.equal(clock.read(), 1);
  assert.equal(clock.read(), 2);
  clock.reuseNext();
  clock.cancel();
  assert.equal(clock.read(), 3);
});

test('a batch of N reads the clock N + 2 times; each item lasts from the previous reading to its end', async () => {
  const c = fakeClock();
  const s = await service(c.read);
  const before = c.reads;
  const out = s.executeBatch(ctx, 'b', [{ x: 2 }, { x: 0 }, 'bad', { x: 5 }], false);
  assert.equal(c.reads - before, 3 + 2, 'start, one per executed item, end');
  assert.deepEqual(
    out.results.map((r) => ('code' in r && 'duration_us' in r ? [r.code, r.duration_us] : r)),
    [['HI', 1000], ['LO', 1000], { error: 'inputs[2] must be a JSON object', code: 'BAD_REQUEST' }, ['HI', 1000]],
  );
  assert.equal(out.summary.total_duration_us, 4000);
});

test('a single execution after a batch reads its own start', async () => {
  const c = fakeClock();
  const s = await service(c.read);
  s.executeBatch(ctx, 'b', [{ x: 2 }], false);
  const before = c.reads;
  const r = s.execute(ctx, 'b', { x: 2 }, false);
  assert.equal(c.reads - before, 2);
  assert.equal(r.duration_us, 1000);
});
