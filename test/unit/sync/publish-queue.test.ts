import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PublishQueue, type OutgoingMessage } from '../../../src/sync/publish-queue.js';
import { FakeClock, settle } from './fake-clock.js';

const msg = (i: number): OutgoingMessage => ({ subject: `s.${i}`, data: new Uint8Array([i]), msgId: `m${i}` });

describe('PublishQueue (writer outbox, fake clock)', () => {
  it('buffers while disconnected and publishes in order on reconnect', async () => {
    const clock = new FakeClock();
    const sent: string[] = [];
    const q = new PublishQueue({ clock, send: async (m) => void sent.push(m.msgId) });
    for (let i = 1; i <= 5; i++) q.enqueue(msg(i));
    await settle();
    assert.deepEqual(sent, [], 'nothing is sent while the broker is down');
    assert.equal(q.length, 5);
    q.setConnected(true);
    await q.idle();
    assert.deepEqual(sent, ['m1', 'm2', 'm3', 'm4', 'm5']);
    await q.close();
  });

  it('retries a failed message with backoff before anything behind it, keeping its message id', async () => {
    const clock = new FakeClock();
    const attempts: string[] = [];
    let failures = 3;
    const q = new PublishQueue({
      clock,
      retryMinMs: 100,
      retryMaxMs: 400,
      send: async (m) => {
        attempts.push(m.msgId);
        if (m.msgId === 'm2' && failures-- > 0) throw new Error('timeout');
      },
    });
    q.setConnected(true);
    q.enqueue(msg(1));
    q.enqueue(msg(2));
    q.enqueue(msg(3));
    await settle();
    assert.deepEqual(attempts, ['m1', 'm2']);
    await clock.advance(99);
    assert.deepEqual(attempts, ['m1', 'm2'], 'waits 100 ms before the first retry');
    await clock.advance(1);
    assert.deepEqual(attempts, ['m1', 'm2', 'm2']);
    await clock.advance(200);
    assert.deepEqual(attempts, ['m1', 'm2', 'm2', 'm2'], 'then 200 ms');
    await clock.advance(400);
    assert.deepEqual(attempts, ['m1', 'm2', 'm2', 'm2', 'm2', 'm3'], 'then 400 ms (the cap); m3 only after m2');
    assert.equal(q.length, 0);
    await q.close();
  });

  it('does not try while the connection is down, and resumes when it is back', async () => {
    const clock = new FakeClock();
    const sent: string[] = [];
    const q = new PublishQueue({ clock, send: async (m) => void sent.push(m.msgId) });
    q.setConnected(true);
    q.enqueue(msg(1));
    await q.idle();
    q.setConnected(false);
    q.enqueue(msg(2));
    await clock.advance(10_000);
    assert.deepEqual(sent, ['m1']);
    q.setConnected(true);
    await q.idle();
    assert.deepEqual(sent, ['m1', 'm2']);
    await q.close();
  });

  it('drops the oldest messages past the bound and reports it', async () => {
    const clock = new FakeClock();
    const sent: string[] = [];
    let dropped = 0;
    const q = new PublishQueue({ clock, maxBuffered: 3, send: async (m) => void sent.push(m.msgId), onDropped: (n) => (dropped += n) });
    for (let i = 1; i <= 5; i++) q.enqueue(msg(i));
    assert.equal(q.length, 3);
    assert.equal(dropped, 2);
    q.setConnected(true);
    await q.idle();
    assert.deepEqual(sent, ['m3', 'm4', 'm5']);
    await q.close();
  });
});
