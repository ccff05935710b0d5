/**
 * Debounce batching of the file watcher (SPEC.md 8: "a 200 ms debounce that batches rapid
 * changes"). Every `add` restarts a quiet-period timer; when no key arrived for `debounceMs`
 * the collected keys are flushed as one batch. `maxWaitMs` bounds the delay under a change
 * stream that never pauses. Flushes never overlap: keys that arrive while a flush runs form
 * the next batch.
 */
import type { SyncClock, TimerHandle } from './clock.js';

/** Options of `Batcher`. */
export interface BatcherOptions<K> {
  readonly clock: SyncClock;
  /** Quiet period that ends a batch (200 ms for the watcher). */
  readonly debounceMs: number;
  /** Longest time from the first key of a batch to its flush. Default 10 × `debounceMs`. */
  readonly maxWaitMs?: number;
  /** Handles one batch; a rejection is reported to `onError` and does not stop batching. */
  readonly flush: (batch: ReadonlySet<K>) => Promise<void> | void;
  readonly onError?: (err: unknown) => void;
}

/** Collects keys and flushes them in debounced batches (see the module comment). */
export class Batcher<K> {
  private pending = new Set<K>();
  private firstAt = 0;
  private lastAt = 0;
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private closed = false;
  private readonly maxWaitMs: number;

  constructor(private readonly options: BatcherOptions<K>) {
    this.maxWaitMs = options.maxWaitMs ?? options.debounceMs * 10;
  }

  /** Number of keys waiting for the next flush. */
  get size(): number {
    return this.pending.size;
  }

  /** Adds a key to the current batch and restarts the quiet period. */
  add(key: K): void {
    if (this.closed) return;
    const now = this.options.clock.now();
    if (this.pending.size === 0) this.firstAt = now;
    this.lastAt = now;
    this.pending.add(key);
    this.schedule();
  }

  /** Flushes what is pending now (no wait); resolves when that flush (and any running one) ended. */
  async flushNow(): Promise<void> {
    this.cancelTimer();
    await this.run();
  }

  /** Stops batching; pending keys are dropped. Resolves after a running flush ended. */
  async close(): Promise<void> {
    this.closed = true;
    this.cancelTimer();
    this.pending.clear();
    await this.running;
  }

  private schedule(): void {
    this.cancelTimer();
    if (this.running) return; // the running flush reschedules when it ends
    const now = this.options.clock.now();
    const due = Math.min(this.lastAt + this.options.debounceMs, this.firstAt + this.maxWaitMs);
    this.timer = this.options.clock.setTimeout(
      () => {
        this.timer = undefined;
        void this.run();
      },
      Math.max(0, due - now),
    );
  }

  private cancelTimer(): void {
    if (this.timer !== undefined) this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async run(): Promise<void> {
    while (this.running) await this.running;
    if (this.pending.size === 0 || this.closed) return;
    const batch = this.pending;
    this.pending = new Set();
    this.running = (async () => {
      try {
        await this.options.flush(batch);
      } catch (err) {
        this.options.onError?.(err);
      }
    })();
    await this.running;
    this.running = undefined;
    // Keys that arrived during the flush form the next batch, timed from their own arrival.
    if (this.pending.size > 0 && !this.closed) this.schedule();
  }
}
