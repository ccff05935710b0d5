/**
 * Sync of reference data with real processes (docs/data-sync.md): datasets written on a writer
 * reach readers through this test's own nats-server (`DataPut` / `DataDeleted` on
 * `{prefix}.{tenant}.data.{name}`) and through a shared rules dir watched by readers. A ruleset
 * reading `@limits.max` executes with the new value on the reader; deletions propagate; a reader
 * started later catches up; datasets stay in their tenant; readers refuse data writes; a dataset
 * over a reader's `--max-data-bytes`, a malformed event and a broken data file are logged and
 * skipped while the reader keeps serving and keeps syncing; an event larger than the broker's
 * `max_payload` is dropped by the writer without holding up the events behind it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadNatsApi } from '../../src/sync/nats-api.js';
import { http, type ServerProcess } from '../helpers/server-process.js';
import { SyncCluster, logsWith, waitConnected, waitFor } from '../helpers/sync-cluster.js';

const MT = '--multi-tenancy-enabled';
const as = (tenant: string) => ({ 'x-tenant-id': tenant });

/** A ruleset whose output is `@limits.max`. */
const SCREEN = {
  config: { name: 'screen', entry_step: 't' },
  steps: { t: { type: 'terminal', result: { code: 'OK' }, output: { max: '@limits.max' } } },
};

