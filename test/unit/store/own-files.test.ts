/**
 * The record of own file changes (src/store/own-files.ts, fake clock): echo markers, stale-read
 * tokens, expiry; and, as a property over random histories, that a token is never current once
 * an own change of its path landed or failed, pruning included (and current otherwise while
 * nothing was pruned).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { OwnFiles, StaleRead } from '../../../src/store/own-files.js';
import { FakeClock } from '../sync/fake-clock.js';

describe('OwnFiles: echo markers', () => {
  it('recognises what this instance last wrote, and nothing else', () => {
    const own = new OwnFiles({ clock: new FakeClock() });
    own.changed('/r/a.json', '7:10:1000');
    assert.equal(own.isOwn('/r/a.json', '7:10:1000'), true);
    assert.equal(own.isOwn('/r/a.json', '8:10:1000'), false, 'another version of the file');
    assert.equal(own.isOwn('/r/b.json', '7:10:1000'), false, 'another path');
    own.changed('/r/a.json', 'v2');
    assert.equal(own.isOwn('/r/a.json', '7:10:1000'), false, 'a later own write replaces it');
    assert.equal(own.isOwn('/r/a.json', 'v2'), true);
    own.failed('/r/a.json');
    assert.equal(own.isOwn('/r/a.json', 'v2'), true, 'a failed change keeps the marker');
    own.changed('/r/a.json', undefined);
    assert.equal(own.isOwn('/r/a.json', 'v2'), false, 'removed');
  });

  it('expires entries after the TTL and prunes them', async () => {
    const clock = new FakeClock();
    const own = new OwnFiles({ clock, ttlMs: 1000 });
    own.changed('/r/a.json', 'm');
    await clock.advance(999);
    assert.equal(own.isOwn('/r/a.json', 'm'), true);
    await clock.advance(1);
    assert.equal(own.isOwn('/r/a.json', 'm'), false, 'expired');
    for (let i = 0; i < 5; i++) own.changed(`/r/x${i}.json`, 'm');
    await clock.advance(2000);
    own.changed('/r/new.json', 'm');
    assert.equal(own.size, 1, 'expired entries were pruned');
  });
});

describe('OwnFiles: stale-read tokens', () => {
  it('a token is stale once an own change (or a failed one) of its path lands, and only of its path', () => {
    const own = new OwnFiles({ clock: new FakeClock() });
    const a = own.token('/r/a.json');
    const b = own.token('/r/b.json');
    assert.equal(own.isCurrent(a), true);
    own.changed('/r/a.json', 'm');
    assert.equal(own.isCurrent(a), false);
    assert.equal(own.isCurrent(b), true, 'another path');
    assert.throws(
      () => own.check(a),
      (err: unknown) => err instanceof StaleRead && err.path === '/r/a.json',
    );
    assert.doesNotThrow(() => own.check(b));
    assert.doesNotThrow(() => own.check(undefined), 'no token: no check (the API, the broker)');
    const a2 = own.token('/r/a.json');
    assert.equal(own.isCurrent(a2), true, 'a token taken after the change');
    own.failed('/r/a.json');
    assert.equal(own.isCurrent(a2), false, 'a failed change may have touched the file');
  });

  it('pruning an entry never makes an older token current again', async () => {
    const clock = new FakeClock();
    const own = new OwnFiles({ clock, ttlMs: 1000 });
    const before = own.token('/r/a.json');
    own.changed('/r/a.json', 'm');
    await clock.advance(5000);
    own.changed('/r/other.json', 'm'); // prunes /r/a.json's entry
    assert.equal(own.size, 1);
    assert.equal(own.isCurrent(before), false);
    const after = own.token('/r/a.json');
    assert.equal(own.isCurrent(after), true, 'a token of a pruned path is current until its next change');
    own.changed('/r/a.json', 'm');
    assert.equal(own.isCurrent(after), false);
  });

  it('property: a token is never current after an own change of its path landed or failed; it stays current otherwise while nothing is pruned', async () => {
    const paths = ['/a', '/b', '/c'];
    const op = fc.oneof(
      fc.record({ kind: fc.constant('token' as const), path: fc.constantFrom(...paths) }),
      fc.record({ kind: fc.constant('changed' as const), path: fc.constantFrom(...paths), marker: fc.option(fc.constantFrom('x', 'y')) }),
      fc.record({ kind: fc.constant('failed' as const), path: fc.constantFrom(...paths) }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 0, max: 800 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const clock = new FakeClock();
        const own = new OwnFiles({ clock, ttlMs: 1000 });
        // `pruned`: a change ran after the clock moved, so it may have pruned entries, which may
        // make any token stale (conservative: one more read); never an overtaken one current.
        const held: { token: ReturnType<OwnFiles['token']>; overtaken: boolean; pruned: boolean }[] = [];
        let clockMoved = false;
        for (const o of ops) {
          if (o.kind === 'token') held.push({ token: own.token(o.path), overtaken: false, pruned: false });
          else if (o.kind === 'wait') {
            await clock.advance(o.ms);
            clockMoved ||= o.ms > 0;
          } else {
            if (o.kind === 'changed' && clockMoved) {
              for (const h of held) h.pruned = true;
              clockMoved = false;
            }
            if (o.kind === 'changed') own.changed(o.path, o.marker ?? undefined);
            else own.failed(o.path);
            for (const h of held) if (h.token.path === o.path) h.overtaken = true;
          }
          for (const h of held) {
            if (h.overtaken) assert.equal(own.isCurrent(h.token), false);
            else if (!h.pruned) assert.equal(own.isCurrent(h.token), true);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
