import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LockTimeoutError, RwLock } from '../../../src/store/rw-lock.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('RwLock', () => {
  it('lets readers share and keeps a writer exclusive', async () => {
    const lock = new RwLock();
    const r1 = await lock.acquireRead();
    const r2 = await lock.acquireRead();
    assert.deepEqual(lock.state(), { readers: 2, writer: false, waiting: 0 });
    let wrote = false;
    const w = lock.acquireWrite().then((release) => {
      wrote = true;
      return release;
    });
    await tick();
    assert.equal(wrote, false, 'writer waits for readers');
    r1();
    await tick();
    assert.equal(wrote, false);
    r2();
    const release = await w;
    assert.equal(wrote, true);
    assert.deepEqual(lock.state(), { readers: 0, writer: true, waiting: 0 });
    release();
    release(); // idempotent
    assert.deepEqual(lock.state(), { readers: 0, writer: false, waiting: 0 });
  });

  it('grants in arrival order; a reader arriving behind a waiting writer waits for it', async () => {
    const lock = new RwLock();
    const order: string[] = [];
    const r0 = await lock.acquireRead();
    const w = lock.acquireWrite().then((rel) => (order.push('w'), rel));
    const r = lock.acquireRead().then((rel) => (order.push('r'), rel));
    await tick();
    assert.deepEqual(order, [], 'the late reader does not overtake the writer');
    r0();
    (await w)();
    (await r)();
    assert.deepEqual(order, ['w', 'r']);
  });

  it('runs withWrite sections one at a time in call order', async () => {
    const lock = new RwLock();
    const log: string[] = [];
    await Promise.all(
      [0, 1, 2, 3].map((i) =>
        lock.withWrite(async () => {
          log.push(`start${i}`);
          await tick();
          log.push(`end${i}`);
        }),
      ),
    );
    assert.deepEqual(log, ['start0', 'end0', 'start1', 'end1', 'start2', 'end2', 'start3', 'end3']);
  });

  it('rejects an acquire that times out with a labelled message, and stays usable', async () => {
    const lock = new RwLock('store');
    const release = await lock.acquireWrite();
    await assert.rejects(lock.acquireRead(20), (err: unknown) => {
      assert.ok(err instanceof LockTimeoutError);
      assert.equal(err.message, 'store lock not acquired within 20 ms');
      return true;
    });
    assert.equal(lock.state().waiting, 0, 'the timed-out waiter left the queue');
    release();
    (await lock.acquireRead(20))();
  });

  it('a timed-out writer at the head of the queue unblocks the readers behind it', async () => {
    const lock = new RwLock();
    const r0 = await lock.acquireRead();
    const w = lock.acquireWrite(20);
    let readerIn = false;
    const r = lock.acquireRead().then((rel) => ((readerIn = true), rel));
    await assert.rejects(w, LockTimeoutError);
    (await r)();
    assert.equal(readerIn, true);
    r0();
  });

  it('releases the lock when a section throws', async () => {
    const lock = new RwLock();
    await assert.rejects(
      lock.withWrite(() => Promise.reject(new Error('boom'))),
      /boom/,
    );
    assert.deepEqual(lock.state(), { readers: 0, writer: false, waiting: 0 });
  });
});
