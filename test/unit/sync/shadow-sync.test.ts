/**
 * The façade applying synchronized shadow runs (docs/changing-rules.md "Shadow runs"): a valid
 * `shadow.put` is stored, live (the next execution is shadowed), in the snapshot and on the
 * change stream; one that is malformed or whose candidate does not compile is logged and
 * rejected; the same content twice is applied once; `shadow.delete` ends it.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { Change } from '../../../src/store/change.js';
import { CTX, makeFixture, ruleset, type Fixture } from './service-fixture.js';

const SINCE = '2026-01-01T00:00:00.000Z';
const value = (code: string, rate = 100) => ({ candidate: ruleset('r', '2.0.0', code), sample_rate: rate, since: SINCE });

describe('RuleService.applyChange with shadows', () => {
  let fx: Fixture;
  afterEach(() => fx.cleanup());

  it('applies a synchronized shadow: stored, live, in the snapshot and the change stream; once', async () => {
    fx = await makeFixture({ role: 'reader' });
    await fx.service.applyChange({ kind: 'ruleset.put', tenant: 'default', doc: ruleset('r', '1.0.0', 'OLD') }, 'sync', false);
    const seen: Change[] = [];
    fx.service.subscribe((c) => seen.push(c));
    assert.equal(await fx.service.applyChange({ kind: 'shadow.put', tenant: 'default', name: 'r', value: value('NEW') }, 'sync', false), 'applied');
    assert.equal(await fx.service.applyChange({ kind: 'shadow.put', tenant: 'default', name: 'r', value: value('NEW') }, 'sync', false), 'unchanged');
    assert.deepEqual(
      seen.map((c) => c.kind),
      ['shadow.put'],
    );
    assert.equal(fx.service.currentShadow('default', 'r')?.sampleRate, 100);
    assert.ok(fx.service.snapshot().some((e) => e.kind === 'shadow.put' && e.record.name === 'r'));
    assert.equal(fx.service.execute(CTX, 'r', {}, false).code, 'OLD');
    await new Promise((r) => setImmediate(r));
    const s = fx.service.getShadow(CTX, 'r');
    assert.deepEqual([s.executed, s.disagreed, s.candidate_version], [1, 1, '2.0.0']);
    assert.equal(await fx.service.applyChange({ kind: 'shadow.delete', tenant: 'default', name: 'r' }, 'sync', false), 'applied');
    assert.throws(() => fx.service.getShadow(CTX, 'r'), /has no shadow run/);
    assert.equal(await fx.service.applyChange({ kind: 'shadow.delete', tenant: 'default', name: 'r' }, 'sync', false), 'unchanged');
  });

  it('rejects a malformed shadow or a candidate that does not compile, and logs it', async () => {
    fx = await makeFixture({ role: 'reader' });
    const bad = [
      { sample_rate: 5, since: SINCE },
      { ...value('NEW'), sample_rate: 500 },
      { ...value('NEW'), candidate: { config: { name: 'r', entry_step: 'nope' }, steps: {} } },
      { ...value('NEW'), candidate: ruleset('other') },
    ];
    for (const v of bad) assert.equal(await fx.service.applyChange({ kind: 'shadow.put', tenant: 'default', name: 'r', value: v }, 'sync', false), 'rejected');
    assert.equal(fx.logger.find('rejected a synchronized shadow').length, bad.length);
    assert.equal(fx.service.currentShadow('default', 'r'), undefined);
  });

  it('persists what it applies when asked (a reader with its own dir)', async () => {
    fx = await makeFixture({ role: 'reader', persistent: true });
    assert.equal(await fx.service.applyChange({ kind: 'shadow.put', tenant: 'default', name: 'r', value: value('NEW', 10) }, 'sync', true), 'applied');
    const { readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    assert.equal(JSON.parse(readFileSync(join(fx.dir!, 'shadows', 'r.json'), 'utf8')).sample_rate, 10);
  });
});
