import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { stringify as toYaml } from 'yaml';
import { RuleWatcher, type CreateFsWatcher, type FsWatchOptions } from '../../../src/sync/watcher.js';
import { FakeClock } from './fake-clock.js';
import { CTX, makeFixture, ruleset, type Fixture } from './service-fixture.js';

/** A file-system watcher the test drives by hand. */
class FakeFsWatcher extends EventEmitter {
  closed = false;
  /** Paths the watcher was asked to watch besides its root (`add`). */
  readonly added: string[] = [];
  constructor(readonly options: FsWatchOptions) {
    super();
    setImmediate(() => this.emit('ready'));
  }
  async close(): Promise<void> {
    this.closed = true;
  }
  change(path: string, event = 'change'): void {
    this.emit('all', event, path);
  }
  add(paths: string[]): void {
    this.added.push(...paths);
  }
}

function fakeFactory() {
  const created: FakeFsWatcher[] = [];
  const create: CreateFsWatcher = (_dir, options) => {
    const w = new FakeFsWatcher(options);
    created.push(w);
    return w as never;
  };
  return { created, create };
}

let fx: Fixture | undefined;
afterEach(() => fx?.cleanup());

async function setup(options: { poll?: boolean; watchTenantsFile?: boolean; onTenantsFileChanged?: () => void } = {}) {
  fx = await makeFixture({ persistent: true });
  const clock = new FakeClock();
  const { created, create } = fakeFactory();
  const watcher = new RuleWatcher({
    rulesDir: fx.dir!,
    target: fx.service,
    logger: fx.logger,
    clock,
    poll: options.poll ?? false,
    pollIntervalMs: 30_000,
    watchTenantsFile: options.watchTenantsFile ?? false,
    ...(options.onTenantsFileChanged ? { onTenantsFileChanged: options.onTenantsFileChanged } : {}),
    recheckSince: Date.now() + 3_600_000, // nothing to re-check at start
    createFsWatcher: create,
  });
  await watcher.start();
  return { fx, clock, created, watcher, dir: fx.dir!, path: (f: string) => join(fx!.dir!, f) };
}

const json = (doc: unknown) => JSON.stringify(doc);

