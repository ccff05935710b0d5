import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { afterEach, describe, it } from 'node:test';
import { prepareSync, startSync, type SyncConfig } from '../../../src/sync/index.js';
import { loadNatsApi } from '../../../src/sync/nats-api.js';
import type { CreateFsWatcher } from '../../../src/sync/watcher.js';
import { FakeClock } from './fake-clock.js';
import { makeFixture, type Fixture } from './service-fixture.js';

const base: SyncConfig = {
  role: 'writer',
  rulesDir: null,
  watchRules: false,
  watchPoll: false,
  watchPollIntervalMs: 30_000,
  syncUrl: null,
  syncSubjectPrefix: 'svc.rules',
  instanceId: 'unit-1',
  republishIntervalSecs: 300,
  multiTenancyEnabled: false,
  syncToken: null,
  syncUser: null,
  syncPassword: null,
  syncCredsFile: null,
  syncTlsCa: null,
};
const missing = { transport: 'svc-test-no-such-nats-transport', jetstream: 'svc-test-no-such-nats-jetstream' };

let fx: Fixture | undefined;
afterEach(() => fx?.cleanup());

describe('startSync', () => {
  it('without sync flags does nothing and adds no sync block to /health', async () => {
    fx = await makeFixture();
    const sync = await startSync({ config: base, target: fx.service, logger: fx.logger });
    assert.equal(sync.status(), null);
    assert.equal(fx.service.health().sync, undefined);
    await sync.close();
  });

  it('where the NATS client is not installed, --sync-url logs that broker sync is unavailable and has no effect', async () => {
    const loaded = await loadNatsApi(missing);
    assert.equal(loaded.ok, false);
    for (const role of ['writer', 'reader'] as const) {
      fx?.cleanup();
      fx = await makeFixture({ role });
      const sync = await startSync({
        config: { ...base, role, syncUrl: 'nats://127.0.0.1:1' },
        target: fx.service,
        logger: fx.logger,
        natsModules: missing,
      });
      const warn = fx.logger.lines.find((l) => l.level === 'warn' && /broker sync unavailable/.test(l.msg));
      assert.ok(warn, `${role}: logged`);
      assert.match(String(warn['reason']), /svc-test-no-such-nats-transport/);
      const health = fx.service.health().sync as Record<string, any>;
      assert.equal(health['connected'], null);
      assert.deepEqual(health['broker'], { enabled: false, reason: 'NATS client not installed' });
      assert.equal(fx.logger.lines.filter((l) => /broker/.test(l.msg) && l !== warn).length, 0, 'no connection attempt');
      await sync.close();
    }
  });

  it('/health has the sync block while the watcher starts, and before it starts (prepareSync)', async () => {
    fx = await makeFixture({ role: 'reader', persistent: true });
    // A file-system watcher whose initial scan ends only when the test says so.
    let scanDone: (() => void) | undefined;
    const createFsWatcher: CreateFsWatcher = () => {
      const w = Object.assign(new EventEmitter(), { close: async () => undefined });
      scanDone = () => w.emit('ready');
      return w;
    };
    const config: SyncConfig = { ...base, role: 'reader', rulesDir: fx.dir!, watchRules: true, watchPoll: true, watchPollIntervalMs: 100 };
    const watcherOf = () => (fx!.service.health().sync as Record<string, any> | undefined)?.['watcher'];
    const common = { target: fx.service, logger: fx.logger, clock: new FakeClock(), createFsWatcher, recheckSince: Date.now() + 3_600_000 };

    // startSync: the block is there while the watcher's initial scan runs.
    const starting = startSync({ config, ...common });
    for (let i = 0; i < 100 && !scanDone; i++) await new Promise((r) => setImmediate(r));
    assert.ok(scanDone, 'the watcher was created');
    assert.deepEqual([watcherOf()?.mode, watcherOf()?.ready], ['polling', false]);
    scanDone!();
    const sync = await starting;
    assert.deepEqual([watcherOf()?.mode, watcherOf()?.ready], ['polling', true]);
    await sync.close();

    // prepareSync: the block is there before anything starts (a server prepares sync before it listens).
    fx.cleanup();
    fx = await makeFixture({ role: 'reader', persistent: true });
    scanDone = undefined;
    const prepared = prepareSync({
      config: { ...config, rulesDir: fx.dir!, syncUrl: 'nats://127.0.0.1:1' },
      ...common,
      target: fx.service,
      logger: fx.logger,
      natsModules: missing,
    });
    const early = fx.service.health().sync as Record<string, any>;
    assert.equal(early['mode'], 'broker+watcher');
    assert.equal(early['connected'], false);
    assert.deepEqual(early['broker'], { enabled: true, url: 'nats://127.0.0.1:1', subject_prefix: 'svc.rules', connected: false, last_error: null });
    assert.deepEqual([early['watcher']?.mode, early['watcher']?.ready], ['polling', false]);
    assert.equal(scanDone, undefined, 'nothing started yet');
    const started = prepared.start();
    for (let i = 0; i < 100 && !scanDone; i++) await new Promise((r) => setImmediate(r));
    scanDone!();
    await started;
    const late = fx.service.health().sync as Record<string, any>;
    assert.equal(late['mode'], 'watcher', 'the NATS client is missing here');
    assert.deepEqual(late['broker'], { enabled: false, reason: 'NATS client not installed' });
    assert.equal(late['watcher']?.ready, true);
    await prepared.close();
  });

  it('a standalone instance ignores --sync-url with a warning', async () => {
    fx = await makeFixture();
    const sync = await startSync({ config: { ...base, role: 'standalone', syncUrl: 'nats://127.0.0.1:1' }, target: fx.service, logger: fx.logger });
    assert.ok(fx.logger.lines.some((l) => l.level === 'warn' && /has no effect on a standalone/.test(l.msg)));
    assert.equal((sync.status() as Record<string, any>)['broker']['enabled'], false);
    await sync.close();
  });

  it('loads the installed NATS client on demand', async () => {
    const loaded = await loadNatsApi();
    assert.ok(loaded.ok, loaded.ok ? '' : loaded.reason);
    assert.equal(typeof loaded.api.connect, 'function');
    assert.equal(typeof loaded.api.jetstream, 'function');
  });
});
