/**
 * The rules-dir watcher and shadow files (docs/changing-rules.md "Shared rules dir"), with file
 * events driven by hand and a fake clock over a real service and temp dir: shadow files of every
 * tenant are applied as `shadow.put` and removed as `shadow.delete`; a broken one is logged and
 * skipped while the loaded shadow keeps running; this instance's own write is not reapplied; the
 * start-up re-check finds shadow files changed meanwhile.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import { RuleWatcher, type CreateFsWatcher, type FsWatchOptions } from '../../../src/sync/watcher.js';
import { FakeClock } from './fake-clock.js';
import { CTX, makeFixture, ruleset, type Fixture } from './service-fixture.js';

class FakeFsWatcher extends EventEmitter {
  constructor(readonly options: FsWatchOptions) {
    super();
    setImmediate(() => this.emit('ready'));
  }
  /** The paths the watcher asked to watch besides the rules dir (`FsWatcherLike.add`). */
  readonly added: string[] = [];
  add(paths: string[]): void {
    this.added.push(...paths);
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

const SHADOW = (code: string) => JSON.stringify({ candidate: ruleset('pricing', '2.0.0', code), sample_rate: 50, since: '2026-11-24T08:00:00.000Z' });

async function setup(recheckSince = Date.now() + 3_600_000) {
  fx = await makeFixture({ persistent: true, role: 'writer' });
  const dir = fx.dir!;
  writeFileSync(join(dir, 'pricing.json'), JSON.stringify(ruleset('pricing', '1.0.0', 'OLD')));
  const created: FakeFsWatcher[] = [];
  const create: CreateFsWatcher = (_dir, options) => {
    const w = new FakeFsWatcher(options);
    created.push(w);
    return w as never;
  };
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
  return { fx, w, fs: () => created.at(-1)!, changes, path: (f: string) => join(dir, f) };
}

describe('RuleWatcher with shadow files (fake file events)', () => {
  it('a shadow file found only by re-reading its new directory is given to the file watcher to watch (so its deletion is reported)', async () => {
    // chokidar reads a new directory before it watches it: a file that lands in between gets no
    // event of its own, and chokidar would report nothing when it is deleted.
    const { fx, w, fs, path } = await setup();
    await w.start();
    mkdirSync(path('shadows'));
    writeFileSync(path('shadows/pricing.json'), SHADOW('NEW'));
    fs().change(path('shadows'), 'addDir'); // no event for the file itself
    await w.flushNow();
    assert.equal(fx.service.currentShadow('default', 'pricing')?.sampleRate, 50);
    assert.deepEqual(fs().added, [path('shadows/pricing.json'), path('shadows')]);
  });

  it('applies an added or changed shadow file as shadow.put and an unlinked one as shadow.delete', async () => {
    const { fx, w, fs, changes, path } = await setup();
    await w.start();
    fs().change(path('pricing.json'), 'add');
    await w.flushNow();
    mkdirSync(path('shadows'));
    writeFileSync(path('shadows/pricing.json'), SHADOW('NEW'));
    fs().change(path('shadows/pricing.json'), 'add');
    await w.flushNow();
    assert.equal(fx.service.currentShadow('default', 'pricing')?.sampleRate, 50);
    writeFileSync(path('shadows/pricing.json'), SHADOW('NEWER'));
    fs().change(path('shadows/pricing.json'));
    await w.flushNow();
    assert.equal((fx.service.currentShadow('default', 'pricing')?.candidate as any).steps.t.result.code, 'NEWER');
    unlinkSync(path('shadows/pricing.json'));
    fs().change(path('shadows/pricing.json'), 'unlink');
    await w.flushNow();
    assert.equal(fx.service.currentShadow('default', 'pricing'), undefined);
    assert.deepEqual(
      changes.filter((c) => c.startsWith('shadow')),
      ['shadow.put:watch', 'shadow.put:watch', 'shadow.delete:watch'],
    );
    assert.deepEqual(w.status().shadows, { reloaded: 2, removed: 1, own_writes_skipped: 0, failed: 0 });
  });

  it('skips a broken shadow file (logged); the loaded shadow keeps running', async () => {
    const { fx, w, fs, path } = await setup();
    await w.start();
    fs().change(path('pricing.json'), 'add');
    mkdirSync(path('shadows'));
    writeFileSync(path('shadows/pricing.json'), SHADOW('NEW'));
    fs().change(path('shadows/pricing.json'), 'add');
    await w.flushNow();
    const before = fx.service.currentShadow('default', 'pricing')?.version;
    assert.ok(before);
    writeFileSync(path('shadows/pricing.json'), '{"candidate": ');
    fs().change(path('shadows/pricing.json'));
    await w.flushNow();
    assert.equal(fx.logger.find('shadow file skipped; the loaded version keeps serving').length, 1);
    assert.equal(fx.service.currentShadow('default', 'pricing')?.version, before);
    assert.equal(w.status().shadows.failed, 1);
  });

  it('does not reapply this instance’s own shadow write', async () => {
    const { fx, w, fs, changes, path } = await setup();
    await w.start();
    fs().change(path('pricing.json'), 'add');
    await w.flushNow();
    const put = await fx.service.putShadow(CTX, 'pricing', { candidate: ruleset('pricing', '2.0.0', 'NEW'), sample_rate: 100 });
    assert.ok(put);
    fs().change(path('shadows/pricing.json'), 'add');
    await w.flushNow();
    assert.equal(w.status().shadows.own_writes_skipped, 1);
    assert.deepEqual(
      changes.filter((c) => c.startsWith('shadow')),
      ['shadow.put:api'],
    );
  });

  it('a hand edit that restores what an own update replaced is applied (a read older than the update is not: watcher-races.test.ts)', async () => {
    const { fx, w, fs, changes, path } = await setup();
    await w.start();
    fs().change(path('pricing.json'), 'add');
    await w.flushNow();
    const file = path('shadows/pricing.json');
    await fx.service.putShadow(CTX, 'pricing', { candidate: ruleset('pricing', '2.0.0', 'OLD'), sample_rate: 100 });
    const old = readFileSync(file, 'utf8');
    const first = fx.service.currentShadow('default', 'pricing')?.version;
    await fx.service.putShadow(CTX, 'pricing', { candidate: ruleset('pricing', '2.0.0', 'NEW'), sample_rate: 100 });
    fs().change(file);
    await w.flushNow();
    assert.equal(w.status().shadows.own_writes_skipped, 1, 'the update’s own event');
    writeFileSync(file, old);
    fs().change(file);
    await w.flushNow();
    assert.equal(fx.service.currentShadow('default', 'pricing')?.version, first, 'the hand edit is applied');
    assert.deepEqual(
      changes.filter((c) => c.startsWith('shadow')),
      ['shadow.put:api', 'shadow.put:api', 'shadow.put:watch'],
    );
  });

  it('re-checks at start: shadow files changed since are applied', async () => {
    const { fx, w, path } = await setup(Date.now() - 60_000);
    mkdirSync(path('shadows'));
    writeFileSync(path('shadows/pricing.json'), SHADOW('NEW'));
    await w.start();
    await w.flushNow();
    assert.equal(fx.service.currentShadow('default', 'pricing')?.sampleRate, 50);
  });
});
