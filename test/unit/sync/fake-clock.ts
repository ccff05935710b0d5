/**
 * A manual clock for the sync unit tests: time moves only when the test calls `advance`, and
 * timers due by then fire in time order. Implements `SyncClock`.
 */
import type { SyncClock, TimerHandle } from '../../../src/sync/clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
}

/** A fake `SyncClock`. */
export class FakeClock implements SyncClock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 1_700_000_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer = { id: ++this.seq, at: this.t + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer.id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Number of timers not yet fired. */
  get pending(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order; lets promise callbacks run
   * between timers so async work started by a timer can schedule the next one.
   */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await settle();
      const next = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!next) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.t = next.at;
      next.fn();
    }
    this.t = end;
    await settle();
  }
}

/** Lets queued promise callbacks (and a few rounds of their follow-ups) run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
  await new Promise<void>((resolve) => setImmediate(resolve));
}
