/**
 * Shadow runs below the transports (EXTENSIONS.md 4 "Shadow runs", src/service/shadow-registry.ts,
 * src/store/shadow-*.ts): the sampling accumulator (exactly rate% over 100 calls), the deferred
 * drain (nothing runs before it), the bounded queue (drops counted), the example ring (the last
 * 20, oldest first), transitions, errors, a replaced or ended shadow discarding its queued runs,
 * the wire events ShadowPut / ShadowDeleted (subject, strict decoding, change mapping), dedup
 * keeping a shadow apart from its ruleset, and the façade applying synchronized shadows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRuleset } from '../../../src/ruleset/index.js';
import type { CompiledRuleset } from '../../../src/ruleset/compile.js';
import { ExecutionError, type ExecutionResult } from '../../../src/ruleset/result.js';
import { MAX_SHADOW_EXAMPLES, ShadowRegistry } from '../../../src/service/shadow-registry.js';
import { parseShadowValue, shadowRecord } from '../../../src/store/shadow-record.js';
import { EventDeduper } from '../../../src/sync/dedup.js';
import { EnvelopeError, decodeEnvelope, encodeEnvelope, eventSubject, shadowDeletedOf, shadowPutOf, type SyncEnvelope } from '../../../src/sync/events.js';
import { incomingChangeOf, wireEventOf } from '../../../src/sync/wire-changes.js';

const doc = (code: string) => ({ config: { name: 'r', entry_step: 't' }, steps: { t: { type: 'terminal', result: { code } } } });
const SINCE = '2026-01-01T00:00:00.000Z';

/** A registry whose candidate answers `answer(input)`, with a manual drain. */
function setup(answer: (input: any) => string, maxQueue?: number) {
  const deferred: Array<() => void> = [];
  const metric: string[] = [];
  const registry = new ShadowRegistry({
    runCandidate: (_tenant, _compiled, input): ExecutionResult => {
      const code = answer(input);
      if (code === 'THROW') throw new ExecutionError('TIMEOUT', 'too slow');
      return { code } as ExecutionResult;
    },
    record: (ruleset, agreement) => metric.push(`${ruleset}:${agreement}`),
    now: () => Date.parse(SINCE),
    defer: (fn) => deferred.push(fn),
    ...(maxQueue !== undefined ? { maxQueue } : {}),
  });
  const compiled: CompiledRuleset = compileRuleset(doc('NEW'));
  const drain = () => deferred.splice(0).forEach((fn) => fn());
  return { registry, compiled, drain, deferred, metric };
}

describe('ShadowRegistry', () => {
  it('keeps size at 0 without shadows and offers nothing then', () => {
    const { registry, deferred } = setup(() => 'X');
    assert.equal(registry.size, 0);
    registry.offer('default', 'r', {}, 'OLD');
    assert.equal(deferred.length, 0);
  });

  it('samples exactly rate% over 100 executions, spread evenly', () => {
    for (const rate of [1, 10, 33, 50, 100]) {
      const { registry, compiled, drain } = setup(() => 'OLD');
      registry.set(shadowRecord('default', 'r', doc('NEW'), rate, SINCE), compiled);
      for (let i = 0; i < 100; i++) registry.offer('default', 'r', { i }, 'OLD');
      drain();
      assert.equal(registry.get('default', 'r')!.counts().executed, rate, `rate ${rate}`);
    }
  });

  it('runs nothing before the deferred drain, one drain per burst', () => {
    let runs = 0;
    const { registry, compiled, drain, deferred } = setup(() => (runs++, 'OLD'));
    registry.set(shadowRecord('default', 'r', doc('NEW'), 100, SINCE), compiled);
    for (let i = 0; i < 5; i++) registry.offer('default', 'r', {}, 'OLD');
    assert.equal(runs, 0);
    assert.equal(deferred.length, 1);
    drain();
    assert.equal(runs, 5);
  });

  it('counts agreements, disagreements, errors and transitions; the metric per run', () => {
    const { registry, compiled, drain, metric } = setup((input) => input.out);
    registry.set(shadowRecord('default', 'r', doc('NEW'), 100, SINCE), compiled);
    registry.offer('default', 'r', { out: 'OLD' }, 'OLD');
    registry.offer('default', 'r', { out: 'NEW' }, 'OLD');
    registry.offer('default', 'r', { out: 'NEW' }, 'OLD');
    registry.offer('default', 'r', { out: 'THROW' }, 'OLD');
    drain();
    const c = registry.get('default', 'r')!.counts();
    assert.deepEqual([c.executed, c.agreed, c.disagreed, c.errors], [4, 1, 2, 1]);
    assert.deepEqual(c.transitions, [
      { from: 'OLD', to: 'NEW', count: 2 },
      { from: 'OLD', to: 'error:TIMEOUT', count: 1 },
    ]);
    assert.deepEqual(metric, ['r:agree', 'r:disagree', 'r:disagree', 'r:error']);
  });

  it('keeps the last 20 examples, oldest first', () => {
    const { registry, compiled, drain } = setup(() => 'NEW');
    registry.set(shadowRecord('default', 'r', doc('NEW'), 100, SINCE), compiled);
    for (let i = 0; i < 45; i++) registry.offer('default', 'r', { i }, 'OLD');
    drain();
    const { examples } = registry.get('default', 'r')!.counts();
    assert.equal(examples.length, MAX_SHADOW_EXAMPLES);
    assert.deepEqual(
      examples.map((e) => (e.input as { i: number }).i),
      Array.from({ length: 20 }, (_, k) => 25 + k),
    );
    assert.equal(examples[0]!.at, SINCE);
  });

  it('drops sampled executions past the bounded queue, and counts them', () => {
    const { registry, compiled, drain } = setup(() => 'OLD');
    registry.set(shadowRecord('default', 'r', doc('NEW'), 100, SINCE), compiled);
    for (let i = 0; i < 10; i++) registry.offer('default', 'r', {}, 'OLD');
    drain();
    // maxQueue is the default 1024 here; a small one:
    const small = setup(() => 'OLD', 3);
    small.registry.set(shadowRecord('default', 'r', doc('NEW'), 100, SINCE), small.compiled);
    for (let i = 0; i < 10; i++) small.registry.offer('default', 'r', {}, 'OLD');
    small.drain();
    const c = small.registry.get('default', 'r')!.counts();
    assert.equal(c.executed, 3);
    assert.equal(c.dropped, 7);
    assert.equal(registry.get('default', 'r')!.counts().dropped, 0);
  });

  it('discards the queued runs of a shadow replaced or ended before the drain; same version keeps the counts', () => {
    const { registry, compiled, drain } = setup(() => 'NEW');
    const first = shadowRecord('default', 'r', doc('NEW'), 100, SINCE);
    registry.set(first, compiled);
    registry.offer('default', 'r', {}, 'OLD');
    drain();
    assert.equal(registry.set(first, compiled).counts().executed, 1, 'the same version keeps its state');
    registry.offer('default', 'r', {}, 'OLD');
    registry.set(shadowRecord('default', 'r', doc('NEW'), 50, SINCE), compiled);
    drain();
    assert.equal(registry.get('default', 'r')!.counts().executed, 0);
    registry.offer('default', 'r', {}, 'OLD');
    registry.offer('default', 'r', {}, 'OLD');
    assert.equal(registry.remove('default', 'r'), true);
    assert.equal(registry.size, 0);
    drain();
    assert.equal(registry.get('default', 'r'), undefined);
  });

  it('keeps tenants apart', () => {
    const { registry, compiled, drain } = setup(() => 'NEW');
    registry.set(shadowRecord('acme', 'r', doc('NEW'), 100, SINCE), compiled);
    registry.offer('default', 'r', {}, 'OLD');
    registry.offer('acme', 'r', {}, 'OLD');
    drain();
    assert.equal(registry.get('acme', 'r')!.counts().executed, 1);
    assert.equal(registry.get('default', 'r'), undefined);
  });
});

