/**
 * Time as a dependency of the sync adapters: the debounce, the echo filter, the publisher's
 * retry and the republish timer take a `SyncClock`, so unit tests drive them with a fake clock
 * instead of sleeping (architecture guide, point 7).
 */

/** An opaque timer handle. */
export type TimerHandle = unknown;

/** Wall clock and one-shot timers. */
export interface SyncClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds. The timer must not keep the process alive. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  /** Cancels a timer of `setTimeout`; a no-op for a fired or cancelled timer. */
  clearTimeout(handle: TimerHandle): void;
}

/** The real clock: `Date.now` and unref'ed Node timers. */
export const realClock: SyncClock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Resolves after `ms` on `clock`, or at once when `signal` is (or becomes) aborted. */
export function sleep(clock: SyncClock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clock.clearTimeout(handle);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const handle = clock.setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
