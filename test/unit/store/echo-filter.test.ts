import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EchoFilter } from '../../../src/store/echo-filter.js';
import { FakeClock } from '../sync/fake-clock.js';

const fp = (ino: number, size = 10, mtimeMs = 1000) => ({ ino, size, mtimeMs });

describe('EchoFilter (echo suppression, fake clock)', () => {
  it('recognises the file this instance wrote', () => {
    const echo = new EchoFilter({ clock: new FakeClock() });
    echo.remember('/r/a.json', fp(7));
    assert.equal(echo.isEcho('/r/a.json', fp(7)), true);
  });

  it('does not suppress another version of the file (hand edit, other process, new inode)', () => {
    const echo = new EchoFilter({ clock: new FakeClock() });
    echo.remember('/r/a.json', fp(7, 10, 1000));
    assert.equal(echo.isEcho('/r/a.json', fp(8, 10, 1000)), false, 'atomic rewrite by someone else: new inode');
    assert.equal(echo.isEcho('/r/a.json', fp(7, 11, 1000)), false, 'in-place edit: new size');
    assert.equal(echo.isEcho('/r/a.json', fp(7, 10, 1001)), false, 'in-place edit: new mtime');
    assert.equal(echo.isEcho('/r/b.json', fp(7)), false, 'another path');
  });

  it('a later own write replaces the remembered one', () => {
    const echo = new EchoFilter({ clock: new FakeClock() });
    echo.remember('/r/a.json', fp(1));
    echo.remember('/r/a.json', fp(2));
    assert.equal(echo.isEcho('/r/a.json', fp(1)), false);
    assert.equal(echo.isEcho('/r/a.json', fp(2)), true);
  });

  it('forgets a removed file', () => {
    const echo = new EchoFilter({ clock: new FakeClock() });
    echo.remember('/r/a.json', fp(1));
    echo.forget('/r/a.json');
    assert.equal(echo.isEcho('/r/a.json', fp(1)), false);
  });

  it('expires entries after the TTL and prunes them', async () => {
    const clock = new FakeClock();
    const echo = new EchoFilter({ clock, ttlMs: 1000 });
    echo.remember('/r/a.json', fp(1));
    await clock.advance(999);
    assert.equal(echo.isEcho('/r/a.json', fp(1)), true);
    await clock.advance(1);
    assert.equal(echo.isEcho('/r/a.json', fp(1)), false, 'expired');
    for (let i = 0; i < 5; i++) echo.remember(`/r/x${i}.json`, fp(i));
    await clock.advance(2000);
    echo.remember('/r/new.json', fp(9));
    assert.equal(echo.size, 1, 'expired entries were pruned');
  });
});