describe('ShadowPut / ShadowDeleted on the wire', () => {
  const record = shadowRecord('acme', 'r.1', doc('NEW'), 25, SINCE);

  it('has its own subject, encodes and decodes, and maps to and from the change stream', () => {
    const put = shadowPutOf(record);
    assert.equal(eventSubject('svc.rules', put), 'svc.rules.acme.shadow.r%2E1');
    assert.equal(eventSubject('svc.rules', shadowDeletedOf('acme', 'r.1')), 'svc.rules.acme.shadow.r%2E1');
    const env: SyncEnvelope = { instance_id: 'w', event: put, timestamp_ms: 1 };
    assert.deepEqual(decodeEnvelope(encodeEnvelope(env)), env);
    assert.deepEqual(wireEventOf({ kind: 'shadow.put', record, origin: 'api' }), put);
    const incoming = incomingChangeOf(put);
    assert.equal(incoming.kind, 'shadow.put');
    const v = parseShadowValue((incoming as { value: unknown }).value);
    assert.equal(shadowRecord('acme', 'r.1', v.candidate, v.sampleRate, v.since).version, record.version, 'the same content gives the same version');
    assert.deepEqual(incomingChangeOf(shadowDeletedOf('acme', 'r.1')), { kind: 'shadow.delete', tenant: 'acme', name: 'r.1' });
  });

  it('refuses malformed events', () => {
    const bad = (event: unknown) => new TextEncoder().encode(JSON.stringify({ instance_id: 'w', event, timestamp_ms: 1 }));
    assert.throws(() => decodeEnvelope(bad({ type: 'ShadowPut', tenant_id: 'default', name: 'r', version: 'x' })), EnvelopeError);
    assert.throws(() => decodeEnvelope(bad({ type: 'ShadowPut', tenant_id: 'default', name: '.r', shadow_json: '{}', version: 'x' })), EnvelopeError);
    assert.throws(() => decodeEnvelope(bad({ type: 'ShadowDeleted', tenant_id: 'default' })), EnvelopeError);
  });

  it('rejects shadow values of the wrong shape', () => {
    assert.throws(() => parseShadowValue([]), /JSON object/);
    assert.throws(() => parseShadowValue({ candidate: doc('X'), sample_rate: 0, since: SINCE }), /sample_rate/);
    assert.throws(() => parseShadowValue({ candidate: 'x', sample_rate: 5, since: SINCE }), /candidate/);
    assert.throws(() => parseShadowValue({ candidate: doc('X'), sample_rate: 5, since: 'yesterday' }), /since/);
  });

  it('dedup keeps a shadow apart from its ruleset', () => {
    const d = new EventDeduper('reader');
    const env = (event: SyncEnvelope['event']): SyncEnvelope => ({ instance_id: 'w', event, timestamp_ms: 1 });
    d.applied(env({ type: 'RuleDeleted', tenant_id: 'acme', name: 'r.1' }), 10, undefined);
    const put = env(shadowPutOf(record));
    assert.equal(d.check(put, 5, undefined), 'apply');
    d.applied(put, 5, record);
    assert.equal(d.lastSeq('acme', 'r.1', 'shadow'), 5);
    assert.equal(d.check(put, 6, record), 'duplicate');
  });
});
