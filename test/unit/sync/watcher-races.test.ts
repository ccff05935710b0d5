/**
 * Stale reads of the rules-dir watcher (docs/decisions.md "Echo on the watcher"): a watcher event
 * reads a file, and before what it read is applied, this instance's own change of that file (an
 * API put or delete) lands. What the watcher read is then older than the change and must not be
 * put over it: the file on disk holds the change, and the change's own file event is skipped as
 * this instance's write, so an applied stale read would leave memory and disk apart for good.
 *
 * The interleaving is made exact by the target the watcher is given: the real service, whose
 * first `applyChange` from the watcher first runs the API change to completion (the watcher has
 * read the file by then). Real files, real service, file events driven by hand.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'node:test';
import type { RuleService } from '../../../src/service/rule-service.js';
import { RuleWatcher, type CreateFsWatcher, type FsWatchOptions } from '../../../src/sync/watcher.js';
import { FakeClock } from './fake-clock.js';
import { CTX, makeFixture, ruleset, type Fixture } from './service-fixture.js';

class FakeFsWatcher extends EventEmitter {
  constructor(readonly options: FsWatchOptions) {
    super();
    setImmediate(() => this.emit('ready'));
  }
  add(): void {}
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

/**
 * The service, except that the first change the watcher applies waits for `race` first: the
 * watcher has read its file, and the instance's own change lands before the read is applied.
 */
