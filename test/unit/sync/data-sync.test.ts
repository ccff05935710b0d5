/**
 * Sync of reference data (docs/data-sync.md), the parts below the broker: the wire events
 * `DataPut` / `DataDeleted` (subjects, encoding, strict decoding of malformed payloads), their
 * mapping to and from the change stream, de-duplication keeping datasets apart from rulesets of
 * the same name, the façade applying dataset changes (checks, persist, snapshot, change stream),
 * the watcher's path classification, and the outbox dropping an event the broker cannot take.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { Change } from '../../../src/store/change.js';
import { dataRecord } from '../../../src/store/data-record.js';
import { classifyRulePath, isIgnoredPath } from '../../../src/store/rule-paths.js';
import { EventDeduper } from '../../../src/sync/dedup.js';
import {
  EnvelopeError,
  dataDeletedOf,
  dataPutOf,
  dataSubject,
  decodeEnvelope,
  encodeEnvelope,
  eventSubject,
  ruleSubject,
  type SyncEnvelope,
} from '../../../src/sync/events.js';
import { PublishQueue, UnsendableMessage, type OutgoingMessage } from '../../../src/sync/publish-queue.js';
import { incomingChangeOf, wireEventOf } from '../../../src/sync/wire-changes.js';
import { FakeClock } from './fake-clock.js';
import { CTX, makeFixture, type Fixture } from './service-fixture.js';

const bytes = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));

/** A ruleset whose result reads the dataset `limits`. */
const READER = {
  config: { name: 'reads', entry_step: 't' },
  steps: { t: { type: 'terminal', result: { code: 'OK' }, output: { max: '@limits.max' } } },
};

describe('DataPut / DataDeleted on the wire', () => {
  it('get tenant-scoped subjects one token longer than a rule’s, so a dataset never shares a ruleset’s subject', () => {
    assert.equal(dataSubject('svc.rules', 'default', 'limits'), 'svc.rules.default.data.limits');
    assert.equal(dataSubject('svc.rules', 'acme', 'a.b'), 'svc.rules.acme.data.a%2Eb');
    const put = dataPutOf(dataRecord('acme', 'limits', { max: 5 }));
    assert.equal(eventSubject('svc.rules', put), 'svc.rules.acme.data.limits');
    assert.equal(eventSubject('svc.rules', dataDeletedOf('acme', 'limits')), 'svc.rules.acme.data.limits');
    assert.notEqual(eventSubject('svc.rules', put), ruleSubject('svc.rules', 'acme', 'limits'));
    // A ruleset named `data` of tenant `t` and a dataset of tenant `t` still differ (2 vs 3 tokens).
    assert.notEqual(ruleSubject('p', 't', 'data'), dataSubject('p', 't', 'x'));
  });

  it('carry the compact JSON and the content version, and round-trip through an envelope', () => {
    const record = dataRecord('default', 'limits', { max: 5, list: ['a', 'b'] });
    const put = dataPutOf(record);
    assert.deepEqual(put, { type: 'DataPut', tenant_id: 'default', name: 'limits', data_json: '{"max":5,"list":["a","b"]}', version: record.version });
    for (const event of [put, dataDeletedOf('t1', 'gone')]) {
      const env: SyncEnvelope = { instance_id: 'w1', event, timestamp_ms: 42 };
      assert.deepEqual(decodeEnvelope(encodeEnvelope(env)), env);
    }
  });

  it('map to and from the change stream', () => {
    const record = dataRecord('acme', 'limits', [1, 2]);
    const put: Change = { kind: 'data.put', record, origin: 'api' };
    assert.deepEqual(wireEventOf(put), dataPutOf(record));
    assert.deepEqual(wireEventOf({ kind: 'data.put', record }), dataPutOf(record), 'a snapshot entry');
    assert.deepEqual(wireEventOf({ kind: 'data.delete', tenant: 'acme', name: 'limits', previous: record, origin: 'watch' }), dataDeletedOf('acme', 'limits'));
    assert.deepEqual(incomingChangeOf(dataPutOf(record)), { kind: 'data.put', tenant: 'acme', name: 'limits', value: [1, 2] });
    assert.deepEqual(incomingChangeOf(dataDeletedOf('acme', 'limits')), { kind: 'data.delete', tenant: 'acme', name: 'limits' });
    // A DataPut whose data_json is not JSON: the caller (the consumer) logs and skips it.
    assert.throws(() => incomingChangeOf({ type: 'DataPut', tenant_id: 'acme', name: 'limits', data_json: '{"max":', version: 'x' }), SyntaxError);
  });

  it('reject malformed payloads, saying why', () => {
    const ok = { instance_id: 'w', timestamp_ms: 1, event: { type: 'DataPut', tenant_id: 'default', name: 'limits', data_json: '{}', version: 'v' } };
    assert.doesNotThrow(() => decodeEnvelope(bytes(ok)));
    const bad: Array<[unknown, RegExp]> = [
      [{ ...ok, event: { ...ok.event, data_json: { max: 1 } } }, /event.data_json must be a string/],
      [{ ...ok, event: { ...ok.event, data_json: undefined } }, /event.data_json must be a string/],
      [{ ...ok, event: { ...ok.event, version: 7 } }, /event.version must be a string/],
      [{ ...ok, event: { ...ok.event, name: '../etc/passwd' } }, /event.name must be a valid dataset name/],
      [{ ...ok, event: { ...ok.event, name: '' } }, /event.name/],
      [{ ...ok, event: { ...ok.event, tenant_id: 'a/b' } }, /event.tenant_id/],
      [{ ...ok, event: { type: 'DataDeleted', tenant_id: 'default', name: '.hidden' } }, /event.name must be a valid dataset name/],
      [{ ...ok, event: { type: 'DataDeleted', tenant_id: 'default' } }, /event.name/],
      [{ ...ok, event: { ...ok.event, type: 'DataPatched' } }, /unknown event type/],
      ['{"instance_id":"w","timestamp_ms":1,"event":{"type":"DataPut"', /not JSON/],
    ];
    for (const [body, re] of bad) {
      assert.throws(
        () => decodeEnvelope(bytes(body)),
        (err: unknown) => err instanceof EnvelopeError && re.test((err as Error).message),
        `expected ${re} for ${JSON.stringify(body)}`,
      );
    }
  });
});

