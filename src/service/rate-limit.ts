/**
 * The per-tenant rate limiter: a token bucket refilled continuously at `ratePerSec` tokens per
 * second up to `capacity`. A request costs tokens (1 for an execution, eval or filter; one per
 * input for a batch) and is admitted when that many tokens are there.
 *
 * NOTE: on the execution hot path: `take` is O(1) and allocates nothing (two numbers updated,
 * one clock read). The clock is injected (monotonic milliseconds, like `performance.now`), so
 * tests drive it by hand.
 */

/** Monotonic clock in (fractional) milliseconds. */
export type MonotonicClock = () => number;

/** A token bucket (see the module comment). */
export class TokenBucket {
  private tokens: number;
  private last: number;

  /**
   * A full bucket. `ratePerSec` > 0; `capacity` >= 1 (the largest request that can ever pass).
   */
  constructor(
    readonly ratePerSec: number,
    readonly capacity: number,
    private readonly clock: MonotonicClock,
  ) {
    if (!(ratePerSec > 0) || !Number.isFinite(ratePerSec)) throw new RangeError(`rate must be a positive number, got ${ratePerSec}`);
    if (!(capacity >= 1) || !Number.isFinite(capacity)) throw new RangeError(`capacity must be at least 1, got ${capacity}`);
    this.tokens = capacity;
    this.last = clock();
  }

  /** Takes `cost` tokens when they are there (true); otherwise takes nothing (false). */
  take(cost: number): boolean {
    this.refill();
    if (this.tokens >= cost) {
      this.tokens -= cost;
      return true;
    }
    return false;
  }

  /** Tokens available now (refilled). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /**
   * Milliseconds until `cost` tokens will be there (0 when they are now); Infinity when `cost`
   * exceeds the capacity (such a request never passes). For error answers, not the hot path.
   */
  retryAfterMs(cost: number): number {
    if (cost > this.capacity) return Infinity;
    const missing = cost - this.available();
    return missing <= 0 ? 0 : Math.ceil((missing * 1000) / this.ratePerSec);
  }

  private refill(): void {
    const now = this.clock();
    const elapsed = now - this.last;
    // NOTE: a clock that goes backwards (it should not: monotonic) adds nothing.
    if (elapsed > 0) {
      const tokens = this.tokens + (elapsed * this.ratePerSec) / 1000;
      this.tokens = tokens < this.capacity ? tokens : this.capacity;
      this.last = now;
    }
  }
}

/** The capacity of a tenant's bucket: `burst`, or `qps_limit` (at least 1) when burst is null. */
export function bucketCapacity(qpsLimit: number, burst: number | null): number {
  return burst ?? Math.max(1, qpsLimit);
}
