/**
 * Broker sync with real processes: one writer and two readers on this test's own
 * nats-server. Every kind of mutation reaches both readers; readers refuse writes with 409.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, logsWith, ruleset, sameState, servedVersion, waitConnected, waitFor } from '../helpers/sync-cluster.js';

describe('broker sync: writer and two readers', () => {
  const cluster = new SyncCluster();
  let writer: ServerProcess;
  let readers: ServerProcess[];
  let readerDir: string;

  before(async () => {
    await cluster.startNats();
    writer = await cluster.writer(['--rules-dir', cluster.dir(), '--instance-id', 'writer-1']);
    readerDir = cluster.dir();
    readers = await Promise.all([
      cluster.reader(['--instance-id', 'reader-1', '--writer-addr', writer.url]),
      cluster.reader(['--instance-id', 'reader-2', '--writer-addr', writer.url, '--rules-dir', readerDir]),
    ]);
    await Promise.all([writer, ...readers].map((p) => waitConnected(p)));
  });
  after(() => cluster.dispose());

  const onAllReaders = (what: string, check: (r: ServerProcess) => Promise<boolean>) =>
    Promise.all(readers.map((r) => waitFor(`${what} on ${r.url}`, () => check(r))));

  it('propagates create, update, update keeping the version label, delete and rollback', async () => {
    assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('pricing', '1.0.0', 'A'))).body.status, 'created');
    await onAllReaders('create', async (r) => (await servedVersion(r.url, 'pricing')) === '1.0.0');

    assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('pricing', '2.0.0', 'B'))).body.status, 'updated');
    await onAllReaders('update', async (r) => (await servedVersion(r.url, 'pricing')) === '2.0.0');

    // Same label, new content: still propagates (DECISIONS.md 7).
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('pricing', '2.0.0', 'C'));
    await onAllReaders('update keeping the label', async (r) => {
      const res = await http(r.url, 'POST', '/api/v1/execute/pricing', { input: {} });
      return res.body.code === 'C';
    });

    const versions = await http(writer.url, 'GET', '/api/v1/rulesets/pricing/versions');
    const first = (versions.body.versions as Array<{ seq: number; version: string }>).find((v) => v.version === '1.0.0')!;
    const rolled = await http(writer.url, 'POST', '/api/v1/rulesets/pricing/rollback', { seq: first.seq });
    assert.equal(rolled.body.status, 'rolled_back');
    await onAllReaders('rollback', async (r) => {
      const res = await http(r.url, 'POST', '/api/v1/execute/pricing', { input: {} });
      return res.body.code === 'A';
    });

    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('doomed'));
    await onAllReaders('create doomed', async (r) => (await servedVersion(r.url, 'doomed')) !== null);
    assert.equal((await http(writer.url, 'DELETE', '/api/v1/rulesets/doomed')).status, 204);
    await onAllReaders('delete', async (r) => (await http(r.url, 'GET', '/api/v1/rulesets/doomed')).status === 404);

    for (const r of readers) assert.ok(await sameState(writer.url, r.url), `${r.url} serves the writer's exact state`);
    // The persistent reader (own rules dir, no watcher) keeps what it received on disk.
    assert.equal(JSON.parse(readFileSync(join(readerDir, 'pricing.json'), 'utf8')).steps.t.result.code, 'A');
    assert.equal(existsSync(join(readerDir, 'doomed.json')), false);
  });

  it('rejects every write on a reader with 409 and the read-only body, while reads work', async () => {
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('readable', '1.0.0', 'R'));
    await onAllReaders('readable', async (r) => (await servedVersion(r.url, 'readable')) === '1.0.0');
    for (const r of readers) {
      const writes: Array<[string, string, unknown]> = [
        ['POST', '/api/v1/rulesets', ruleset('nope')],
        ['DELETE', '/api/v1/rulesets/readable', undefined],
        ['POST', '/api/v1/rulesets/readable/rollback', { seq: 1 }],
        ['PUT', '/api/v1/config/audit-sample-rate', { sample_rate: 50 }],
      ];
      for (const [method, path, body] of writes) {
        const res = await http(r.url, method, path, body);
        assert.equal(res.status, 409, `${method} ${path}`);
        assert.equal(res.body.error, 'read_only');
        assert.equal(res.body.code, 'READ_ONLY');
        assert.equal(res.body.writer, writer.url);
        assert.equal(typeof res.body.message, 'string');
        assert.equal(res.body.hint, 'send writes to the writer');
      }
      assert.equal((await http(r.url, 'POST', '/api/v1/execute/readable', { input: {} })).body.code, 'R');
      assert.equal((await http(r.url, 'POST', '/api/v1/eval', { expression: '1 + 1', context: {} })).body.result, 2);
      const filter = await http(r.url, 'POST', '/api/v1/rulesets/readable/filter', { known_input: {}, target_results: ['R'] });
      assert.equal(filter.status, 200);
      assert.equal((await http(r.url, 'GET', '/api/v1/rulesets/nope')).status, 404, 'the refused create left nothing');
    }
  });

  it('reports the sync state in /health', async () => {
    const w = (await http(writer.url, 'GET', '/health')).body;
    assert.equal(w.role, 'writer');
    assert.equal(w.sync.role, 'writer');
    assert.equal(w.sync.mode, 'broker');
    assert.equal(w.sync.connected, true);
    assert.match(w.sync.last_event_at, /^\d{4}-\d\d-\d\dT/);
    assert.equal(w.sync.broker.pending, 0);
    for (const r of readers) {
      const h = (await http(r.url, 'GET', '/health')).body;
      assert.equal(h.role, 'reader');
      assert.equal(h.sync.mode, 'broker');
      assert.equal(h.sync.connected, true);
      assert.match(h.sync.last_event_at, /^\d{4}-\d\d-\d\dT/);
      assert.match(h.sync.broker.consumer, /^svc-reader-[12]$/);
    }
  });
});

describe('broker sync: a reader started before the writer', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('serves an empty cache until the first event, then the writer state', async () => {
    await cluster.startNats();
    const reader = await cluster.reader(['--instance-id', 'early-reader']);
    await waitConnected(reader);
    await waitFor(
      'bootstrap',
      () => logsWith(reader, 'sync event applied').length === 0 && reader.logs.some((l) => /sync bootstrap done/.test(String(l['msg']))),
    );
    assert.deepEqual((await http(reader.url, 'GET', '/api/v1/rulesets')).body, []);

    // The writer starts with rules already in its dir: its start-up full state reaches the reader.
    const dir = cluster.dir();
    const seed = await cluster.start(['--rules-dir', dir]);
    for (const name of ['alpha', 'beta']) await http(seed.url, 'POST', '/api/v1/rulesets', ruleset(name, '3.1.4'));
    await cluster.stop(seed);
    const writer = await cluster.writer(['--rules-dir', dir, '--instance-id', 'late-writer']);
    await waitFor('the writer state on the early reader', async () => (await servedVersion(reader.url, 'beta')) === '3.1.4');
    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('gamma'));
    await waitFor('a new rule', async () => (await servedVersion(reader.url, 'gamma')) === '1.0.0');
    assert.ok(await sameState(writer.url, reader.url));
  });
});

describe('broker and watcher together', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('a hand edit in the writer’s dir reaches broker readers; a reader may use both paths', async () => {
    await cluster.startNats();
    const dir = cluster.dir('svc-both-');
    const writer = await cluster.writer(['--rules-dir', dir, '--watch-rules', '--instance-id', 'both-writer']);
    const brokerOnly = await cluster.reader(['--instance-id', 'both-broker-reader']);
    const both = await cluster.reader(['--instance-id', 'both-reader', '--rules-dir', dir, '--watch-rules']);
    await Promise.all([writer, brokerOnly, both].map((p) => waitConnected(p)));
    await writer.waitForLog((l) => l['msg'] === 'rule watcher ready');

    await http(writer.url, 'POST', '/api/v1/rulesets', ruleset('combo', '1.0.0'));
    for (const r of [brokerOnly, both]) await waitFor('the API write', async () => (await servedVersion(r.url, 'combo')) === '1.0.0');

    writeFileSync(join(dir, 'combo.json'), JSON.stringify(ruleset('combo', 'hand-edited')));
    for (const r of [writer, brokerOnly, both]) {
      await waitFor(`${r.url} to serve the hand edit`, async () => (await servedVersion(r.url, 'combo')) === 'hand-edited');
    }
    assert.equal((await http(both.url, 'GET', '/health')).body.sync.mode, 'broker+watcher');
    assert.ok(await sameState(writer.url, brokerOnly.url));
    assert.ok(await sameState(writer.url, both.url));
  });
});