describe('EventDeduper with datasets', () => {
  const env = (event: SyncEnvelope['event'], instance = 'writer'): SyncEnvelope => ({ instance_id: instance, event, timestamp_ms: 1 });

  it('keeps a dataset and a ruleset of the same name apart', () => {
    const d = new EventDeduper('reader');
    const rule = env({ type: 'RuleDeleted', tenant_id: 'default', name: 'limits' });
    d.applied(rule, 10, undefined);
    const put = env(dataPutOf(dataRecord('default', 'limits', { max: 1 })));
    assert.equal(d.check(put, 5, undefined), 'apply', 'the rule’s sequence does not make the dataset stale');
    const held = dataRecord('default', 'limits', { max: 1 });
    d.applied(put, 5, held);
    assert.equal(d.lastSeq('default', 'limits', 'data'), 5);
    assert.equal(d.lastSeq('default', 'limits'), 10);
    assert.equal(d.check(put, 5, held), 'stale', 'a redelivery');
    assert.equal(d.check(put, 6, held), 'duplicate', 're-published identical content');
    assert.equal(d.check(put, 7, dataRecord('default', 'limits', { max: 2 })), 'apply', 'the store changed since');
    assert.equal(d.check(env(dataDeletedOf('default', 'limits')), 8, held), 'apply');
    assert.equal(d.check(env(dataDeletedOf('default', 'limits'), 'reader'), 9, held), 'own');
  });
});