describe('RuleWatcher (fake file events, fake clock)', () => {
  it('adds, reloads and removes rules as their files change, without writing anything', async () => {
    const { fx, created, watcher, path } = await setup();
    writeFileSync(path('a.json'), json(ruleset('a', '1.0.0')));
    created[0]!.change(path('a.json'), 'add');
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'a')?.version, '1.0.0');

    writeFileSync(path('a.json'), json(ruleset('a', '1.1.0')));
    created[0]!.change(path('a.json'));
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'a')?.version, '1.1.0');
    assert.deepEqual(await fx.store.history?.versions('default', 'a'), [], 'a reload writes no history: the file is the truth');

    unlinkSync(path('a.json'));
    created[0]!.change(path('a.json'), 'unlink');
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'a'), undefined);
    assert.deepEqual(
      fx.events.map((e) => `${e.kind}:${e.origin}`),
      ['ruleset.put:watch', 'ruleset.put:watch', 'ruleset.delete:watch'],
    );
  });

  it('batches a burst of 50 changes into one reload after the 200 ms debounce', async () => {
    const { fx, created, clock, watcher, path } = await setup();
    for (let i = 0; i < 50; i++) {
      writeFileSync(path(`b${i}.json`), json(ruleset(`b${i}`)));
      created[0]!.change(path(`b${i}.json`), 'add');
      await clock.advance(1);
    }
    await clock.advance(150);
    assert.equal(fx.logger.find('rule files reloaded').length, 0, 'nothing before the quiet period');
    await clock.advance(50);
    await watcher.flushNow(); // waits for the flush the timer started
    const reloads = fx.logger.find('rule files reloaded');
    assert.equal(reloads.length, 1);
    assert.equal(reloads[0]!['batch'], 50);
    assert.equal(reloads[0]!['applied'], 50);
    assert.equal(fx.store.count(), 50);
  });

  it('logs and skips a broken file; the loaded version keeps serving', async () => {
    const { fx, created, watcher, path } = await setup();
    writeFileSync(path('c.json'), json(ruleset('c', '1.0.0')));
    created[0]!.change(path('c.json'), 'add');
    await watcher.flushNow();
    writeFileSync(path('c.json'), '{"config": {"name": "c", ');
    created[0]!.change(path('c.json'));
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'c')?.version, '1.0.0');
    const skipped = fx.logger.find('rule file skipped; the loaded version keeps serving');
    assert.equal(skipped.length, 1);
    assert.equal(skipped[0]!['serving_version'], '1.0.0');
    // A file whose ruleset is invalid is skipped the same way.
    writeFileSync(path('c.json'), json({ config: { name: 'c', entry_step: 'nope' }, steps: {} }));
    created[0]!.change(path('c.json'));
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'c')?.version, '1.0.0');
    // A file whose name disagrees with config.name is skipped too.
    writeFileSync(path('d.json'), json(ruleset('other')));
    created[0]!.change(path('d.json'), 'add');
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'd'), undefined);
    assert.equal(fx.store.get('default', 'other'), undefined);
  });

  it('does not reload the files this instance writes (echo suppression), but reloads a later hand edit', async () => {
    const { fx, created, watcher, path } = await setup();
    await fx.service.putRuleset(CTX, ruleset('e', '1.0.0'));
    await fx.service.putRuleset(CTX, ruleset('e', '2.0.0'));
    created[0]!.change(path('e.json'));
    await watcher.flushNow();
    const reload = fx.logger.find('rule files reloaded').at(-1)!;
    assert.equal(reload['own'], 1, 'recognised as its own write');
    assert.deepEqual(
      fx.events.map((e) => e.origin),
      ['api', 'api'],
      'no reload event',
    );

    writeFileSync(path('e.json'), json(ruleset('e', '3.0.0')));
    created[0]!.change(path('e.json'));
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'e')?.version, '3.0.0');
    assert.deepEqual(
      fx.events.map((e) => e.origin),
      ['api', 'api', 'watch'],
    );
  });

  it('follows the format precedence: removing x.json serves x.yaml', async () => {
    const { fx, created, watcher, path } = await setup();
    writeFileSync(path('x.json'), json(ruleset('x', 'json')));
    writeFileSync(path('x.yaml'), toYaml(ruleset('x', 'yaml')));
    created[0]!.change(path('x.json'), 'add');
    created[0]!.change(path('x.yaml'), 'add');
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'x')?.version, 'json');
    unlinkSync(path('x.json'));
    created[0]!.change(path('x.json'), 'unlink');
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'x')?.version, 'yaml');
  });

  it('re-checks files changed before it was ready', async () => {
    fx = await makeFixture({ persistent: true });
    writeFileSync(join(fx.dir!, 'early.json'), json(ruleset('early')));
    const { create } = fakeFactory();
    const clock = new FakeClock();
    const watcher = new RuleWatcher({
      rulesDir: fx.dir!,
      target: fx.service,
      logger: fx.logger,
      clock,
      poll: false,
      pollIntervalMs: 30_000,
      watchTenantsFile: false,
      recheckSince: Date.now() - 60_000,
      createFsWatcher: create,
    });
    await watcher.start();
    await watcher.flushNow();
    assert.equal(fx.store.get('default', 'early')?.version, '1.0.0');
    await watcher.close();
  });

  it('falls back to polling when native events are unavailable', async () => {
    const { fx, created, watcher } = await setup();
    assert.equal(created[0]!.options.usePolling, false);
    assert.equal(watcher.status().mode, 'native');
    const err = Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
    created[0]!.emit('error', err);
    for (let i = 0; i < 100 && created.length < 2; i++) await new Promise((r) => setImmediate(r));
    assert.equal(created.length, 2);
    assert.equal(created[0]!.closed, true);
    assert.equal(created[1]!.options.usePolling, true);
    assert.equal(created[1]!.options.interval, 30_000);
    assert.equal(watcher.status().mode, 'polling');
    assert.equal(fx.logger.find('native file events unavailable; the rule watcher falls back to polling').length, 1);
  });

  it('polls from the start when polling is forced', async () => {
    const { created, watcher } = await setup({ poll: true });
    assert.equal(created[0]!.options.usePolling, true);
    assert.equal(watcher.status().mode, 'polling');
  });

  it('re-reads a new tenant directory: rule files that got no event of their own are loaded', async () => {
    // chokidar reads a new directory before it watches it: a file landing in between gets no event.
    const { fx, created, watcher, path } = await setup({ watchTenantsFile: true });
    mkdirSync(path('tenants/acme'), { recursive: true });
    writeFileSync(path('tenants/acme/r.json'), json(ruleset('r', 'acme-1')));
    writeFileSync(path('r.json'), json(ruleset('r', 'default-1')));
    created[0]!.change(path('tenants/acme'), 'addDir');
    await watcher.flushNow();
    assert.equal(fx.store.get('acme', 'r')?.version, 'acme-1');
    assert.equal(fx.store.get('default', 'r'), undefined, 'only the new directory is re-read');

    // A new tenants/ directory: every tenant directory in it is re-read.
    mkdirSync(path('tenants/globex'));
    mkdirSync(path('tenants/initech'));
    writeFileSync(path('tenants/globex/p.json'), json(ruleset('p', 'globex-1')));
    writeFileSync(path('tenants/initech/q.yaml'), toYaml(ruleset('q', 'initech-1')));
    created[0]!.change(path('tenants'), 'addDir');
    await watcher.flushNow();
    assert.equal(fx.store.get('globex', 'p')?.version, 'globex-1');
    assert.equal(fx.store.get('initech', 'q')?.version, 'initech-1');
    assert.equal(fx.store.get('acme', 'r')?.version, 'acme-1', 'unchanged');
  });

  it('watches a re-read tenant directory itself, so that a file landing in it later is reported even if chokidar missed the directory', async () => {
    const { created, watcher, path } = await setup({ watchTenantsFile: true });
    mkdirSync(path('tenants/acme'), { recursive: true });
    writeFileSync(path('tenants/acme/r.json'), json(ruleset('r', 'acme-1')));
    created[0]!.change(path('tenants/acme'), 'addDir');
    await watcher.flushNow();
    assert.deepEqual(created[0]!.added, [path('tenants/acme/r.json'), path('tenants/acme')]);
    // An empty new tenant directory is watched too.
    mkdirSync(path('tenants/empty'));
    created[0]!.change(path('tenants/empty'), 'addDir');
    await watcher.flushNow();
    assert.deepEqual(created[0]!.added.slice(2), [path('tenants/empty')]);
  });

  it('hands tenants.json changes to the tenant hook in multi-tenancy mode only', async () => {
    let calls = 0;
    const mt = await setup({ watchTenantsFile: true, onTenantsFileChanged: () => void calls++ });
    mt.created[0]!.change(mt.path('tenants.json'));
    await mt.watcher.flushNow();
    assert.equal(calls, 1);
    await mt.watcher.close();
    mt.fx.cleanup();

    let calls2 = 0;
    const st = await setup({ watchTenantsFile: false, onTenantsFileChanged: () => void calls2++ });
    st.created[0]!.change(st.path('tenants.json'));
    await st.watcher.flushNow();
    assert.equal(calls2, 0);
  });
});