function racing(service: RuleService, race: { run?: () => Promise<unknown> }): RuleService {
  return new Proxy(service, {
    get(target, prop, receiver) {
      if (prop === 'applyChange') {
        return async (...args: Parameters<RuleService['applyChange']>) => {
          const run = race.run;
          race.run = undefined;
          if (run && args[1] === 'watch') await run();
          return target.applyChange(...args);
        };
      }
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function setup() {
  fx = await makeFixture({ persistent: true, role: 'writer', data: { maxDataBytes: 10_000 } });
  const dir = fx.dir!;
  const created: FakeFsWatcher[] = [];
  const create: CreateFsWatcher = (_dir, options) => {
    const w = new FakeFsWatcher(options);
    created.push(w);
    return w as never;
  };
  const race: { run?: () => Promise<unknown> } = {};
  const w = new RuleWatcher({
    rulesDir: dir,
    target: racing(fx.service, race),
    logger: fx.logger,
    clock: new FakeClock(),
    poll: false,
    pollIntervalMs: 30_000,
    watchTenantsFile: false,
    recheckSince: Date.now() + 3_600_000,
    createFsWatcher: create,
  });
  watcher = w;
  await w.start();
  const path = (f: string) => join(dir, f);
  /** Reports a file event and waits until the watcher has handled it. */
  const event = async (file: string, kind = 'change') => {
    created.at(-1)!.change(path(file), kind);
    await w.flushNow();
  };
  return { fx, w, race, path, event };
}

const code = (service: RuleService, name: string) => {
  const record = service.current('default', name);
  return record === undefined ? undefined : (record.doc.steps as unknown as { t: { result: { code: string } } }).t.result.code;
};

describe('RuleWatcher: a read that this instance’s own change overtakes is not applied', () => {
  it('rules: a hand edit read just before an API update does not revert the update', async () => {
    const { fx, race, path, event } = await setup();
    await fx.service.putRuleset(CTX, ruleset('pricing', '1.0.0', 'API1'));
    await event('pricing.json');
    writeFileSync(path('pricing.json'), JSON.stringify(ruleset('pricing', '1.5.0', 'HAND')));
    race.run = () => fx.service.putRuleset(CTX, ruleset('pricing', '2.0.0', 'API2'));
    await event('pricing.json'); // reads HAND; the update lands before it is applied
    assert.equal(code(fx.service, 'pricing'), 'API2', 'the stale read was not applied');
    await event('pricing.json'); // the update's own event
    assert.equal(code(fx.service, 'pricing'), 'API2', 'memory holds the update');
    assert.equal(JSON.parse(readFileSync(path('pricing.json'), 'utf8')).config.version, '2.0.0', 'and so does the file');
  });

  it('rules: a read of no file just before an API create does not remove the new ruleset', async () => {
    const { fx, race, event } = await setup();
    race.run = () => fx.service.putRuleset(CTX, ruleset('fresh', '1.0.0', 'API'));
    await event('fresh.json', 'unlink'); // finds no file; the create lands before that is applied
    await event('fresh.json', 'add');
    assert.equal(code(fx.service, 'fresh'), 'API');
  });

  it('rules: a hand edit read just before an API delete does not bring the ruleset back', async () => {
    const { fx, race, path, event } = await setup();
    await fx.service.putRuleset(CTX, ruleset('gone', '1.0.0', 'API'));
    writeFileSync(path('gone.json'), JSON.stringify(ruleset('gone', '1.1.0', 'HAND')));
    race.run = () => fx.service.deleteRuleset(CTX, 'gone');
    await event('gone.json');
    assert.equal(fx.service.current('default', 'gone'), undefined, 'the stale read was not applied');
    await event('gone.json', 'unlink');
    assert.equal(existsSync(path('gone.json')), false);
    assert.equal(fx.service.current('default', 'gone'), undefined);
  });

  it('rules: a hand edit made after the read is still applied (the read is retried, not dropped)', async () => {
    const { fx, race, path, event } = await setup();
    await fx.service.putRuleset(CTX, ruleset('pricing', '1.0.0', 'API1'));
    writeFileSync(path('pricing.json'), JSON.stringify(ruleset('pricing', '1.5.0', 'HAND1')));
    race.run = async () => {
      await fx.service.putRuleset(CTX, ruleset('pricing', '2.0.0', 'API2'));
      writeFileSync(path('pricing.json'), JSON.stringify(ruleset('pricing', '3.0.0', 'HAND3')));
    };
    await event('pricing.json'); // reads HAND1; the update and HAND3 land before it is applied
    assert.equal(code(fx.service, 'pricing'), 'HAND3');
  });

  it('datasets: a hand edit read just before an API update or delete is not put back', async () => {
    const { fx, race, path, event } = await setup();
    const data = fx.data!;
    mkdirSync(path('data'), { recursive: true });
    await data.put(CTX, 'limits', { max: 1 });
    writeFileSync(path('data/limits.json'), JSON.stringify({ max: 50 }));
    race.run = () => data.put(CTX, 'limits', { max: 2 });
    await event('data/limits.json');
    assert.deepEqual(fx.service.currentData('default', 'limits')?.value, { max: 2 }, 'the stale read was not applied');
    await event('data/limits.json');
    assert.deepEqual(fx.service.currentData('default', 'limits')?.value, { max: 2 });
    writeFileSync(path('data/limits.json'), JSON.stringify({ max: 60 }));
    race.run = () => data.delete(CTX, 'limits');
    await event('data/limits.json');
    await event('data/limits.json', 'unlink');
    assert.equal(fx.service.currentData('default', 'limits'), undefined);
  });

  it('datasets: a hand edit that restores what an update replaced is applied', async () => {
    // The content an own change replaced is not ignored for ever: only a read older than the change is.
    const { fx, path, event } = await setup();
    const data = fx.data!;
    await data.put(CTX, 'limits', { max: 1 });
    await data.put(CTX, 'limits', { max: 2 });
    await event('data/limits.json');
    writeFileSync(path('data/limits.json'), JSON.stringify({ max: 1 }));
    await event('data/limits.json');
    assert.deepEqual(fx.service.currentData('default', 'limits')?.value, { max: 1 });
  });

  it('shadows: a hand edit read just before an API update or delete is not put back', async () => {
    const { fx, race, path, event } = await setup();
    await fx.service.putRuleset(CTX, ruleset('pricing', '1.0.0', 'API1'));
    await fx.service.putShadow(CTX, 'pricing', { candidate: ruleset('pricing', '2.0.0', 'S1'), sample_rate: 100 });
    const hand = (c: string) => JSON.stringify({ candidate: ruleset('pricing', '2.0.0', c), sample_rate: 10, since: '2026-11-24T08:00:00.000Z' });
    writeFileSync(path('shadows/pricing.json'), hand('HAND'));
    race.run = () => fx.service.putShadow(CTX, 'pricing', { candidate: ruleset('pricing', '2.0.0', 'S2'), sample_rate: 100 });
    await event('shadows/pricing.json');
    assert.equal(fx.service.currentShadow('default', 'pricing')?.sampleRate, 100, 'the stale read was not applied (nor published)');
    await event('shadows/pricing.json');
    assert.equal(fx.service.currentShadow('default', 'pricing')?.sampleRate, 100);
    writeFileSync(path('shadows/pricing.json'), hand('HAND2'));
    race.run = () => fx.service.deleteShadow(CTX, 'pricing');
    await event('shadows/pricing.json');
    assert.equal(fx.service.currentShadow('default', 'pricing'), undefined, 'the stale read was not applied');
    await event('shadows/pricing.json', 'unlink');
    assert.equal(fx.service.currentShadow('default', 'pricing'), undefined);
    unlinkSync(path('pricing.json'));
  });
});