describe('the façade applies dataset changes', () => {
  let fx: Fixture | undefined;
  afterEach(() => fx?.cleanup());

  it('puts a synchronized dataset that executions read at once, in the snapshot and on the change stream', async () => {
    fx = await makeFixture({ data: { maxDataBytes: 1000 } });
    await fx.service.putRuleset(CTX, READER);
    const changes: string[] = [];
    fx.service.subscribe((c) => changes.push(`${c.kind}:${c.origin}`));
    assert.equal(fx.service.execute(CTX, 'reads', {}, false).output['max'], null, 'missing dataset reads as null');

    assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'limits', value: { max: 7 } }, 'sync', false), 'applied');
    assert.equal(fx.service.execute(CTX, 'reads', {}, false).output['max'], 7);
    assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'limits', value: { max: 7 } }, 'sync', false), 'unchanged');
    assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: 'other', name: 'limits', value: { max: 9 } }, 'sync', false), 'applied');
    assert.equal(fx.service.execute(CTX, 'reads', {}, false).output['max'], 7, 'another tenant’s dataset is not read');

    const kinds = fx.service.snapshot().map((e) => `${e.kind}:${e.record.name}`);
    assert.deepEqual(kinds, ['data.put:limits', 'data.put:limits', 'ruleset.put:reads'], 'datasets before the rulesets that read them');
    assert.equal(fx.service.currentData('default', 'limits')?.version, dataRecord('default', 'limits', { max: 7 }).version);

    assert.equal(await fx.service.applyChange({ kind: 'data.delete', tenant: 'default', name: 'limits' }, 'sync', false), 'applied');
    assert.equal(await fx.service.applyChange({ kind: 'data.delete', tenant: 'default', name: 'limits' }, 'sync', false), 'unchanged');
    assert.equal(fx.service.execute(CTX, 'reads', {}, false).output['max'], null);
    assert.deepEqual(changes, ['data.put:sync', 'data.put:sync', 'data.delete:sync']);
  });

  it('logs and skips a dataset over --max-data-bytes or with a bad name; the loaded version keeps serving', async () => {
    fx = await makeFixture({ data: { maxDataBytes: 50 } });
    await fx.service.putRuleset(CTX, READER);
    await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'limits', value: { max: 1 } }, 'sync', false);
    const big = { max: 2, pad: 'x'.repeat(100) };
    assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'limits', value: big }, 'sync', false), 'rejected');
    const warn = fx.logger.find('synchronized dataset skipped: over --max-data-bytes; the loaded version keeps serving');
    assert.equal(warn.length, 1);
    assert.equal(warn[0]!['limit'], 50);
    assert.equal(warn[0]!['serving_version'], dataRecord('default', 'limits', { max: 1 }).version);
    assert.equal(fx.service.execute(CTX, 'reads', {}, false).output['max'], 1);
    for (const [tenant, name] of [
      ['default', '../x'],
      ['a/b', 'limits'],
    ]) {
      assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: tenant!, name: name!, value: 1 }, 'sync', false), 'rejected');
      assert.equal(await fx.service.applyChange({ kind: 'data.delete', tenant: tenant!, name: name! }, 'sync', false), 'rejected');
    }
    assert.equal(fx.logger.find('synchronized dataset skipped: invalid tenant id or dataset name').length, 4);
  });

  it('writes the file only when asked to persist (a reader with its own rules dir), and records its own writes for the watcher', async () => {
    fx = await makeFixture({ persistent: true, data: { maxDataBytes: 1000 } });
    const file = (tenant: string, name: string) =>
      tenant === 'default' ? join(fx!.dir!, 'data', `${name}.json`) : join(fx!.dir!, 'tenants', tenant, 'data', `${name}.json`);
    await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'kept', value: [1] }, 'sync', true);
    await fx.service.applyChange({ kind: 'data.put', tenant: 'acme', name: 'kept', value: [2] }, 'sync', true);
    await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'shared', value: [3] }, 'watch', false);
    assert.deepEqual(JSON.parse(readFileSync(file('default', 'kept'), 'utf8')), [1]);
    assert.deepEqual(JSON.parse(readFileSync(file('acme', 'kept'), 'utf8')), [2]);
    assert.equal(existsSync(file('default', 'shared')), false);
    const own = fx.store.files!.own;
    const isOwn = (tenant: string, name: string, value: number[]) => own.isOwn(file(tenant, name), dataRecord(tenant, name, value).version);
    assert.equal(isOwn('default', 'kept', [1]), true);
    assert.equal(isOwn('default', 'kept', [9]), false);
    assert.equal(isOwn('default', 'shared', [3]), false, 'not written by us');
    // A watcher read taken before an own change of the file is stale once it lands (and not after).
    const before = own.token(file('default', 'kept'));
    assert.equal(
      await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'kept', value: [5] }, 'watch', false, own.token(file('default', 'kept'))),
      'applied',
      'a current token',
    );
    await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'kept', value: [4] }, 'sync', true);
    assert.equal(isOwn('default', 'kept', [4]), true);
    assert.equal(isOwn('default', 'kept', [1]), false, 'what the update replaced is foreign');
    assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'kept', value: [1] }, 'watch', false, before), 'stale');
    assert.deepEqual(fx.service.currentData('default', 'kept')?.value, [4], 'nothing applied');
    const beforeDelete = own.token(file('default', 'kept'));
    await fx.service.applyChange({ kind: 'data.delete', tenant: 'default', name: 'kept' }, 'sync', true);
    assert.equal(existsSync(file('default', 'kept')), false);
    assert.equal(isOwn('default', 'kept', [4]), false, 'deleted: nothing is its own write');
    assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'kept', value: [4] }, 'watch', false, beforeDelete), 'stale');
    assert.equal(fx.service.currentData('default', 'kept'), undefined, 'the delete stays');
  });

  it('without reference data wired, dataset changes are no-ops and the snapshot holds none', async () => {
    fx = await makeFixture();
    assert.equal(fx.service.syncsData, false);
    assert.equal(await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'x', value: 1 }, 'sync', false), 'unchanged');
    assert.deepEqual(fx.service.snapshot(), []);
  });
});

