/**
 * Failed authentication per address (EXTENSIONS.md 1 "Errors", "Audit"): more than
 * `maxFailures` failed attempts from one address within a minute blocks that address for the
 * rest of the minute (429), and at most one `auth_failed` audit line is written per address
 * per second. Fixed windows: a window opens at an address's first failure.
 */

/** The state of one address. */
interface Window {
  /** Epoch ms when the window opened. */
  start: number;
  failures: number;
  /** Epoch ms of the last `auth_failed` line written for this address. */
  lastAudit: number;
}

/** Failed attempts allowed per address per window. */
export const MAX_FAILURES = 20;

/** Window length in milliseconds. */
export const WINDOW_MS = 60_000;

/** Addresses tracked at most; beyond it, closed windows are dropped, then the oldest. */
const MAX_ADDRESSES = 100_000;

/** Counts failures per address. */
export class FailureLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly maxFailures = MAX_FAILURES,
    private readonly windowMs = WINDOW_MS,
  ) {}

  /** Epoch ms when the latest block ends; 0 while no address is blocked. */
  private until = 0;

  /** False while no address is blocked: then `blockedFor` is 0 for every address (no lookup needed). */
  get active(): boolean {
    return this.until > 0;
  }

  /** Milliseconds `address` stays blocked, or 0 when it may try. */
  blockedFor(address: string, now: number): number {
    if (now >= this.until) {
      this.until = 0;
      return 0;
    }
    const w = this.windows.get(address);
    if (w === undefined || w.failures <= this.maxFailures) return 0;
    const left = w.start + this.windowMs - now;
    return left > 0 ? left : 0;
  }

  /**
   * Records one failure; returns true when an audit line should be written for it (the first
   * failure of this address in this second).
   */
  fail(address: string, now: number, counts: boolean): boolean {
    let w = this.windows.get(address);
    if (w === undefined || now - w.start >= this.windowMs) {
      if (w === undefined && this.windows.size >= MAX_ADDRESSES) this.prune(now);
      w = { start: now, failures: 0, lastAudit: w?.lastAudit ?? Number.NEGATIVE_INFINITY };
      this.windows.set(address, w);
    }
    if (counts && ++w.failures > this.maxFailures) this.until = Math.max(this.until, w.start + this.windowMs);
    if (now - w.lastAudit < 1000) return false;
    w.lastAudit = now;
    return true;
  }

  /** Number of addresses tracked (tests). */
  get size(): number {
    return this.windows.size;
  }

  private prune(now: number): void {
    for (const [address, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(address);
    // NOTE: still full (a flood from many addresses): drop the oldest half (Map keeps insertion order).
    if (this.windows.size >= MAX_ADDRESSES) {
      let n = this.windows.size / 2;
      for (const address of this.windows.keys()) {
        if (n-- <= 0) break;
        this.windows.delete(address);
      }
    }
  }
}
