/**
 * The per-tenant token bucket, driven by a fake clock (no timing assertions: time moves only
 * when the test moves it).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TokenBucket, bucketCapacity } from '../../../src/service/rate-limit.js';

/** A hand-driven monotonic clock in ms. */
function fakeClock(start = 1000): { now: () => number; advance: (ms: number) => void; set: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms), set: (ms) => (t = ms) };
}

test('a new bucket is full: capacity requests pass at once, the next one is refused', () => {
  const clock = fakeClock();
  const bucket = new TokenBucket(2, 5, clock.now);
  for (let i = 0; i < 5; i++) assert.equal(bucket.take(1), true, `request ${i + 1}`);
  assert.equal(bucket.take(1), false);
  assert.equal(bucket.take(1), false);
});

test('tokens refill at the rate, continuously, and never beyond the capacity', () => {
  const clock = fakeClock();
  const bucket = new TokenBucket(2, 3, clock.now); // 2 tokens per second
  for (let i = 0; i < 3; i++) bucket.take(1);
  assert.equal(bucket.take(1), false);
  clock.advance(499);
  assert.equal(bucket.take(1), false, 'just under one token after 499 ms');
  clock.advance(1);
  assert.equal(bucket.take(1), true, 'one token after 500 ms');
  assert.equal(bucket.take(1), false);
  clock.advance(60_000);
  assert.equal(bucket.available(), 3, 'capped at the capacity after a long pause');
  for (let i = 0; i < 3; i++) assert.equal(bucket.take(1), true);
  assert.equal(bucket.take(1), false);
});

test('a request costs several tokens and is all or nothing', () => {
  const clock = fakeClock();
  const bucket = new TokenBucket(1, 10, clock.now);
  assert.equal(bucket.take(7), true);
  assert.equal(bucket.take(4), false, 'only 3 left: nothing is taken');
  assert.equal(bucket.available(), 3);
  assert.equal(bucket.take(3), true);
  assert.equal(bucket.take(11), false);
  clock.advance(1_000_000);
  assert.equal(bucket.take(11), false, 'more than the capacity never passes');
});

test('fractional rates work (one request every two seconds)', () => {
  const clock = fakeClock();
  const bucket = new TokenBucket(0.5, 1, clock.now);
  assert.equal(bucket.take(1), true);
  clock.advance(1999);
  assert.equal(bucket.take(1), false);
  clock.advance(1);
  assert.equal(bucket.take(1), true);
});

test('retryAfterMs says when the tokens will be there; Infinity beyond the capacity', () => {
  const clock = fakeClock();
  const bucket = new TokenBucket(4, 2, clock.now);
  assert.equal(bucket.retryAfterMs(1), 0);
  bucket.take(2);
  assert.equal(bucket.retryAfterMs(1), 250);
  assert.equal(bucket.retryAfterMs(2), 500);
  assert.equal(bucket.retryAfterMs(3), Infinity);
});

test('a clock that goes backwards adds no tokens', () => {
  const clock = fakeClock(10_000);
  const bucket = new TokenBucket(1, 1, clock.now);
  bucket.take(1);
  clock.set(5_000);
  assert.equal(bucket.take(1), false);
  clock.set(10_999);
  assert.equal(bucket.take(1), false, 'time is counted from the latest reading, never twice');
  clock.set(11_000);
  assert.equal(bucket.take(1), true);
});

test('take reads the injected clock once per call and keeps state in two numbers', () => {
  let reads = 0;
  const bucket = new TokenBucket(1, 1, () => {
    reads++;
    return 0;
  });
  reads = 0;
  bucket.take(1);
  bucket.take(1);
  assert.equal(reads, 2);
  assert.deepEqual(Object.keys(bucket).sort(), ['capacity', 'clock', 'last', 'ratePerSec', 'tokens']);
});

test('invalid settings are refused; the capacity defaults to qps_limit, at least 1', () => {
  const clock = fakeClock();
  assert.throws(() => new TokenBucket(0, 1, clock.now), RangeError);
  assert.throws(() => new TokenBucket(1, 0.5, clock.now), RangeError);
  assert.equal(bucketCapacity(10, null), 10);
  assert.equal(bucketCapacity(0.2, null), 1);
  assert.equal(bucketCapacity(10, 3), 3);
});
