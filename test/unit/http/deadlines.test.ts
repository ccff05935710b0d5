/**
 * The shared body-read deadline queue (src/transport/http/deadlines.ts): due deadlines fire in
 * order, cancelled ones never fire, the timer re-arms for later reads, and finished reads do
 * not pile up behind a slow one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeadlineQueue } from '../../../src/transport/http/deadlines.js';

const until = async (cond: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), 'condition reached');
};

test('pending deadlines fire in order; cancelled ones never fire', async () => {
  const q = new DeadlineQueue(20);
  const fired: string[] = [];
  const a = q.add(() => fired.push('a'));
  q.add(() => fired.push('b'));
  const c = q.add(() => fired.push('c'));
  q.add(() => fired.push('d'));
  a.cancel();
  c.cancel();
  await until(() => fired.length === 2);
  assert.deepEqual(fired, ['b', 'd']);
  assert.equal(q.pending, 0);
  // The queue is empty and unarmed; a new read arms it again.
  q.add(() => fired.push('e'));
  await until(() => fired.length === 3);
  assert.deepEqual(fired, ['b', 'd', 'e']);
});

test('a deadline added while the timer waits for an earlier one still fires', async () => {
  const q = new DeadlineQueue(15);
  const fired: number[] = [];
  const first = q.add(() => fired.push(1));
  await new Promise((r) => setTimeout(r, 5));
  q.add(() => fired.push(2));
  first.cancel();
  await until(() => fired.length === 1);
  assert.deepEqual(fired, [2]);
});

test('finished reads leave the queue at once, even behind a slow pending one', async () => {
  const q = new DeadlineQueue(60_000);
  let slowFired = false;
  const slow = q.add(() => (slowFired = true));
  for (let i = 0; i < 20_000; i++) q.add(() => assert.fail('cancelled deadline fired')).cancel();
  assert.equal(q.pending, 1);
  const list = q as unknown as { head: unknown; tail: unknown };
  assert.equal(list.head, list.tail, 'only the slow read is linked');
  slow.cancel();
  slow.cancel();
  assert.equal(list.head, null);
  assert.equal(q.pending, 0);
  assert.equal(slowFired, false);
});
