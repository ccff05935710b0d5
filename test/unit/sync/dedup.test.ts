import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventDeduper } from '../../../src/sync/dedup.js';
import type { SyncEnvelope } from '../../../src/sync/events.js';
import type { RuleRecord } from '../../../src/store/types.js';

const put = (name: string, json: string, instance = 'writer-1'): SyncEnvelope => ({
  instance_id: instance,
  timestamp_ms: 1,
  event: { type: 'RulePut', tenant_id: 'default', name, ruleset_json: json, version: '1.0.0' },
});
const del = (name: string, instance = 'writer-1'): SyncEnvelope => ({
  instance_id: instance,
  timestamp_ms: 1,
  event: { type: 'RuleDeleted', tenant_id: 'default', name },
});
const record = (name: string) => ({ tenant: 'default', name }) as unknown as RuleRecord;

describe('EventDeduper (reader de-duplication)', () => {
  it('skips messages of its own instance', () => {
    const d = new EventDeduper('reader-1');
    assert.equal(d.check(put('a', '{}', 'reader-1'), 1, undefined), 'own');
    assert.equal(d.check(put('a', '{}', 'writer-1'), 1, undefined), 'apply');
  });

  it('skips a redelivered or older message of a rule once a newer one was applied', () => {
    const d = new EventDeduper('reader-1');
    const rec = record('a');
    d.applied(put('a', '{"v":2}'), 10, rec);
    assert.equal(d.lastSeq('default', 'a'), 10);
    assert.equal(d.check(put('a', '{"v":2}'), 10, rec), 'stale', 'redelivery');
    assert.equal(d.check(put('a', '{"v":1}'), 7, rec), 'stale', 'older event replayed after the bootstrap');
    assert.equal(d.check(put('b', '{"v":1}'), 7, undefined), 'apply', 'other rules are independent');
  });

  it('skips a re-published identical ruleset while the store still holds what was applied', () => {
    const d = new EventDeduper('reader-1');
    const rec = record('a');
    d.applied(put('a', '{"v":1}'), 3, rec);
    assert.equal(d.check(put('a', '{"v":1}'), 9, rec), 'duplicate');
    assert.equal(d.check(put('a', '{"v":2}'), 9, rec), 'apply', 'new content');
    assert.equal(d.check(put('a', '{"v":1}'), 9, record('a')), 'apply', 'the store changed meanwhile (e.g. the watcher)');
    assert.equal(d.check(put('a', '{"v":1}'), 9, undefined), 'apply', 'the rule was removed locally meanwhile');
  });

  it('skips a repeated delete of a rule that is still absent', () => {
    const d = new EventDeduper('reader-1');
    d.applied(del('a'), 4, undefined);
    assert.equal(d.check(del('a'), 5, undefined), 'duplicate');
    assert.equal(d.check(del('a'), 5, record('a')), 'apply', 'it came back locally');
  });

  it('always applies tenant events', () => {
    const d = new EventDeduper('reader-1');
    const env: SyncEnvelope = { instance_id: 'w', timestamp_ms: 1, event: { type: 'TenantConfigChanged', tenant_id: 't1', tenant: null } };
    d.applied(env, 5, undefined);
    assert.equal(d.check(env, 5, undefined), 'apply');
  });
});
