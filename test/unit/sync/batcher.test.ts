import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Batcher } from '../../../src/sync/batcher.js';
import { FakeClock, settle } from './fake-clock.js';

function setup(options: { debounceMs?: number; maxWaitMs?: number; slowFlushMs?: number } = {}) {
  const clock = new FakeClock();
  const batches: string[][] = [];
  const batcher = new Batcher<string>({
    clock,
    debounceMs: options.debounceMs ?? 200,
    ...(options.maxWaitMs !== undefined ? { maxWaitMs: options.maxWaitMs } : {}),
    flush: async (batch) => {
      batches.push([...batch].sort());
      if (options.slowFlushMs) await new Promise<void>((resolve) => clock.setTimeout(resolve, options.slowFlushMs!));
    },
  });
  return { clock, batches, batcher };
}

describe('Batcher (watcher debounce, fake clock)', () => {
  it('flushes a burst as one batch once 200 ms pass without a new key', async () => {
    const { clock, batches, batcher } = setup();
    for (let i = 0; i < 50; i++) {
      batcher.add(`r${i}`);
      await clock.advance(2); // 50 changes over 100 ms
    }
    // The last key came 2 ms ago.
    await clock.advance(197);
    assert.equal(batches.length, 0, 'nothing before the quiet period ended');
    await clock.advance(1);
    assert.equal(batches.length, 1);
    assert.equal(batches[0]!.length, 50);
  });

  it('merges repeated changes of one key', async () => {
    const { clock, batches, batcher } = setup();
    batcher.add('a');
    batcher.add('a');
    await clock.advance(100);
    batcher.add('a');
    await clock.advance(200);
    assert.deepEqual(batches, [['a']]);
  });

  it('restarts the quiet period on every key, so two bursts apart become two batches', async () => {
    const { clock, batches, batcher } = setup();
    batcher.add('a');
    await clock.advance(150);
    batcher.add('b');
    await clock.advance(150);
    assert.equal(batches.length, 0, 'b restarted the 200 ms');
    await clock.advance(50);
    assert.deepEqual(batches, [['a', 'b']]);
    batcher.add('c');
    await clock.advance(200);
    assert.deepEqual(batches, [['a', 'b'], ['c']]);
  });

  it('flushes after maxWait under changes that never pause', async () => {
    const { clock, batches, batcher } = setup({ maxWaitMs: 1000 });
    for (let t = 0; t < 1500; t += 100) {
      batcher.add(`k${t}`);
      await clock.advance(100);
    }
    assert.ok(batches.length >= 1, 'a batch was flushed although keys kept coming');
    assert.ok(batches[0]!.length <= 11);
  });

  it('never overlaps flushes: keys arriving during a flush form the next batch', async () => {
    const { clock, batches, batcher } = setup({ slowFlushMs: 500 });
    batcher.add('a');
    await clock.advance(200);
    assert.equal(batches.length, 1);
    batcher.add('b'); // during the 500 ms flush
    await clock.advance(300);
    assert.equal(batches.length, 1, 'still flushing a');
    await clock.advance(200);
    await clock.advance(200);
    assert.deepEqual(batches, [['a'], ['b']]);
  });

  it('flushNow flushes at once; close drops what is pending', async () => {
    const { clock, batches, batcher } = setup();
    batcher.add('x');
    await batcher.flushNow();
    assert.deepEqual(batches, [['x']]);
    batcher.add('y');
    await batcher.close();
    await clock.advance(1000);
    await settle();
    assert.deepEqual(batches, [['x']]);
    batcher.add('z');
    await clock.advance(1000);
    assert.deepEqual(batches, [['x']]);
  });

  it('keeps batching after a failing flush', async () => {
    const clock = new FakeClock();
    const errors: unknown[] = [];
    let calls = 0;
    const batcher = new Batcher<string>({
      clock,
      debounceMs: 200,
      flush: () => {
        calls++;
        if (calls === 1) throw new Error('disk on fire');
      },
      onError: (err) => errors.push(err),
    });
    batcher.add('a');
    await clock.advance(200);
    batcher.add('b');
    await clock.advance(200);
    assert.equal(calls, 2);
    assert.equal(errors.length, 1);
  });
});