describe('data file paths for the watcher', () => {
  const dir = '/srv/rules';
  it('classifies data files and data directories of every tenant', () => {
    assert.deepEqual(classifyRulePath(dir, `${dir}/data/limits.json`), { kind: 'data', tenant: 'default', name: 'limits' });
    assert.deepEqual(classifyRulePath(dir, `${dir}/data`), { kind: 'data-dir', tenant: 'default' });
    assert.deepEqual(classifyRulePath(dir, `${dir}/tenants/acme/data/limits.json`), { kind: 'data', tenant: 'acme', name: 'limits' });
    assert.deepEqual(classifyRulePath(dir, `${dir}/tenants/acme/data`), { kind: 'data-dir', tenant: 'acme' });
    assert.deepEqual(classifyRulePath(dir, `${dir}/data.json`), { kind: 'rule', tenant: 'default', name: 'data' }, 'a ruleset named data');
    for (const other of ['data/limits.yaml', 'data/.limits.json.1.tmp', 'data/sub/x.json', 'tenants/acme/data/x/y.json', 'tenants/acme/other/x.json']) {
      assert.deepEqual(classifyRulePath(dir, `${dir}/${other}`), { kind: 'other' }, other);
    }
    assert.equal(isIgnoredPath(dir, `${dir}/tenants/acme/data/limits.json`), false);
    assert.equal(isIgnoredPath(dir, `${dir}/tenants/acme/other/limits.json`), true);
    assert.equal(isIgnoredPath(dir, `${dir}/tenants/acme/data/x/y.json`), true);
    assert.equal(isIgnoredPath(dir, `${dir}/tenants/acme/.versions/r/v1_1.json`), true);
  });
});

describe('PublishQueue and an event the broker cannot take', () => {
  it('drops it at once, reports it, and sends what follows in order', async () => {
    const clock = new FakeClock();
    const sent: string[] = [];
    const unsendable: string[] = [];
    const q = new PublishQueue({
      clock,
      send: async (m) => {
        if (m.msgId === 'big') throw new UnsendableMessage('too large');
        sent.push(m.msgId);
      },
      onUnsendable: (err, m) => unsendable.push(`${m.msgId}: ${err.message}`),
    });
    const msg = (id: string): OutgoingMessage => ({ subject: 's', data: new Uint8Array([1]), msgId: id });
    q.enqueue(msg('a'));
    q.enqueue(msg('big'));
    q.enqueue(msg('b'));
    q.setConnected(true);
    await q.idle();
    assert.deepEqual(sent, ['a', 'b']);
    assert.deepEqual(unsendable, ['big: too large']);
    assert.equal(q.length, 0);
    await q.close();
  });
});