/** What `screen` answers for `max` on an instance (null: the dataset is missing). */
async function maxOn(url: string, tenant = 'default'): Promise<unknown> {
  const res = await http(url, 'POST', '/api/v1/execute/screen', { input: {} }, as(tenant));
  if (res.status !== 200) throw new Error(`execute answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.output.max;
}

async function putData(url: string, name: string, value: unknown, tenant = 'default'): Promise<void> {
  const res = await http(url, 'PUT', `/api/v1/data/${name}`, value, as(tenant));
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

describe('datasets through the broker', () => {
  const cluster = new SyncCluster();
  let writer: ServerProcess;
  let reader: ServerProcess;
  let small: ServerProcess;
  let readerDir: string;

  before(async () => {
    await cluster.startNats();
    writer = await cluster.writer([MT, '--rules-dir', cluster.dir(), '--instance-id', 'data-writer']);
    readerDir = cluster.dir();
    [reader, small] = await Promise.all([
      cluster.reader([MT, '--instance-id', 'data-reader', '--writer-addr', writer.url, '--rules-dir', readerDir]),
      cluster.reader([MT, '--instance-id', 'data-small-reader', '--max-data-bytes', '100']),
    ]);
    await Promise.all([writer, reader, small].map((p) => waitConnected(p)));
    assert.equal((await http(writer.url, 'POST', '/api/v1/tenants', { id: 'acme' })).status, 201);
    for (const tenant of ['default', 'acme']) assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', SCREEN, as(tenant))).status, 200);
    for (const r of [reader, small]) await waitFor('the acme ruleset on the readers', async () => (await maxOn(r.url, 'acme').catch(() => 'no')) === null);
  });
  after(() => cluster.dispose());

  it('a PUT on the writer reaches the readers: the next execution reads the new value; updates too', async () => {
    await putData(writer.url, 'limits', { max: 100 });
    for (const r of [reader, small]) await waitFor('the dataset on the reader', async () => (await maxOn(r.url)) === 100);
    await putData(writer.url, 'limits', { max: 200 });
    for (const r of [reader, small]) await waitFor('the update on the reader', async () => (await maxOn(r.url)) === 200);
    const got = await http(reader.url, 'GET', '/api/v1/data/limits');
    assert.deepEqual(got.body, { max: 200 });
    const [onWriter, onReader] = await Promise.all([writer, reader].map(async (p) => (await http(p.url, 'GET', '/api/v1/data')).body));
    assert.deepEqual(onReader, onWriter, 'same names, sizes and versions');
    // The reader with its own rules dir keeps what it received on disk.
    assert.deepEqual(JSON.parse(readFileSync(join(readerDir, 'data', 'limits.json'), 'utf8')), { max: 200 });
    const applied = logsWith(reader, 'sync event applied').filter((l) => l['type'] === 'DataPut');
    assert.ok(applied.length >= 2 && applied.every((l) => l['kind'] === 'data' && l['name'] === 'limits'), JSON.stringify(applied));
    const health = (await http(reader.url, 'GET', '/health')).body;
    assert.ok(health.sync.broker.applied_by_kind.data >= 2, JSON.stringify(health.sync.broker));
  });

  it('keeps datasets in their tenant', async () => {
    await putData(writer.url, 'limits', { max: 7 }, 'acme');
    await waitFor('the acme dataset on the reader', async () => (await maxOn(reader.url, 'acme')) === 7);
    assert.equal(await maxOn(reader.url, 'default'), 200, 'the default tenant keeps its own');
    assert.deepEqual((await http(reader.url, 'GET', '/api/v1/data/limits', undefined, as('acme'))).body, { max: 7 });
    await putData(writer.url, 'only_acme', [1], 'acme');
    await waitFor('only_acme on the reader', async () => (await http(reader.url, 'GET', '/api/v1/data/only_acme', undefined, as('acme'))).status === 200);
    assert.equal((await http(reader.url, 'GET', '/api/v1/data/only_acme')).status, 404, 'not visible to the default tenant');
    assert.deepEqual(JSON.parse(readFileSync(join(readerDir, 'tenants', 'acme', 'data', 'limits.json'), 'utf8')), { max: 7 });
  });

  it('a DELETE propagates', async () => {
    await putData(writer.url, 'doomed', { max: 1 });
    await waitFor('doomed on the reader', async () => (await http(reader.url, 'GET', '/api/v1/data/doomed')).status === 200);
    assert.equal((await http(writer.url, 'DELETE', '/api/v1/data/doomed')).status, 204);
    for (const r of [reader, small]) await waitFor('the delete on the reader', async () => (await http(r.url, 'GET', '/api/v1/data/doomed')).status === 404);
    assert.equal(existsSync(join(readerDir, 'data', 'doomed.json')), false);
    assert.equal(await maxOn(reader.url), 200, 'the other dataset stays');
  });

  it('readers refuse data writes with 409 READ_ONLY', async () => {
    for (const [method, body] of [
      ['PUT', { max: 1 }],
      ['DELETE', undefined],
    ] as const) {
      const res = await http(reader.url, method, '/api/v1/data/limits', body);
      assert.equal(res.status, 409, method);
      assert.equal(res.body.code, 'READ_ONLY');
      assert.equal(res.body.writer, writer.url);
    }
    assert.equal(await maxOn(reader.url), 200);
  });

  it('a dataset over a reader’s --max-data-bytes is logged and skipped; the reader keeps serving and syncing', async () => {
    await putData(writer.url, 'limits', { max: 300, pad: 'x'.repeat(200) });
    await waitFor('the big dataset on the normal reader', async () => (await maxOn(reader.url)) === 300);
    await waitFor('the warning on the small reader', () =>
      logsWith(small, 'synchronized dataset skipped: over --max-data-bytes; the loaded version keeps serving').some((l) => l['name'] === 'limits'),
    );
    assert.equal(await maxOn(small.url), 200, 'the loaded version keeps serving');
    await putData(writer.url, 'limits', { max: 400 });
    await waitFor('the next small dataset on the small reader', async () => (await maxOn(small.url)) === 400);
  });

  it('a malformed DataPut on the wire is logged and skipped; later events still apply', async () => {
    const loaded = await loadNatsApi();
    assert.ok(loaded.ok);
    const nc = await loaded.api.connect({ servers: cluster.nats!.url });
    try {
      const js = loaded.api.jetstream(nc);
      const body = (event: unknown) => new TextEncoder().encode(JSON.stringify({ instance_id: 'intruder', timestamp_ms: Date.now(), event }));
      await js.publish('svc.rules.default.data.limits', body({ type: 'DataPut', tenant_id: 'default', name: 'limits', data_json: '{"max":', version: 'v' }), {
        msgID: 'bad-1',
        timeout: 5000,
      });
      await js.publish('svc.rules.default.data.limits', body({ type: 'DataPut', tenant_id: 'default', name: 'limits', data_json: { max: 1 }, version: 'v' }), {
        msgID: 'bad-2',
        timeout: 5000,
      });
    } finally {
      await nc.close();
    }
    for (const r of [reader, small]) {
      await waitFor('the not-JSON warning', () => logsWith(r, 'skipped a DataPut whose data_json is not JSON').length > 0);
      await waitFor('the invalid envelope warning', () =>
        logsWith(r, 'skipped an invalid sync message').some((l) => /data_json must be a string/.test(String(l['err']))),
      );
      assert.equal(await maxOn(r.url), 400);
    }
    await putData(writer.url, 'limits', { max: 500 });
    for (const r of [reader, small]) await waitFor('a later event', async () => (await maxOn(r.url)) === 500);
  });

  it('a reader started after the writes catches up: datasets of every tenant, without the deleted ones', async () => {
    const late = await cluster.reader([MT, '--instance-id', 'data-late-reader']);
    await waitConnected(late);
    await waitFor('the default dataset on the late reader', async () => (await maxOn(late.url).catch(() => null)) === 500);
    await waitFor('the acme dataset on the late reader', async () => (await maxOn(late.url, 'acme').catch(() => null)) === 7);
    assert.equal((await http(late.url, 'GET', '/api/v1/data/doomed')).status, 404);
    const names = ((await http(late.url, 'GET', '/api/v1/data', undefined, as('acme'))).body as Array<{ name: string }>).map((d) => d.name);
    assert.deepEqual(names, ['limits', 'only_acme']);
  });

  it('a reader restarted on its own rules dir drops a dataset deleted while it was away', async () => {
    await cluster.stop(reader);
    assert.equal((await http(writer.url, 'DELETE', '/api/v1/data/only_acme', undefined, as('acme'))).status, 204);
    await putData(writer.url, 'limits', { max: 600 });
    reader = await cluster.reader([MT, '--instance-id', 'data-reader', '--writer-addr', writer.url, '--rules-dir', readerDir]);
    await waitConnected(reader);
    await waitFor('the update made while away', async () => (await maxOn(reader.url)) === 600);
    await waitFor('the delete made while away', async () => (await http(reader.url, 'GET', '/api/v1/data/only_acme', undefined, as('acme'))).status === 404);
    assert.equal(existsSync(join(readerDir, 'tenants', 'acme', 'data', 'only_acme.json')), false);
  });
});

describe('datasets larger than the broker accepts', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('are not published (an error says why) and do not hold up the events behind them', async () => {
    const conf = join(cluster.dir('svc-nats-conf-'), 'nats.conf');
    writeFileSync(conf, 'max_payload: 4096\n');
    await cluster.startNats({ extraArgs: ['-c', conf] });
    const writer = await cluster.writer(['--instance-id', 'payload-writer', '--max-data-bytes', '100000']);
    const reader = await cluster.reader(['--instance-id', 'payload-reader']);
    await Promise.all([writer, reader].map((p) => waitConnected(p)));
    await writer.waitForLog((l) => /the broker accepts smaller messages than --max-data-bytes allows/.test(String(l['msg'])));
    assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', SCREEN)).status, 200);
    await putData(writer.url, 'limits', { max: 1 });
    await waitFor('the small dataset', async () => (await maxOn(reader.url).catch(() => null)) === 1);

    await putData(writer.url, 'limits', { max: 2, pad: 'x'.repeat(8000) });
    await putData(writer.url, 'other', { ok: true });
    await waitFor('the event behind the big one', async () => (await http(reader.url, 'GET', '/api/v1/data/other')).status === 200);
    assert.equal(await maxOn(reader.url), 1, 'the reader keeps the version it has');
    assert.ok(
      logsWith(
        writer,
        'sync event too large for the broker; not published (readers keep the version they have): raise max_payload of nats-server or lower --max-data-bytes',
      ).length >= 1,
    );
    const health = (await http(writer.url, 'GET', '/health')).body;
    assert.ok(health.sync.broker.unsendable >= 1);
    assert.equal(health.sync.broker.pending, 0);
  });
});

describe('the writer’s full state includes datasets', () => {
  const cluster = new SyncCluster();
  after(() => cluster.dispose());

  it('a writer restarted on a dir changed by hand publishes the added dataset and a tombstone for the removed one', async () => {
    await cluster.startNats();
    const dir = cluster.dir('svc-data-writer-');
    let writer = await cluster.writer(['--rules-dir', dir, '--instance-id', 'fs-writer']);
    const reader = await cluster.reader(['--instance-id', 'fs-reader']);
    await Promise.all([writer, reader].map((p) => waitConnected(p)));
    await putData(writer.url, 'kept', [1]);
    await putData(writer.url, 'removed', [2]);
    await waitFor('both datasets on the reader', async () => (await http(reader.url, 'GET', '/api/v1/data/removed')).status === 200);
    await cluster.stop(writer);
    // While the writer is down: one file removed, one added, by hand.
    writeFileSync(join(dir, 'data', 'added.json'), '{"hand": true}');
    rmSync(join(dir, 'data', 'removed.json'));
    writer = await cluster.writer(['--rules-dir', dir, '--instance-id', 'fs-writer']);
    await waitFor('the added dataset on the reader', async () => (await http(reader.url, 'GET', '/api/v1/data/added')).body?.hand === true);
    await waitFor('the removed dataset gone from the reader', async () => (await http(reader.url, 'GET', '/api/v1/data/removed')).status === 404);
    assert.deepEqual((await http(reader.url, 'GET', '/api/v1/data/kept')).body, [1]);
    const pass = logsWith(writer, 'published the full rule state').find((l) => l['data_published'] === 1 && l['data_tombstones'] === 1);
    assert.ok(pass, JSON.stringify(logsWith(writer, 'published the full rule state')));
  });
});

describe('datasets through a shared rules dir (file watcher)', () => {
  const cluster = new SyncCluster();
  let dir: string;
  let writer: ServerProcess;
  let reader: ServerProcess;

  before(async () => {
    dir = cluster.dir('svc-data-shared-');
    writer = await cluster.start([MT, '--role', 'writer', '--rules-dir', dir, '--watch-rules']);
    reader = await cluster.start([MT, '--role', 'reader', '--rules-dir', dir, '--watch-rules', '--writer-addr', writer.url]);
    await Promise.all([writer, reader].map((p) => p.waitForLog((l) => l['msg'] === 'rule watcher ready')));
    assert.equal((await http(writer.url, 'POST', '/api/v1/tenants', { id: 'acme' })).status, 201);
    for (const tenant of ['default', 'acme']) assert.equal((await http(writer.url, 'POST', '/api/v1/rulesets', SCREEN, as(tenant))).status, 200);
    await waitFor('the acme ruleset on the reader', async () => (await maxOn(reader.url, 'acme').catch(() => 'no')) === null);
  });
  after(() => cluster.dispose());

  it('a PUT, an update and a DELETE on the writer reach the reader; tenants stay apart', async () => {
    await putData(writer.url, 'limits', { max: 10 });
    await waitFor('the dataset on the reader', async () => (await maxOn(reader.url)) === 10, 10_000);
    await putData(writer.url, 'limits', { max: 11 });
    await waitFor('the update on the reader', async () => (await maxOn(reader.url)) === 11, 10_000);
    await putData(writer.url, 'limits', { max: 12 }, 'acme');
    await waitFor('the acme dataset on the reader', async () => (await maxOn(reader.url, 'acme')) === 12, 10_000);
    assert.equal(await maxOn(reader.url), 11);
    assert.equal((await http(writer.url, 'DELETE', '/api/v1/data/limits')).status, 204);
    await waitFor('the delete on the reader', async () => (await maxOn(reader.url)) === null, 10_000);
    assert.equal(await maxOn(reader.url, 'acme'), 12);
    const w = (await http(writer.url, 'GET', '/health')).body.sync.watcher;
    assert.ok(w.data.own_writes_skipped >= 1, `the writer does not reload its own data writes: ${JSON.stringify(w)}`);
    assert.equal(w.data.reloaded, 0);
  });

  it('a broken data file is logged and skipped; a hand edit is reloaded', async () => {
    await putData(writer.url, 'rates', { max: 1 });
    await waitFor('rates on the reader', async () => (await http(reader.url, 'GET', '/api/v1/data/rates')).status === 200, 10_000);
    writeFileSync(join(dir, 'data', 'rates.json'), '{"max": ');
    await waitFor('the warning', () =>
      logsWith(reader, 'data file skipped; the loaded version keeps serving').some((l) => String(l['path']).endsWith('rates.json')),
    );
    assert.deepEqual((await http(reader.url, 'GET', '/api/v1/data/rates')).body, { max: 1 });
    writeFileSync(join(dir, 'data', 'rates.json'), '{"max": 2}');
    for (const p of [reader, writer]) {
      await waitFor(`${p.url} to reload the hand edit`, async () => (await http(p.url, 'GET', '/api/v1/data/rates')).body?.max === 2, 10_000);
    }
  });

  it('a reader started after the writes loads them', async () => {
    const late = await cluster.start([MT, '--role', 'reader', '--rules-dir', dir, '--watch-rules']);
    assert.equal(await maxOn(late.url, 'acme'), 12);
    assert.equal(await maxOn(late.url), null);
    assert.deepEqual((await http(late.url, 'GET', '/api/v1/data/rates')).body, { max: 2 });
  });
});
