/**
 * The rules-dir watcher and data files (docs/data-sync.md "Shared rules dir"), with file events
 * driven by hand and a fake clock over a real service, data store and temp dir: data files of
 * every tenant are loaded, reloaded and removed; broken or oversized ones are logged and
 * skipped while the loaded version keeps serving; this instance's own writes are not reloaded;
 * a new data directory is re-read; the start-up re-check finds files changed meanwhile.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { RuleWatcher, type CreateFsWatcher, type FsWatchOptions } from '../../../src/sync/watcher.js';
import { FakeClock } from './fake-clock.js';
import { CTX, makeFixture, type Fixture } from './service-fixture.js';

class FakeFsWatcher extends EventEmitter {
  constructor(readonly options: FsWatchOptions) {
    super();
    setImmediate(() => this.emit('ready'));
  }
  async close(): Promise<void> {}
  change(path: string, event = 'change'): void {
    this.emit('all', event, path);
  }
}

let fx: Fixture | undefined;
let watcher: RuleWatcher | undefined;
afterEach(async () => {
  await watcher?.close();
  fx?.cleanup();
});

async function setup(recheckSince = Date.now() + 3_600_000) {
  fx = await makeFixture({ persistent: true, role: 'writer', data: { maxDataBytes: 100 } });
  const created: FakeFsWatcher[] = [];
  const create: CreateFsWatcher = (_dir, options) => {
    const w = new FakeFsWatcher(options);
    created.push(w);
    return w as never;
  };
  const dir = fx.dir!;
  const w = new RuleWatcher({
    rulesDir: dir,
    target: fx.service,
    logger: fx.logger,
    clock: new FakeClock(),
    poll: false,
    pollIntervalMs: 30_000,
    watchTenantsFile: false,
    recheckSince,
    createFsWatcher: create,
  });
  watcher = w;
  const changes: string[] = [];
  fx.service.subscribe((c) => changes.push(`${c.kind}:${c.origin}`));
  return {
    fx,
    w,
    fs: () => created.at(-1)!,
    changes,
    path: (f: string) => join(dir, f),
    value: (t: string, n: string) => fx!.service.currentData(t, n)?.value,
  };
}

describe('RuleWatcher with data files (fake file events)', () => {
  it('loads, reloads and removes data files of the default tenant and of others, writing nothing', async () => {
    const { fx, w, fs, changes, path, value } = await setup();
    await w.start();
    mkdirSync(path('data'));
    mkdirSync(path('tenants/acme/data'), { recursive: true });
    writeFileSync(path('data/limits.json'), '{"max": 5}');
    writeFileSync(path('tenants/acme/data/limits.json'), '{"max": 6}');
    fs().change(path('data/limits.json'), 'add');
    fs().change(path('tenants/acme/data/limits.json'), 'add');
    await w.flushNow();
    assert.deepEqual(value('default', 'limits'), { max: 5 });
    assert.deepEqual(value('acme', 'limits'), { max: 6 });

    writeFileSync(path('data/limits.json'), '{"max": 8}');
    fs().change(path('data/limits.json'));
    await w.flushNow();
    assert.deepEqual(value('default', 'limits'), { max: 8 });
    assert.equal(fx.logger.find('dataset reloaded from file').length, 3);

    unlinkSync(path('tenants/acme/data/limits.json'));
    fs().change(path('tenants/acme/data/limits.json'), 'unlink');
    await w.flushNow();
    assert.equal(value('acme', 'limits'), undefined);
    assert.deepEqual(changes, ['data.put:watch', 'data.put:watch', 'data.put:watch', 'data.delete:watch']);
    assert.deepEqual(w.status().data, { reloaded: 3, removed: 1, own_writes_skipped: 0, failed: 0 });
  });

  it('skips a broken or oversized data file; the loaded version keeps serving', async () => {
    const { fx, w, fs, path, value } = await setup();
    await w.start();
    mkdirSync(path('data'));
    writeFileSync(path('data/limits.json'), '{"max": 1}');
    fs().change(path('data/limits.json'), 'add');
    await w.flushNow();
    writeFileSync(path('data/limits.json'), '{"max": ');
    fs().change(path('data/limits.json'));
    await w.flushNow();
    const skipped = fx.logger.find('data file skipped; the loaded version keeps serving');
    assert.equal(skipped.length, 1);
    assert.match(String(skipped[0]!['err']), /not JSON/);
    writeFileSync(path('data/limits.json'), JSON.stringify({ max: 2, pad: 'x'.repeat(200) }));
    fs().change(path('data/limits.json'));
    await w.flushNow();
    assert.equal(fx.logger.find('synchronized dataset skipped: over --max-data-bytes; the loaded version keeps serving').length, 1);
    assert.deepEqual(value('default', 'limits'), { max: 1 });
    assert.equal(w.status().data?.failed, 2);
  });

  it('does not reload this instance’s own writes, but does reload a hand edit of the same file', async () => {
    const { fx, w, fs, changes, path, value } = await setup();
    await w.start();
    await fx.data!.put(CTX, 'limits', { max: 3 });
    fs().change(path('data/limits.json'), 'add');
    await w.flushNow();
    assert.equal(w.status().data?.own_writes_skipped, 1);
    writeFileSync(path('data/limits.json'), '{"max":4}');
    fs().change(path('data/limits.json'));
    await w.flushNow();
    assert.deepEqual(value('default', 'limits'), { max: 4 });
    assert.deepEqual(changes, ['data.put:api', 'data.put:watch']);
  });

  it('re-reads a new data directory whose file events were missed', async () => {
    const { w, fs, path, value } = await setup();
    await w.start();
    mkdirSync(path('tenants/newco/data'), { recursive: true });
    writeFileSync(path('tenants/newco/data/rates.json'), '[1,2]');
    fs().change(path('tenants/newco/data'), 'addDir'); // no event for the file itself
    await w.flushNow();
    assert.deepEqual(value('newco', 'rates'), [1, 2]);
    // A new tenant directory that already holds a data directory: re-read with its rule files.
    mkdirSync(path('tenants/later/data'), { recursive: true });
    writeFileSync(path('tenants/later/data/x.json'), '"x"');
    fs().change(path('tenants/later'), 'addDir');
    await w.flushNow();
    assert.equal(value('later', 'x'), 'x');
  });

  it('re-checks at start: data files changed since, and datasets in memory whose file is gone', async () => {
    const { fx, w, path, value } = await setup(Date.now() - 60_000);
    mkdirSync(path('data'));
    writeFileSync(path('data/fresh.json'), '{"a":1}');
    await fx.service.applyChange({ kind: 'data.put', tenant: 'default', name: 'stale', value: 1 }, 'sync', false);
    await w.start();
    await w.flushNow();
    assert.deepEqual(value('default', 'fresh'), { a: 1 });
    assert.equal(value('default', 'stale'), undefined, 'no file: removed');
  });
});
